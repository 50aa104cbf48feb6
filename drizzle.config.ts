import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes migrations into drizzle/ from the schema files.
// Migrations are generated, never hand-written (an older timestamp is skipped silently).
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./schema/warehouse/sync.ts', './schema/warehouse/app.ts', './schema/warehouse/gateway.ts', './schema/warehouse/history.ts'],
  out: './drizzle',
  casing: undefined,
});
