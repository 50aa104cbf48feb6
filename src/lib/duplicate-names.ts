// Repeated member names in a JSON text. lossless-json reports a repeated name only when its two
// values differ, and keeps one of them silently otherwise; RFC 8259 leaves such an object's
// meaning open, so tesync refuses the body either way (contract: "understood, or refused").
//
// How, cheaply: every member name of the text is a string followed by `:`, and every distinct
// name of an object is one own key of the parsed value. When the text names more members than
// the value holds keys, some object named one twice. Counting names jumps from quote to quote
// (indexOf) and counting keys walks the parsed value: together 5 to 8 % of the parse itself on a
// 5 MB history (docs/reliability.md). Only a body that fails the count is scanned again, name by
// name, to say which name it repeats and where.
import { LosslessNumber } from 'lossless-json';

/** An object names the same key twice. RFC 8259 leaves its meaning open: such a body is not understood. */
export class DuplicateKeyError extends SyntaxError {
  override readonly name: string = 'DuplicateKeyError';
  constructor(
    readonly key: string,
    /** One-based character position of the repeated name's opening quote (as lossless-json tells it). */
    readonly position: number,
  ) {
    super(`the key ${JSON.stringify(key.slice(0, 100))} appears twice in one object (at character ${position})`);
  }
}

/** Throws DuplicateKeyError when `text` (valid JSON) names a member twice in one object of `value`, its parse. */
export function refuseDuplicateNames(text: string, value: unknown): void {
  if (memberNames(text) === ownKeys(value)) return;
  const found = firstDuplicateName(text);
  // Counts that disagree with no name found twice cannot come from a value parsed from this
  // text; such a body is refused all the same rather than read.
  throw found ? new DuplicateKeyError(found.name, found.position) : new DuplicateKeyError('(unknown)', 0);
}

/** How many member names valid JSON text holds: strings followed by a colon. Quotes appear only in strings. */
export function memberNames(text: string): number {
  let names = 0;
  let i = 0;
  for (;;) {
    const end = stringEnd(text, text.indexOf('"', i));
    if (end < 0) return names;
    i = nextToken(text, end + 1);
    if (text.charCodeAt(i) === COLON) names++;
  }
}

/** How many own keys the objects of a parsed value hold, all depths together (iterative: bodies nest deep). */
export function ownKeys(value: unknown): number {
  let keys = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || v instanceof LosslessNumber) continue;
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    for (const key of Object.keys(v)) {
      keys++;
      const item = (v as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return keys;
}

/** The first name valid JSON text repeats within one object (names compared decoded: `"a"` is `"\u0061"`), or null. */
export function firstDuplicateName(text: string): { name: string; position: number } | null {
  // One entry per open container: the names an object has so far, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return null;
      if (expectName) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        const names = open.at(-1)!;
        if (names.has(name)) return { name, position: i + 1 };
        names.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === OPEN_BRACE) {
      open.push(new Set());
      expectName = true;
    } else if (c === OPEN_BRACKET) {
      open.push(null);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      open.pop();
    } else if (c === COMMA) {
      expectName = open.at(-1) != null;
    }
  }
  return null;
}

/** The index of the quote closing the string that opens at `start` (-1: none, or no string). */
function stringEnd(text: string, start: number): number {
  if (start < 0) return -1;
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end < 0) return -1;
    // A quote escaped by an odd run of backslashes does not close the string.
    let before = end - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((end - 1 - before) % 2 === 0) return end;
  }
}

function nextToken(text: string, from: number): number {
  let i = from;
  let c = text.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++i);
  return i;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
