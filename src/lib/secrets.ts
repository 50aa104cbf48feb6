// Secrets stay ours: whatever the upstream says (a problem's title, a header, an HTML error
// page) may repeat the key it was sent, and tesync must not store, print or show it. One
// function scrubs a text of every configured secret in every form it could take there:
//
// - written out: as sent, percent-encoded (encodeURIComponent, encodeURI, RFC 3986 strict,
//   form encoding with `+`; hex upper or lower), JSON-escaped (`\"`, `\/`, `\u003c`),
//   HTML-escaped (named, decimal and hex references);
// - read back: the text is also decoded, once and twice (percent, JSON and HTML escapes,
//   each on its own and in pairs), and the secret sought in what it decodes to, so a form
//   that mixes escapes, pads references with zeros or encodes twice is found all the same;
// - cut: any run of WINDOW characters of any of those forms (a truncation leaves a prefix at
//   a text's end, a suffix at its start, a piece in the middle of an excerpt).
//
// A secret shorter than WINDOW is scrubbed only where a form of it stands whole (its
// pieces would match ordinary words); forms shorter than SHORTEST characters are not
// scrubbed at all: they would blank ordinary text, and guard nothing a guess would not find.
// The matcher (every window of every form, by length) is built once per list of secrets.
import { readings, type Reading } from './secret-readings.ts';

/** What a scrubbed piece of text is replaced with. */
export const REDACTED = '[REDACTED]';
/** A piece of a form this long or longer is a secret's, wherever it stands. */
export const WINDOW = 8;
/** A form shorter than this is not scrubbed. */
export const SHORTEST = 4;

export type Scrub = (text: string) => string;

