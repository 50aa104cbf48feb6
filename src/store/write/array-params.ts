// A batch's values as parameters: a column's values as one Postgres array literal of their text
// forms (cast to the column's type in the statement), or a single value when every row has the
// same. Numerics travel as text, so decimals stay exact. Used by the write (upsert.ts) and by
// the removal of absent members (set-removal.ts), which send rows the same way.
import { sql, type SQL } from 'drizzle-orm';
import type { ColumnInfo } from './table-shape.ts';

/**
 * One value as a parameter of the column's type. Through text: postgres.js would otherwise
 * serialize the parameter for the type the cast names (a boolean's 'true' became false, a
 * jsonb text was quoted again).
 */
export function typedText(c: ColumnInfo, text: string): SQL {
  return sql`${text}${sql.raw(`::text::${c.column.getSQLType()}`)}`;
}

export type EncodedColumn = { constant: true; value: string | null } | { constant: false; param: string; cast: string };

// An array element needs quotes unless it is plain (numbers, timestamps, most keys): quoting
// every element would allocate a second string per value.
const PLAIN = /^[^\s{}",\\]+$/;

/**
 * One column of the batch: its single value when every row has the same, else a Postgres
 * array literal of the values' text forms and its cast.
 */
export function encodeColumn(c: ColumnInfo, rows: readonly Record<string, unknown>[]): EncodedColumn {
  const { column, prop } = c;
  const parts = new Array<string>(rows.length);
  let first: string | null = null;
  // Rows of one batch mostly share objects (the fetch time, the run): convert each once.
  let lastIn: unknown = undefined;
  let lastText: string | null = null;
  let lastOut = 'NULL';
  let constant = true;
  const byTime = new Map<number, string>();
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i]![prop];
    let text: string | null;
    if (v === null || v === undefined) {
      text = null;
      parts[i] = 'NULL';
    } else {
      if (v !== lastIn) {
        lastIn = v;
        // The same instant comes in many Date objects (a day's metrics): map each once.
        const seen = v instanceof Date ? byTime.get(v.getTime()) : undefined;
        if (seen) {
          lastText = seen;
          lastOut = seen;
        } else {
          lastText = textOf(column.mapToDriverValue(v));
          lastOut = PLAIN.test(lastText) && lastText.toUpperCase() !== 'NULL' ? lastText : quoteElement(lastText);
          // Only plain texts are kept, so the element and the text are the same.
          if (v instanceof Date && lastOut === lastText) byTime.set(v.getTime(), lastText);
        }
      }
      text = lastText;
      parts[i] = lastOut;
    }
    if (i === 0) first = text;
    else if (constant && text !== first) constant = false;
  }
  if (constant) return { constant: true, value: first };
  return { constant: false, param: `{${parts.join(',')}}`, cast: `::${c.arrayType}` };
}

/**
 * An array element in double quotes, its quotes and backslashes escaped, in one regular
 * expression pass (docs/performance.md says why not replaceAll).
 */
export function quoteElement(text: string): string {
  return `"${text.replace(ELEMENT_ESCAPES, '\\$&')}"`;
}

const ELEMENT_ESCAPES = /["\\]/g;

export function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Date) return v.toISOString();
  return String(v);
}
