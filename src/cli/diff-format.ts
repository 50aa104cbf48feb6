// Pure: `tesync diff` for a person, within 80 columns: what was compared, a summary per table
// (zeros included: nothing changed is said, not left silent), then each table's changes, a
// line each (an update's columns below it), cut with `…` where longer. Values are shown as the warehouse holds them (read
// from JSON text losslessly: a decimal never passes through a JS number).
import { isLosslessNumber, parseJson } from '../lib/json.ts';
import { displayWidth, padEndToWidth, padStartToWidth, truncateToWidth } from '../lib/display-width.ts';
import type { ChangeCounts, ChangedTable, ListedChange, ResolvedBound } from '../store/read/changes.ts';

export const DIFF_COLUMNS = 80;

/** Changes listed per table in text; `--format jsonl` lists them all. */
export const TEXT_CHANGES_PER_TABLE = 20;

const count = (n: number) => n.toLocaleString('en-US');
const shortRun = (id: string) => id.slice(0, 8);

/** Pure: what a diff compared: its kind and its two bounds. */
export function diffHeader(o: { net: boolean; revisions: boolean }, from: ResolvedBound, to: ResolvedBound): string[] {
  const what = o.revisions ? (o.net ? 'Net revisions' : 'Revisions') : o.net ? 'Net changes' : 'Changes';
  const bound = (b: ResolvedBound) => `${b.at}${b.run ? ` (end of run ${shortRun(b.run)})` : ''}`;
  return [`${what} known after ${bound(from)}`, `${' '.repeat(what.length)} and by ${bound(to)}`];
}

const HEAD = ['inserts', 'updates', 'deletes', 'revisions'] as const;
const NUMBER_WIDTH = 10;

/** Pure: one line per table and a total, within DIFF_COLUMNS. */
export function summaryLines(counts: readonly ChangeCounts[]): string[] {
  const nameWidth = Math.min(DIFF_COLUMNS - HEAD.length * NUMBER_WIDTH, Math.max(5, ...counts.map((c) => displayWidth(c.table))) + 2);
  const row = (name: string, cells: readonly string[]) =>
    `${padEndToWidth(truncateToWidth(name, nameWidth - 1), nameWidth)}${cells.map((c) => padStartToWidth(c, NUMBER_WIDTH)).join('')}`.trimEnd();
  const total = HEAD.map((h) => counts.reduce((n, c) => n + c[h], 0));
  return [
    row('table', HEAD),
    ...counts.map((c) => row(c.table, HEAD.map((h) => count(c[h])))),
    row(`all ${counts.length} table${counts.length === 1 ? '' : 's'}`, total.map(count)),
  ];
}

/** A value of a row for a person: text as it is, a number's digits, `null`, `{…}` for a JSON value. */
function shown(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return midnightAsDay(v).replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  if (isLosslessNumber(v)) return v.toString();
  if (typeof v === 'boolean') return String(v);
  return Array.isArray(v) ? '[…]' : '{…}';
}

/** A midnight (UTC), as a series' day: its date. */
const midnightAsDay = (v: string) => (/^\d{4}-\d\d-\d\d[T ]00:00:00(\+00(:00)?|Z)$/.test(v) ? v.slice(0, 10) : v);

const row = (json: string | null) => (json === null ? null : (parseJson(json) as Record<string, unknown>));

/** Columns shown with their values under an update; the rest are named on one line. */
export const VALUES_PER_CHANGE = 3;

const isScalar = (v: unknown) => v === null || v === undefined || typeof v !== 'object' || isLosslessNumber(v);

/**
 * Pure: a change for a person: a line with R where it is a revision, its type and its key's
 * values; under an update, each changed column with what it was and what it became (on two
 * lines where one would pass `columns`), then the other columns it changed, by name.
 */
export function changeLines(table: ChangedTable, c: ListedChange, columns = DIFF_COLUMNS): string[] {
  const key = row(c.key) ?? {};
  const [before, after] = [row(c.before), row(c.after)];
  const lines = [truncateToWidth(`${c.revision ? 'R' : ' '} ${c.type.padEnd(6)} ${table.key.map((k) => shown(key[k])).join(' ')}`, columns)];
  if (c.type !== 'update') return lines;
  const valued = c.changed.filter((col) => isScalar(before?.[col]) && isScalar(after?.[col])).slice(0, VALUES_PER_CHANGE);
  for (const col of valued) {
    const [was, now] = [shown(before?.[col]), shown(after?.[col])];
    const one = `    ${col} ${was} → ${now}`;
    if (displayWidth(one) <= columns) lines.push(one);
    else lines.push(truncateToWidth(`    ${col} ${was}`, columns), truncateToWidth(`    ${' '.repeat(displayWidth(col))} → ${now}`, columns));
  }
  const rest = c.changed.filter((col) => !valued.includes(col));
  if (rest.length > 0) lines.push(truncateToWidth(`    ${valued.length > 0 ? 'also ' : ''}${rest.join(', ')}`, columns));
  return lines;
}

/** Pure: a table's changes as listed, with a line for those left out. */
export function tableSection(table: ChangedTable, counts: ChangeCounts, listed: readonly ListedChange[]): string[] {
  const total = counts.inserts + counts.updates + counts.deletes;
  const lines = [`${table.name}: ${count(total)} change${total === 1 ? '' : 's'}`, ...listed.flatMap((c) => changeLines(table, c))];
  if (total > listed.length) lines.push(`  … ${count(total - listed.length)} more (--format jsonl lists every one)`);
  return lines;
}

/** Pure: the closing line. */
export function closingLine(counts: readonly ChangeCounts[], anyRevision: boolean): string {
  const total = counts.reduce((n, c) => n + c.inserts + c.updates + c.deletes, 0);
  if (total === 0) return 'Nothing changed.';
  return anyRevision ? 'R: a revision (an update or delete of a value whose data time is before --from)' : '';
}
