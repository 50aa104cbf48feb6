// A text read back: decoded once or twice by percent, JSON and HTML escapes, each unit of what
// it reads as mapped to the characters of the original it stands for, so that a secret found
// in what a text says can be scrubbed from what it is (src/lib/secrets.ts). Pure.

const hex2 = (c: number) => c.toString(16).toUpperCase().padStart(2, '0');

/**
 * A text as read back: unit i of `text` stands for the characters [from[i], to[i]) of the
 * original (undefined: itself, as written).
 */
export interface Reading {
  text: string;
  from: Int32Array | undefined;
  to: Int32Array | undefined;
  /** Where the units this reading's last decoding wrote lie, as [start, end) ranges: a window without one was read already. */
  decoded: number[];
}

type Decode = (m: RegExpExecArray) => string | undefined;

/** Pure: `r` with every match of `re` replaced by what `decode` reads it as, each new unit standing for the whole match. */
function decodeWith(r: Reading, re: RegExp, decode: Decode): Reading | undefined {
  // Every escape is longer than what it reads as: the reading is never longer than the text.
  const from = new Int32Array(r.text.length);
  const to = new Int32Array(r.text.length);
  const decoded: number[] = [];
  const parts: string[] = [];
  let n = 0;
  let last = 0;
  const copy = (a: number, b: number) => {
    for (let i = a; i < b; i++, n++) {
      from[n] = r.from ? r.from[i]! : i;
      to[n] = r.to ? r.to[i]! : i + 1;
    }
  };
  re.lastIndex = 0;
  for (let m = re.exec(r.text); m !== null; m = re.exec(r.text)) {
    const read = decode(m);
    if (read === undefined) continue;
    copy(last, m.index);
    parts.push(r.text.slice(last, m.index), read);
    const end = m.index + m[0].length - 1;
    const [start, stop] = [r.from ? r.from[m.index]! : m.index, r.to ? r.to[end]! : end + 1];
    decoded.push(n, n + read.length);
    for (let i = 0; i < read.length; i++, n++) (from[n] = start), (to[n] = stop);
    last = m.index + m[0].length;
  }
  if (decoded.length === 0) return undefined;
  copy(last, r.text.length);
  parts.push(r.text.slice(last));
  return { text: parts.join(''), from: from.subarray(0, n), to: to.subarray(0, n), decoded };
}

const PERCENT = /(?:%[0-9A-Fa-f]{2})+/g;
const JSON_ESCAPE = /\\(?:u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|(["'\\/bfnrt]))/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
/** HTML's named references for ASCII (and the no-break space): a key or password is almost always ASCII. */
const NAMED: Readonly<Record<string, string>> = {
  Tab: '\t', NewLine: '\n', nbsp: '\u00a0', excl: '!', quot: '"', QUOT: '"', num: '#', dollar: '$', percnt: '%', amp: '&', AMP: '&',
  apos: "'", lpar: '(', rpar: ')', ast: '*', midast: '*', plus: '+', comma: ',', period: '.', sol: '/', colon: ':', semi: ';',
  lt: '<', LT: '<', equals: '=', gt: '>', GT: '>', quest: '?', commat: '@', lsqb: '[', lbrack: '[', bsol: '\\', rsqb: ']',
  rbrack: ']', Hat: '^', lowbar: '_', UnderBar: '_', grave: '`', DiacriticalGrave: '`', lcub: '{', lbrace: '{', verbar: '|',
  vert: '|', VerticalLine: '|', rcub: '}', rbrace: '}',
};
// Longest names first: `&lbrack;` is not `&lbrace` cut short. A browser reads references
// without their `;` too, so the matcher does.
const NAMES = Object.keys(NAMED).sort((a, b) => b.length - a.length);
const HTML_REFERENCE = new RegExp(`&(?:#[xX]([0-9A-Fa-f]{1,12})|#([0-9]{1,12})|(${NAMES.join('|')}));?`, 'g');

/** Pure: a run of percent-escaped bytes as text, each character standing for its own escapes. */
function decodePercent(r: Reading): Reading | undefined {
  if (!r.text.includes('%')) return undefined;
  // Each UTF-8 sequence decoded alone: a bad byte stays as written, the rest still decodes.
  const bytes = /%[0-9A-Fa-f]{2}/g;
  return decodeWith(r, PERCENT, (m) => {
    const values = [...m[0].matchAll(bytes)].map((b) => Number.parseInt(b[0].slice(1), 16));
    let out = '';
    for (let i = 0; i < values.length; ) {
      const lead = values[i]!;
      const n = lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3 : lead >= 0xf0 && lead < 0xf5 ? 4 : 0;
      const seq = n === 0 ? undefined : values.slice(i, i + n);
      const text = seq && seq.length === n ? utf8(seq) : undefined;
      out += text ?? `%${hex2(lead)}`;
      i += text === undefined ? 1 : n;
    }
    return out;
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
function utf8(bytes: number[]): string | undefined {
  try {
    return UTF8.decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}

function decodeJson(r: Reading): Reading | undefined {
  if (!r.text.includes('\\')) return undefined;
  return decodeWith(r, JSON_ESCAPE, (m) => {
    if (m[1] !== undefined) return String.fromCharCode(Number.parseInt(m[1], 16));
    if (m[2] !== undefined) return String.fromCharCode(Number.parseInt(m[2], 16));
    const c = m[3]!;
    return SHORT_ESCAPES[c] ?? c;
  });
}

function decodeHtml(r: Reading): Reading | undefined {
  if (!r.text.includes('&')) return undefined;
  return decodeWith(r, HTML_REFERENCE, (m) => {
    const code = m[1] !== undefined ? Number.parseInt(m[1], 16) : m[2] !== undefined ? Number.parseInt(m[2], 10) : undefined;
    if (code === undefined) return NAMED[m[3]!];
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
  });
}

const DECODERS = [decodePercent, decodeJson, decodeHtml] as const;

/** Pure: the text as written and as read back once and twice, by every decoder and pair of them. */
export function readings(text: string): Reading[] {
  const out: Reading[] = [];
  const once: Reading[] = [];
  if (!/[%\\&]/.test(text)) return out;
  const plain: Reading = { text, from: undefined, to: undefined, decoded: [] };
  for (const decode of DECODERS) {
    const r = decode(plain);
    if (r) once.push(r);
  }
  out.push(...once);
  for (const r of once) {
    for (const decode of DECODERS) {
      const rr = decode(r);
      if (rr) out.push(rr);
    }
  }
  return out;
}
