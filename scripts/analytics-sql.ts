// Prints the SQL of the analytics views as migrate() applies it (src/store/schema/analytics-sql.ts,
// from the declarations in src/schema/warehouse/analytics.ts): `npm run db:analytics`, to read
// or review what a change of a view makes.
import { analyticsSqlFile } from '../src/store/schema/analytics-sql.ts';

process.stdout.write(analyticsSqlFile());
