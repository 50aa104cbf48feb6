import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes migrations into drizzle/ from the schema files.
// Migrations are generated, never hand-written (an older timestamp is skipped silently).
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/schema/warehouse/sync.ts', './src/schema/warehouse/app.ts', './src/schema/warehouse/gateway.ts', './src/schema/warehouse/history.ts'],
  out: './drizzle',
  casing: undefined,
});
