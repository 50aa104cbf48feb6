import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes migrations into drizzle/ from the schema files.
// Migrations are generated, never hand-written (an older timestamp is skipped silently).
// The history tables are not declared here: the database makes them from their tables
// (src/store/sql/history.sql).
export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/schema/warehouse/sync.ts', './src/schema/warehouse/notifications.ts', './src/schema/warehouse/app.ts', './src/schema/warehouse/gateway.ts'],
  out: './drizzle',
  casing: undefined,
});
