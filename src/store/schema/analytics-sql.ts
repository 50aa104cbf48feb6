// The SQL of the `analytics` schema, generated from its declarations (src/schema/warehouse/
// analytics.ts) whenever migrate() applies it, as the repeatable migration `analytics.sql`
// (src/store/schema/sql-files.ts); `npm run db:analytics` prints it.
// Each view reads the tables its body names; where they are all versioned,
// `<view>_as_of(at)` is the same body over `T_as_of(at)`, returning the view's row.
import { quoteIdentifier as quote } from '../quote.ts';
import { ANALYTICS_SCHEMA, ANALYTICS_VIEWS, hasAsOf, TABLE_PLACEHOLDER, type AnalyticsView } from '../../schema/warehouse/analytics.ts';

const HEADER = `-- The analytics views and their as-of forms: generated from src/schema/warehouse/analytics.ts
-- by \`npm run db:analytics\`; edit the declarations, not this file.`;

/** The view's body over the tables, or over their as-of functions at `"at"`. Pure. */
export function bodyOf(view: AnalyticsView, asOf: boolean): string {
  return view.body.replace(TABLE_PLACEHOLDER, (_m, schema: string, table: string) => (asOf ? `${quote(schema)}.${quote(`${table}_as_of`)}("at")` : `${quote(schema)}.${quote(table)}`));
}

/** The statements, in order; each can run again. */
export function analyticsStatements(views: readonly AnalyticsView[] = ANALYTICS_VIEWS): string[] {
  const s = quote(ANALYTICS_SCHEMA);
  const out = [`CREATE SCHEMA IF NOT EXISTS ${s};`];
  for (const v of views) {
    out.push(`CREATE OR REPLACE VIEW ${s}.${quote(v.name)} AS\n${bodyOf(v, false)};`);
    if (hasAsOf(v)) {
      out.push(`CREATE OR REPLACE FUNCTION ${s}.${quote(`${v.name}_as_of`)}("at" timestamptz) RETURNS SETOF ${s}.${quote(v.name)} LANGUAGE sql STABLE PARALLEL SAFE AS $body$\n${bodyOf(v, true)}\n$body$;`);
    }
  }
  return out;
}

/**
 * The text applied as `analytics.sql`. Its fingerprint is what a warehouse records of it: the
 * same declarations make the same text, and a warehouse in step stays so.
 */
export function analyticsSqlFile(): string {
  return `${HEADER}\n\n${analyticsStatements().join('\n\n')}\n`;
}
