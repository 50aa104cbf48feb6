// The field names of a response, for schema drift (sync.contract_changes, `change = 'fields'`).
// Pure. A field is the dotted path of an object member of the envelope's `data` (of each
// item when `data` is a list), two levels deep: `token`, `token.slug`, `row.multiples`.
// Array elements are merged under `[]`: `streams`, `streams[].key`.
//
// Where the keys of an object are data rather than names (windows, section names, table
// columns, dates, slugs), listing them would report every new token, stream or day as drift.
// Such an object is listed itself but not descended into. The rule looks at names and keys
// only, never at values, so a form that varies per cell (a number here, a MetricValue there)
// cannot make a field come and go:
// - its member name is one of TABLE_MEMBERS: `rows` (a columns/rows table, rows keyed by
//   column), `data` (a chart's points, keyed by series), `sections` (states keyed by section);
// - one of its keys is not an identifier of at most 64 characters (`30d`, `2026-06-30`,
//   `revenue-by-stream`, `a.b`);
// - it has more than MAX_KEYS keys;
// - every member is itself a table (an object with `columns` and `rows`): a record of
//   MetricHistory keyed by stream, as app history with `stream=all` may send.
// The same rule applies to `data` itself and to each item of a `data` list: a root that is
// keyed by data yields no fields.
import { isRecord } from '../../schema/upstream/values.ts';

export const FIELD_DEPTH = 2;
export const MAX_KEYS = 48;
export const TABLE_MEMBERS: ReadonlySet<string> = new Set(['rows', 'data', 'sections']);

/** A name, not data: an identifier of at most 64 characters. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/** The sorted, distinct field paths of a response's `data`. */
export function fieldPaths(data: unknown): string[] {
  const out = new Set<string>();
  for (const item of Array.isArray(data) ? data : [data]) {
    if (isRecord(item) && !keyedByData(item)) members(item, '', 1, out);
  }
  return [...out].sort();
}

/** True when the keys of `obj` are data (see the header), judged by its keys alone. */
export function keyedByData(obj: Record<string, unknown>): boolean {
  const keys = Object.keys(obj);
  if (keys.length > MAX_KEYS) return true;
  if (keys.some((k) => !IDENTIFIER.test(k))) return true;
  return keys.length > 0 && keys.every((k) => isTable(obj[k]));
}

function isTable(v: unknown): boolean {
  return isRecord(v) && Object.hasOwn(v, 'columns') && Object.hasOwn(v, 'rows');
}

function members(obj: Record<string, unknown>, prefix: string, level: number, out: Set<string>): void {
  for (const [key, value] of Object.entries(obj)) {
    const path = `${prefix}${key}`;
    out.add(path);
    if (level >= FIELD_DEPTH || TABLE_MEMBERS.has(key)) continue;
    if (Array.isArray(value)) {
      for (const el of value) {
        if (isRecord(el) && !keyedByData(el)) members(el, `${path}[].`, level + 1, out);
      }
    } else if (isRecord(value) && !keyedByData(value)) {
      members(value, `${path}.`, level + 1, out);
    }
  }
}
