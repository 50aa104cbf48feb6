// Writes src/store/sql/analytics.sql, the analytics views, from their declarations
// (src/schema/warehouse/analytics.ts, src/store/schema/analytics-sql.ts): `npm run db:analytics`
// after a change of a view. `migrate()` applies the file again when its text changed
// (src/store/schema/sql-files.ts); a test checks that it holds what the declarations make now.
import { writeFileSync } from 'node:fs';
import { analyticsSqlFile } from '../src/store/schema/analytics-sql.ts';
import { SQL_FOLDER } from '../src/store/schema/sql-files.ts';

const file = `${SQL_FOLDER}analytics.sql`;
writeFileSync(file, analyticsSqlFile());
console.log(`wrote ${file}`);
