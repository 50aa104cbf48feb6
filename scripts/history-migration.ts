// Writes the point-in-time SQL (triggers and as-of functions, src/warehouse/history-sql.ts)
// into a custom migration that drizzle-kit prepared:
//   npx drizzle-kit generate --custom --name <name> && npm run db:history -- drizzle/<file>.sql
// Run it whenever a versioned table's columns change (after `npm run db:generate`), so that
// its as-of function returns the new row; test/src/warehouse/history.test.ts checks it was.
import { writeFileSync } from 'node:fs';
import { historyMigration } from '../src/warehouse/history-sql.ts';

const file = process.argv[2];
if (!file || !file.endsWith('.sql')) {
  console.error('usage: tsx scripts/history-migration.ts drizzle/<custom migration>.sql');
  process.exit(2);
}
writeFileSync(file, historyMigration());
console.log(`wrote ${file}`);
