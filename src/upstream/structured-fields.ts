// A small parser of HTTP Structured Field Values (RFC 8941, RFC 9651): Lists and
// Dictionaries of Items with Parameters, as the IETF rate-limit fields are written. It
// follows the RFC's parsing algorithms to the letter and refuses (returns null) any field
// that does not parse as a whole: a value half understood decides nothing.

export type BareItem =
  | { type: 'integer'; value: number }
  | { type: 'decimal'; value: number }
  | { type: 'string'; value: string }
  | { type: 'token'; value: string }
  | { type: 'bytes'; value: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'date'; value: number }
  | { type: 'displaystring'; value: string };

export type Parameters = Map<string, BareItem>;

export interface Item {
  item: BareItem;
  params: Parameters;
}

export interface InnerList {
  inner: Item[];
  params: Parameters;
}

export type Member = Item | InnerList;

export function isItem(m: Member): m is Item {
  return 'item' in m;
}

/** Parse failure inside the parser: never leaves this module. */
class Refused extends Error {}

const KEY_START = /[a-z*]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
const TOKEN_START = /[A-Za-z*]/;
// tchar (RFC 9110) plus ':' and '/'
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

class Input {
  pos = 0;
  constructor(readonly s: string) {}
  get done(): boolean {
    return this.pos >= this.s.length;
  }
  peek(): string {
    return this.s[this.pos] ?? '';
  }
  next(): string {
    const c = this.s[this.pos++];
    if (c === undefined) throw new Refused('end of input');
    return c;
  }
  skipSP(): void {
    while (this.peek() === ' ') this.pos++;
  }
  skipOWS(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }
}

/** A field's value as a List, or null when it is not one (absent, empty of members is an empty list). */
export function parseList(value: string | null | undefined): Member[] | null {
  return parseTop(value, (inp) => {
    const out: Member[] = [];
    while (!inp.done) {
      out.push(parseMember(inp));
      if (!separator(inp)) break;
    }
    return out;
  });
}

/** A field's value as a Dictionary (members in order), or null when it is not one. */
export function parseDictionary(value: string | null | undefined): Map<string, Member> | null {
  return parseTop(value, (inp) => {
    const out = new Map<string, Member>();
    while (!inp.done) {
      const key = parseKey(inp);
      let member: Member;
      if (inp.peek() === '=') {
        inp.pos++;
        member = parseMember(inp);
      } else {
        member = { item: { type: 'boolean', value: true }, params: parseParameters(inp) };
      }
      // A key named twice: the RFC keeps the last value (and the first key's place).
      out.set(key, member);
      if (!separator(inp)) break;
    }
    return out;
  });
}

/** A field's value as a single Item, or null. */
export function parseItem(value: string | null | undefined): Item | null {
  return parseTop(value, (inp) => parseItemAt(inp));
}

function parseTop<T>(value: string | null | undefined, body: (inp: Input) => T): T | null {
  if (value === null || value === undefined) return null;
  // Field values are ASCII; anything else is not a structured field.
  if (/[^\x20-\x7e\t]/.test(value)) return null;
  const inp = new Input(value);
  try {
    inp.skipSP();
    const out = body(inp);
    inp.skipSP();
    if (!inp.done) return null;
    return out;
  } catch (err) {
    if (err instanceof Refused) return null;
    throw err;
  }
}

/** After a member: true when another follows (a comma), false at the end; throws otherwise. */
function separator(inp: Input): boolean {
  inp.skipOWS();
  if (inp.done) return false;
  if (inp.next() !== ',') throw new Refused('expected a comma');
  inp.skipOWS();
  if (inp.done) throw new Refused('a trailing comma');
  return true;
}

function parseMember(inp: Input): Member {
  return inp.peek() === '(' ? parseInnerList(inp) : parseItemAt(inp);
}

function parseInnerList(inp: Input): InnerList {
  inp.next(); // '('
  const inner: Item[] = [];
  for (;;) {
    inp.skipSP();
    if (inp.peek() === ')') {
      inp.pos++;
      return { inner, params: parseParameters(inp) };
    }
    inner.push(parseItemAt(inp));
    const c = inp.peek();
    if (c !== ' ' && c !== ')') throw new Refused('inner list');
  }
}

function parseItemAt(inp: Input): Item {
  const item = parseBareItem(inp);
  return { item, params: parseParameters(inp) };
}

