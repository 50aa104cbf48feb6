// Pure readers of `columns[]` + `rows` tables (app history and chart data): rows may be
// arrays aligned with the columns or objects keyed by column key.
import type { Column } from '../../schema/upstream/app.ts';
import { isRecord, readDecimal, readText } from '../../schema/upstream/values.ts';

const TIME_KEYS = new Set(['date', 'time', 'ts', 'timestamp', 't', 'day', 'x']);

/** The index of the time (x) column: the one named by `x`, else of kind time, else a usual name, else the first. */
export function timeColumnIndex(columns: readonly Column[], xKey?: string | null): number {
  if (xKey) {
    const i = columns.findIndex((c) => c.key === xKey);
    if (i >= 0) return i;
  }
  const byKind = columns.findIndex((c) => c.kind === 'time' || c.kind === 'date' || c.kind === 'timestamp');
  if (byKind >= 0) return byKind;
  const byName = columns.findIndex((c) => TIME_KEYS.has(c.key.toLowerCase()));
  return byName >= 0 ? byName : 0;
}

/** The cell of a row for a column, whichever form the row has. */
export function cellOf(row: unknown, column: Column, index: number): unknown {
  if (Array.isArray(row)) return row[index];
  if (isRecord(row)) return row[column.key];
  return undefined;
}

/** Column types that say a column names things (a dimension, a label) rather than measures them. */
const NOT_NUMERIC_TYPES = new Set(['dimension', 'category', 'categorical', 'label', 'text', 'string', 'key']);

/** Whether the column's `columns[]` entry declares it a dimension or a label (by `type` or `kind`). */
export function declaredNotNumeric(column: Column): boolean {
  return NOT_NUMERIC_TYPES.has((readText(column.type) ?? readText(column.kind) ?? '').toLowerCase());
}

/** The distinct texts of a column whose every non-null cell is non-numeric text, else null. */
export function textCells(rows: readonly unknown[], column: Column, index: number): Set<string> | null {
  const out = new Set<string>();
  for (const row of rows) {
    const v = cellOf(row, column, index);
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string' || readDecimal(v).ok) return null;
    out.add(v);
  }
  return out.size > 0 ? out : null;
}
