// Writes generated SQL into a custom migration that drizzle-kit prepared:
//   npx drizzle-kit generate --custom --name <name> && npm run db:history -- drizzle/<file>.sql
//   npx drizzle-kit generate --custom --name <name> && npm run db:analytics -- drizzle/<file>.sql
// db:history: the point-in-time SQL (triggers and as-of functions, src/store/history-sql.ts).
// Run it whenever a versioned table's columns change (after `npm run db:generate`), so that
// its as-of function returns the new row. db:analytics: the analytics views and their as-of
// forms (src/store/analytics-sql.ts), whenever their declarations change. Tests check the
// latest such migrations hold what the generators make now.
import { writeFileSync } from 'node:fs';
import { analyticsMigration } from '../src/store/analytics-sql.ts';
import { historyMigration } from '../src/store/history-sql.ts';

const [kind, file] = process.argv.slice(2);
const generators: Record<string, () => string> = { history: historyMigration, analytics: analyticsMigration };
const generate = kind ? generators[kind] : undefined;
if (!generate || !file || !file.endsWith('.sql')) {
  console.error('usage: tsx scripts/sql-migration.ts <history|analytics> drizzle/<custom migration>.sql');
  process.exit(2);
}
writeFileSync(file, generate());
console.log(`wrote ${file}`);