function parseParameters(inp: Input): Parameters {
  const params: Parameters = new Map();
  while (inp.peek() === ';') {
    inp.pos++;
    inp.skipSP();
    const key = parseKey(inp);
    let value: BareItem = { type: 'boolean', value: true };
    if (inp.peek() === '=') {
      inp.pos++;
      value = parseBareItem(inp);
    }
    params.set(key, value);
  }
  return params;
}

function parseKey(inp: Input): string {
  if (!KEY_START.test(inp.peek())) throw new Refused('key');
  let key = '';
  while (!inp.done && KEY_CHAR.test(inp.peek())) key += inp.next();
  return key;
}

function parseBareItem(inp: Input): BareItem {
  const c = inp.peek();
  if (c === '-' || /[0-9]/.test(c)) return parseNumber(inp);
  if (c === '"') return { type: 'string', value: parseString(inp) };
  if (TOKEN_START.test(c)) return { type: 'token', value: parseToken(inp) };
  if (c === ':') return { type: 'bytes', value: parseBytes(inp) };
  if (c === '?') return parseBoolean(inp);
  if (c === '@') {
    inp.pos++;
    const n = parseNumber(inp);
    if (n.type !== 'integer') throw new Refused('date');
    return { type: 'date', value: n.value };
  }
  if (c === '%') return { type: 'displaystring', value: parseDisplayString(inp) };
  throw new Refused('bare item');
}

function parseNumber(inp: Input): BareItem {
  let sign = 1;
  if (inp.peek() === '-') {
    inp.pos++;
    sign = -1;
  }
  if (!/[0-9]/.test(inp.peek())) throw new Refused('number');
  let digits = '';
  let decimal = false;
  while (!inp.done) {
    const c = inp.peek();
    if (/[0-9]/.test(c)) digits += inp.next();
    else if (c === '.' && !decimal) {
      if (digits.length > 12) throw new Refused('decimal too long');
      digits += inp.next();
      decimal = true;
    } else break;
    if (!decimal && digits.length > 15) throw new Refused('integer too long');
    if (decimal && digits.length > 16) throw new Refused('decimal too long');
  }
  if (!decimal) return { type: 'integer', value: sign * Number(digits) };
  if (digits.endsWith('.')) throw new Refused('decimal');
  if (digits.length - digits.indexOf('.') - 1 > 3) throw new Refused('decimal fraction');
  return { type: 'decimal', value: sign * Number(digits) };
}

function parseString(inp: Input): string {
  inp.next(); // '"'
  let out = '';
  for (;;) {
    const c = inp.next();
    if (c === '\\') {
      const e = inp.next();
      if (e !== '"' && e !== '\\') throw new Refused('string escape');
      out += e;
    } else if (c === '"') return out;
    else if (c < ' ' || c > '~') throw new Refused('string character');
    else out += c;
  }
}

function parseToken(inp: Input): string {
  let out = inp.next();
  while (!inp.done && TOKEN_CHAR.test(inp.peek())) out += inp.next();
  return out;
}

function parseBytes(inp: Input): string {
  inp.next(); // ':'
  const end = inp.s.indexOf(':', inp.pos);
  if (end < 0) throw new Refused('byte sequence');
  const b64 = inp.s.slice(inp.pos, end);
  if (!BASE64.test(b64)) throw new Refused('byte sequence');
  inp.pos = end + 1;
  return b64;
}

function parseBoolean(inp: Input): BareItem {
  inp.next(); // '?'
  const c = inp.next();
  if (c === '1') return { type: 'boolean', value: true };
  if (c === '0') return { type: 'boolean', value: false };
  throw new Refused('boolean');
}

function parseDisplayString(inp: Input): string {
  inp.next(); // '%'
  if (inp.next() !== '"') throw new Refused('display string');
  const bytes: number[] = [];
  for (;;) {
    const c = inp.next();
    if (c === '"') break;
    if (c < ' ' || c > '~') throw new Refused('display string character');
    if (c === '%') {
      const hex = inp.next() + inp.next();
      if (!/^[0-9a-f]{2}$/.test(hex)) throw new Refused('display string escape');
      bytes.push(parseInt(hex, 16));
    } else bytes.push(c.charCodeAt(0));
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    throw new Refused('display string utf-8');
  }
}
