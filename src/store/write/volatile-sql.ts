// The jsonb side of "volatile fields make no version" (src/schema/warehouse/columns.ts declares
// the fields): a SQL expression for a jsonb value's text without them, at any depth, which the
// write path compares instead of the text itself when a row is written again.
//
// On jsonb's own text form, which Postgres prints one way only (keys sorted, `{"k": v, "k2":
// v2}`): a key's opening quote follows `{` or `, ` and the key is followed by `": `, while a
// quote inside a string is always `\"`, so the patterns match keys only, never text inside a
// value or an array element. Two passes: a key after another one goes with the `, ` before
// it; a first key with the `, ` after it. What is left is the text of the same value without
// those members, so a payload that lost its `asOf` compares equal to one that moved it. A
// volatile key holding an object or an array is not matched: it stays compared (a version
// too many, never one missed). No SQL function, so no migration and nothing to keep in step
// with the list: the expression is built from VOLATILE_FIELDS.
import { VOLATILE_FIELDS } from '../../schema/warehouse/columns.ts';

for (const f of VOLATILE_FIELDS) if (!/^[A-Za-z]+$/.test(f)) throw new Error(`volatile field ${f}: a plain name is expected (it goes into a regular expression)`);

// A scalar JSON value as jsonb prints it: a string (escapes included), null, true, false, a number.
const VALUE = String.raw`("([^"\\]|\\.)*"|null|true|false|-?[0-9][-+.eE0-9]*)`;
const KEY = `"(${VOLATILE_FIELDS.join('|')})": `;
const LATER = `, ${KEY}${VALUE}`;
const FIRST = String.raw`\{` + `${KEY}${VALUE}(, )?`;

/** `text` (a SQL expression of a jsonb value's text) without the volatile members. */
export function withoutVolatileSql(text: string): string {
  return `regexp_replace(regexp_replace(${text}, '${LATER}', '', 'g'), '${FIRST}', '{', 'g')`;
}