const hex2 = (c: number, upper: boolean) => (upper ? c.toString(16).toUpperCase() : c.toString(16)).padStart(2, '0');
const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
const strict = (s: string) => s.replace(/[!'()*]/g, (c) => `%${hex2(c.charCodeAt(0), true)}`);
const replaceEach = (s: string, map: Readonly<Record<string, string>>) => s.replace(/[&<>"'/]/g, (c) => map[c] ?? c);

/** The ways an HTML writer escapes `& < > " '`: escape-html, Python's html.escape, Go's, numeric references. */
const HTML_SCHEMES: readonly Readonly<Record<string, string>>[] = [
  { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' },
  { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' },
  { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' },
  { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' },
  { '&': '&#38;', '<': '&#60;', '>': '&#62;', '"': '&#34;', "'": '&#39;' },
  { '&': '&#x26;', '<': '&#x3c;', '>': '&#x3e;', '"': '&#x22;', "'": '&#x27;' },
  { '&': '&#x26;', '<': '&#x3C;', '>': '&#x3E;', '"': '&#x22;', "'": '&#x27;' },
];

/** JSON writers that also escape what is unsafe in HTML (Go, .NET), hex lower or upper. */
const JSON_HTML_SAFE: readonly Readonly<Record<string, string>>[] = [
  { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', "'": '\\u0027' },
  { '<': '\\u003C', '>': '\\u003E', '&': '\\u0026', "'": '\\u0027' },
];

/** Pure: every form in which `secret` is written out: as sent, percent-encoded, JSON- and HTML-escaped. */
export function writtenForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const uriComponent = safely(() => encodeURIComponent(secret));
  const uri = safely(() => encodeURI(secret));
  const formEncoded = new URLSearchParams({ s: secret }).toString().slice(2);
  for (const f of [uriComponent, uri, formEncoded, uriComponent === undefined ? undefined : strict(uriComponent)]) {
    if (f === undefined) continue;
    forms.add(f);
    forms.add(lowerHex(f));
  }
  const json = JSON.stringify(secret).slice(1, -1);
  forms.add(json);
  forms.add(json.replace(/\//g, '\\/'));
  for (const map of JSON_HTML_SAFE) forms.add(replaceEach(json, map));
  for (const map of HTML_SCHEMES) forms.add(replaceEach(secret, map));
  return [...forms];
}

function safely(f: () => string): string | undefined {
  try {
    return f(); // a lone surrogate cannot be percent-encoded
  } catch {
    return undefined;
  }
}

/** `+` and space are one character to the matcher: form encoding writes a space as `+`. */
const fold = (s: string) => (s.includes('+') ? s.replace(/\+/g, ' ') : s);

/** A window's hash: the same polynomial the scan rolls over a text. */
const BASE = 0x01000193;

function hashOf(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) >>> 0;
  return h;
}

/** The windows to look for, of one length: by hash, then compared whole on a hit. */
interface Windows {
  length: number;
  /** BASE to the power length - 1: what the first unit of a window weighs. */
  top: number;
  byHash: Map<number, string[]>;
}

/** Every WINDOW-long run of each form of a long secret; the whole forms of a short one. */
function windowsOf(secrets: readonly string[]): Windows[] {
  const byLength = new Map<number, Set<string>>();
  const add = (piece: string) => {
    let set = byLength.get(piece.length);
    if (!set) byLength.set(piece.length, (set = new Set()));
    set.add(piece);
  };
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    for (const form of writtenForms(secret).map(fold)) {
      if (form.length < SHORTEST) continue;
      if (secret.length < WINDOW || form.length <= WINDOW) add(form);
      else for (let i = 0; i + WINDOW <= form.length; i++) add(form.slice(i, i + WINDOW));
    }
  }
  return [...byLength].map(([length, pieces]) => {
    let top = 1;
    for (let i = 1; i < length; i++) top = Math.imul(top, BASE) >>> 0;
    const byHash = new Map<number, string[]>();
    for (const piece of pieces) {
      const h = hashOf(piece);
      byHash.set(h, [...(byHash.get(h) ?? []), piece]);
    }
    return { length, top, byHash };
  });
}

/**
 * Pure: the spans [from, to) of the original text where a window stands in `r` (with
 * `decoded`, only windows holding a unit the reading decoded: the others were read as written).
 */
function spansIn(r: Reading, windows: readonly Windows[], into: [number, number][], onlyDecoded: boolean): void {
  const text = fold(r.text);
  for (const w of windows) {
    if (text.length < w.length) continue;
    const ranges = onlyDecoded ? r.decoded : [0, text.length];
    let scanned = 0;
    for (let k = 0; k < ranges.length; k += 2) {
      // Windows starting from here to the range's end hold one of its units.
      const first = Math.max(scanned, ranges[k]! - w.length + 1, 0);
      const last = Math.min(ranges[k + 1]! - 1, text.length - w.length);
      if (first > last) continue;
      let h = 0;
      for (let i = first; i < first + w.length; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) >>> 0;
      for (let i = first; ; i++) {
        const hit = w.byHash.get(h);
        if (hit !== undefined && hit.includes(text.slice(i, i + w.length))) {
          const endAt = i + w.length - 1;
          into.push([r.from ? r.from[i]! : i, r.to ? r.to[endAt]! : endAt + 1]);
        }
        if (i === last) break;
        h = (Math.imul((h - Math.imul(text.charCodeAt(i), w.top)) >>> 0, BASE) + text.charCodeAt(i + w.length)) >>> 0;
      }
      scanned = last + 1;
    }
  }
}

/** Pure: `text` with each span (merged where they meet or overlap) replaced by REDACTED. */
function redact(text: string, spans: [number, number][]): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let out = '';
  let at = 0;
  let [start, end] = spans[0]!;
  for (const [s, e] of spans.slice(1)) {
    if (s <= end) end = Math.max(end, e);
    else {
      out += text.slice(at, start) + REDACTED;
      at = end;
      [start, end] = [s, e];
    }
  }
  return out + text.slice(at, start) + REDACTED + text.slice(end);
}

/** Pure: the scrub of these secrets (see the top of this file). */
export function createScrub(secrets: readonly string[]): Scrub {
  const windows = windowsOf(secrets);
  if (windows.length === 0) return (text) => text;
  const shortest = Math.min(...windows.map((w) => w.length));
  const pieces = piecesOf(secrets);
  return (text: string) => {
    if (typeof text !== 'string' || text.length < shortest) return text;
    const spans: [number, number][] = [];
    const asWritten: Reading = { text, from: undefined, to: undefined, decoded: [] };
    spansIn(asWritten, windows, spans, false);
    escapedPieces(asWritten, text.length, text, pieces, spans);
    for (const r of readings(text)) {
      spansIn(r, windows, spans, true);
      escapedPieces(r, text.length, text, pieces, spans);
    }
    return redact(text, spans);
  };
}

/** Where each character stands in the long secrets (folded): [secret, position] by UTF-16 unit. */
type Pieces = { secrets: string[]; at: Map<number, [number, number][]> };

function piecesOf(secrets: readonly string[]): Pieces {
  const long = secrets.filter((x) => x.length >= WINDOW).map(fold);
  const at = new Map<number, [number, number][]>();
  long.forEach((secret, k) => {
    for (let j = 0; j < secret.length; j++) {
      const c = secret.charCodeAt(j);
      at.set(c, [...(at.get(c) ?? []), [k, j]]);
    }
  });
  return { secrets: long, at };
}

/** The most characters a cut escape can leave (`&#X0000000003`). */
const ESCAPE_CHARS = 16;
const NAMED: Readonly<Record<string, readonly string[]>> = { '&': ['amp', 'AMP'], '<': ['lt', 'LT'], '>': ['gt', 'GT'], '"': ['quot', 'QUOT'], "'": ['apos'] };

/**
 * Pure: the escapes one character of a secret may be written as (percent, JSON, HTML, each
 * case of hex, HTML references padded with zeros, with or without `;`): what a cut escape
 * beside a piece must be part of. A cut escape is judged by the secret's own character next
 * to the piece, so ordinary text beside a common character (a run id's hex digits before a
 * `-`) is never taken for one.
 */
function escapesOf(c: string): string[] {
  const chars = c === ' ' ? [' ', '+'] : [c];
  const out: string[] = [];
  for (const ch of chars) {
    const code = ch.codePointAt(0)!;
    const percent = safely(() => encodeURIComponent(ch));
    if (percent !== undefined && percent !== ch) out.push(percent, percent.toLowerCase());
    out.push(`%${hex2(code, true)}`, `%${hex2(code, false)}`);
    for (const h of [code.toString(16), code.toString(16).toUpperCase()]) {
      out.push(`\\u${h.padStart(4, '0')}`, `\\\\u${h.padStart(4, '0')}`, `\\x${h.padStart(2, '0')}`);
      for (let z = 0; z <= 10; z++) for (const x of ['x', 'X']) out.push(`&#${x}${'0'.repeat(z)}${h};`, `&#${x}${'0'.repeat(z)}${h}`);
    }
    for (let z = 0; z <= 10; z++) out.push(`&#${'0'.repeat(z)}${code};`, `&#${'0'.repeat(z)}${code}`);
    for (const name of NAMED[ch] ?? []) out.push(`&${name};`, `&${name}`);
    if ('"\\/'.includes(ch)) out.push(`\\${ch}`, `\\\\\\${ch}`);
  }
  return out;
}

const escapesByChar = new Map<string, string[]>();
const escapes = (c: string): string[] => {
  let e = escapesByChar.get(c);
  if (!e) escapesByChar.set(c, (e = escapesOf(c)));
  return e;
};
/** What a cut left of an escape of `c` at a text's end: a proper prefix of one. */
const cutHead = (left: string, c: string | undefined) => left.length > 0 && c !== undefined && escapes(c).some((e) => e.length > left.length && e.startsWith(left));
/** What a cut left of an escape of `c` at a text's start: a proper suffix of one. */
const cutTail = (left: string, c: string | undefined) => left.length > 0 && c !== undefined && escapes(c).some((e) => e.length > left.length && e.endsWith(left));

/**
 * Pure: pieces of a long secret, two characters or more, that a reading decoded from WINDOW
 * characters of escapes or more (a cut of a form that escapes many characters: `%61%2B%6`),
 * with what a cut left of an escape at the text's start or end.
 */
function escapedPieces(r: Reading, length: number, original: string, pieces: Pieces, into: [number, number][]): void {
  if (pieces.secrets.length === 0) return;
  const text = fold(r.text);
  const from = (i: number) => (r.from ? r.from[i]! : i);
  const to = (i: number) => (r.to ? r.to[i]! : i + 1);
  const longest = Math.max(...pieces.secrets.map((x) => x.length));
  // As written, a piece is one only beside a cut escape: near the text's start or end. As
  // read back, only a piece holding a unit the reading decoded (the rest is read as written).
  const starts = r.from ? r.decoded.map((d, k) => (k % 2 === 0 ? Math.max(0, d - longest + 1) : d)) : [0, longest + ESCAPE_CHARS, text.length - longest - ESCAPE_CHARS, text.length];
  let i = 0;
  for (let k = 0; k < starts.length; k += 2) {
    for (i = Math.max(i, starts[k]!); i < starts[k + 1]! && i + 1 < text.length; i++) scanAt(i);
  }
  function scanAt(i: number): void {
    for (const [k, j] of pieces.at.get(text.charCodeAt(i)) ?? []) {
      const secret = pieces.secrets[k]!;
      // Only from where a piece begins: one a character earlier is the same piece.
      if (i > 0 && j > 0 && text.charCodeAt(i - 1) === secret.charCodeAt(j - 1)) continue;
      let n = 1;
      while (i + n < text.length && j + n < secret.length && text.charCodeAt(i + n) === secret.charCodeAt(j + n)) n++;
      let start = from(i);
      let end = to(i + n - 1);
      // The cut escape may precede the piece, or be its first characters read as written (`37` of `\u0037`).
      for (let t = i; t <= Math.min(i + 2, i + n - 1) && start > 0; t++) {
        const at = t === i ? start : from(t);
        if (j + (t - i) > 0 && at <= ESCAPE_CHARS && cutTail(original.slice(0, at), secret[j + (t - i) - 1])) start = 0;
      }
      // The cut escape may follow the piece, or be its last characters read as written (`%2`).
      for (let t = i + n; t >= Math.max(i + 1, i + n - 2) && end < length && length - end <= ESCAPE_CHARS; t--) {
        if (cutHead(original.slice(t === i + n ? end : from(t)), secret[j + (t - i)])) end = length;
      }
      // One character is a piece only beside what a cut left: alone, it is any text's.
      if ((n >= 2 || start === 0 || end === length) && end - start >= WINDOW && end - start > n) into.push([start, end]);
    }
  }
}

/** The scrubs built lately, by their secrets: a matcher is built once, not per text. */
const built = new Map<string, Scrub>();

/** The scrub of `secrets`, built once for the same list. */
export function scrubberFor(secrets: readonly string[]): Scrub {
  const key = secrets.join('\u0000');
  let scrub = built.get(key);
  if (!scrub) {
    if (built.size >= 16) built.delete(built.keys().next().value as string);
    built.set(key, (scrub = createScrub(secrets)));
  }
  return scrub;
}

/** Pure: a JSON-like value with every string in it (keys too) scrubbed, as a plain copy. */
export function scrubDeep<T>(value: T, scrub: Scrub): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrub(v);
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [scrub(k), walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

let recorded: Scrub = (text) => text;

/**
 * Sets the secrets every recorded or printed text of this process is scrubbed of
 * (src/lib/recordable.ts): the composition root calls it once, with the configuration's.
 */
export function keepSecretsOut(secrets: readonly string[]): void {
  recorded = scrubberFor(secrets);
}

/** `text` scrubbed of the process's secrets (keepSecretsOut); as it is when none were set. */
export function scrubRecorded(text: string): string {
  return recorded(text);
}
