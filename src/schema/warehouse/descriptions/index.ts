// What every schema, table, column, view and function of the warehouse means, written once.
// From here come the `COMMENT ON` statements `migrate()` applies (src/store/schema/comments.ts),
// which psql's `\d+` and BI tools show, and the per-table reference of docs/warehouse.md
// (`npm run docs:warehouse`). A test fails when a declared column has no description here.
//
// Written in Markdown with `code` spans only (the comments drop the backticks). A table's
// history (`T_history`), its as-of function (`T_as_of`) and the daily archives are described
// by the rules below from their base table: describe `T` and they follow.
//
// Adding to it:
// - a table: an entry in its schema's file (`tables`), a summary and a line per column;
// - a view: an entry in `views` (analytics.ts), its columns as the view returns them, `key`
//   for the heading and `hasAsOf` when it has an as-of form (described by rule);
// - a function: an entry in `functions`, keyed by its signature with every argument named,
//   `name(at timestamptz)`;
// - a schema: a file exporting a `SchemaDescription`, added to SCHEMAS (`ownBlock` when its
//   section of docs/warehouse.md is written by hand and takes the reference in a block of its own).
// Then `npm run docs:warehouse`. Everything described must exist after the drizzle migrations
// (the comments are applied right after them): tests fail on an object of a tesync schema
// without a comment, on a description of an object that does not exist, and on a reference
// in docs/warehouse.md that differs from what this makes.
import { analytics } from './analytics.ts';
import { app } from './app.ts';
import { gateway } from './gateway.ts';
import { sync } from './sync.ts';
import type { ColumnDescriptions, SchemaDescription } from './types.ts';

export { asOfFrom, EVERY_ROW, SHARED_COLUMNS } from './shared.ts';
export type { ColumnDescriptions, RelationDescription, SchemaDescription, ViewDescription } from './types.ts';

/** Every tesync schema, in the reference's order. */
export const SCHEMAS: readonly SchemaDescription[] = [sync, app, gateway, analytics];

// The rules: what is said of the objects derived from a described table.

/** Columns every `T_history` adds to `T`'s. */
export const HISTORY_COLUMNS: ColumnDescriptions = {
  known_from: 'when tesync stored the response that carried this version (known time: the warehouse server\'s clock, which every writer shares; never upstream\'s `asOf`, never a worker\'s own clock)',
  known_to: 'when a response replaced this version, or a response that lists the whole set left its row out (the same clock); never before `known_from`',
  closing_raw_response_id: 'the archived body (`sync.raw_responses.id`) that replaced this version or no longer carried its row; null where none was archived',
};

export const historyTable = (base: string, summary: string): string =>
  `Earlier versions of \`${base}\` (${summary}). The same columns, plus \`known_from\` and \`known_to\`: each row is a version ` +
  `held from \`known_from\` until \`known_to\`; versions of one key never overlap (an exclusion constraint, \`${base.split('.').pop()}_history_no_overlap\`, refuses a write that would). Written by a trigger on \`${base}\` when a row ` +
  `changes or is removed, and by nothing else; \`${base}_as_of(at)\` reads them together with the current rows.`;

export const asOfFunction = (base: string, more?: string): string =>
  `\`${base}\`'s rows as tesync knew them at the instant \`at\` (known time, tesync's clock): the current rows known since then ` +
  `and the earlier versions (\`${base}_history\`) that held then. Returns nothing before the first sync.${more ? ` ${more}` : ''}`;

export const changesFunction = (base: string, dataTime?: string): string =>
  `Every change of \`${base}\` known in (\`from_at\`, \`to_at\`] (known time, tesync's clock), one row each, in the order they became known: ` +
  `what \`sync.changes('${base}', from_at, to_at)\` returns (change type, the key as jsonb, known time, run, body, the row before and after as jsonb, the columns changed). ` +
  (dataTime
    ? `Its data time is \`${dataTime}\`: an update or delete of a row whose \`${dataTime}\` is before \`from_at\` is a revision (\`revision\`).`
    : 'It has no data time of its own (a row is about the instant its response describes): none of its changes is a revision.');

export const asOfView = (view: string, more?: string): string =>
  `\`${view}\` as tesync knew it at the instant \`at\` (known time, tesync's clock): the same query over the as-of functions ` +
  `(\`T_as_of(at)\`) of the tables it reads, so no later revision reaches it. Returns nothing before the first sync.${more ? ` ${more}` : ''}`;

export const dailyArchive = (source: string, universe: string): string =>
  `The daily archive of \`${source}\`, with the same columns: for every UTC day from the first sync on, a row for every token listed ` +
  `(\`${universe}\`) at the end of the day, holding its \`${source}\` row as tesync knew it then. Days on which no sync ran or ` +
  `nothing changed have their rows too: each run, when it finishes, fills the days since the last one archived from the versions ` +
  `(\`${source}_as_of\`), through its own day (that day again at the next run, until it has ended). A token delisted during a day ` +
  `has no row that day. Rows archived by a release before this one (which archived only the days a sync ran) are kept.`;

export const ARCHIVE_COLUMNS: ColumnDescriptions = {
  snapshot_date: 'the UTC day; the row holds what tesync knew at its end (for today: as known so far)',
};
