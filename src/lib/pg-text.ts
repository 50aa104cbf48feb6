// What Postgres text can hold exactly. A `text` or `jsonb` value cannot hold U+0000, and
// jsonb refuses an unpaired surrogate (`\ud83d` without its low half) that a text column
// would turn into U+FFFD on the way (the client encodes strings as UTF-8). A JSON body is
// valid with either, so the client asks here before anything of it is written: such a body
// is not understood (src/upstream/client.ts), or, in a list, the items holding such strings
// are refused alone (src/engine/kit/item-refusals.ts); never stored altered. Also: where the bytes of
// a body stop being UTF-8, and text made readable for columns that are not data.
import { isLosslessNumber } from './json.ts';

/** Where a parsed body holds a string Postgres cannot store exactly, and what it holds. */
export interface Unholdable {
  /** The field as JSON a person reads: `data[3].displayName`, `data.labels["note\u0000"]` (never the raw character). */
  path: string;
  /** What is wrong, to follow the path: `holds U+0000, which Postgres cannot store exactly`. */
  what: string;
}

const CANNOT = 'which Postgres cannot store exactly';

/** A name a path writes after a dot; any other is written as a JSON string in brackets. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** U+0000, or a surrogate without its other half (UTF-16 code units, no `u` flag). */
const UNHOLDABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNHOLDABLE_ALL = new RegExp(UNHOLDABLE.source, 'g');

type WellFormed = { isWellFormed(): boolean };

/** Whether Postgres text holds `s` exactly: no U+0000, no unpaired surrogate. */
export function holdsExactly(s: string): boolean {
  // isWellFormed (Node 20) is native; the common string costs two scans and no allocation.
  return !s.includes('\u0000') && (s as unknown as WellFormed).isWellFormed();
}

/** The first character of `s` Postgres text cannot hold, named for people; null when there is none. */
function unholdableChar(s: string): string | null {
  if (holdsExactly(s)) return null;
  const found = UNHOLDABLE.exec(s)?.[0];
  if (found === undefined) return null;
  return found === '\u0000' ? 'U+0000' : `an unpaired surrogate U+${found.charCodeAt(0).toString(16).toUpperCase()}`;
}

/** The path of a field as JSON a person reads; `the body` for the whole. */
export function jsonPath(at: readonly (string | number)[]): string {
  let out = '';
  for (const s of at) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += out === '' ? s : `.${s}`;
    // JSON.stringify writes U+0000 and an unpaired surrogate as escapes: the path never carries them.
    else out += `[${JSON.stringify(s)}]`;
  }
  return out === '' ? 'the body' : out;
}

/** An Unholdable with the segments of its path, to tell which part of a body holds it. */
export interface UnholdableAt extends Unholdable {
  at: readonly (string | number)[];
}

/**
 * The strings of a parsed JSON value (object names and values, array items, in document
 * order) that Postgres cannot store exactly, at most `limit` of them. Numbers
 * (LosslessNumbers) are not strings.
 */
export function unholdableStrings(value: unknown, limit = Infinity): UnholdableAt[] {
  const at: (string | number)[] = [];
  const found: UnholdableAt[] = [];
  const note = (what: string) => found.push({ path: jsonPath(at), what, at: [...at] });
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      const bad = unholdableChar(v);
      if (bad !== null) note(`holds ${bad}, ${CANNOT}`);
      return;
    }
    if (typeof v !== 'object' || v === null || isLosslessNumber(v)) return;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && found.length < limit; i++) {
        at.push(i);
        visit(v[i]);
        at.pop();
      }
      return;
    }
    for (const key of Object.keys(v)) {
      if (found.length >= limit) return;
      at.push(key);
      const badKey = unholdableChar(key);
      if (badKey !== null) note(`holds ${badKey} in its name, ${CANNOT}`);
      else visit((v as Record<string, unknown>)[key]);
      at.pop();
    }
  };
  visit(value);
  return found;
}

/** The first string of a parsed JSON value that Postgres cannot store exactly (unholdableStrings), or null. */
export function unholdableString(value: unknown): Unholdable | null {
  const [first] = unholdableStrings(value, 1);
  return first ? { path: first.path, what: first.what } : null;
}

/**
 * Where `bytes` stop being UTF-8: the offset (from 0) of the first byte of the first sequence
 * that is not well-formed UTF-8 (Unicode's table 3-7, what a fatal TextDecoder accepts:
 * no overlong forms, no surrogates, nothing above U+10FFFF, no sequence cut short); null
 * when all of it is UTF-8.
 */
export function notUtf8At(bytes: Uint8Array): number | null {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return null;
}

/**
 * `s` with U+0000 and unpaired surrogates written as visible escapes (`\u0000`, `\ud83d`):
 * for text that is not data (a path, a problem code, a request id, an error message), which
 * must stay readable and storable, never for a body.
 */
export function visibleText(s: string): string {
  if (holdsExactly(s)) return s;
  return s.replace(UNHOLDABLE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
