// How many terminal columns text takes: a CJK character or an emoji takes two, a combining
// mark, a zero-width joiner or a variation selector none. Counted per grapheme cluster (what a
// reader sees as one character: 👩‍💻, 🇯🇵, é written as e + U+0301), so that padding lines up
// and a cut never splits a character. Ambiguous-width characters (`…`, `█`, `≥`) count one, as
// on a terminal outside a CJK locale.

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** East Asian Wide and Fullwidth code points (Unicode's EastAsianWidth.txt) that are not emoji, as [first, last]. */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], // Hangul Jamo initial consonants
  [0x2329, 0x232a], // angle brackets
  [0x2e80, 0x303e], // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
  [0x3041, 0x3247], // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, enclosed CJK
  [0x3250, 0x4dbf], // enclosed CJK, CJK compatibility, CJK Extension A
  [0x4e00, 0xa4cf], // CJK unified ideographs, Yi
  [0xa960, 0xa97f], // Hangul Jamo Extended-A
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19], // vertical forms
  [0xfe30, 0xfe6f], // CJK compatibility forms, small form variants
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x16fe0, 0x16fff], // ideographic symbols and punctuation
  [0x17000, 0x18dff], // Tangut, Khitan
  [0x1aff0, 0x1b2ff], // Kana supplements, Nushu
  [0x1f200, 0x1f2ff], // enclosed ideographic supplement
  [0x20000, 0x2fffd], // CJK Extensions B to F, compatibility supplement
  [0x30000, 0x3fffd], // CJK Extensions G and H
];

function isWide(cp: number): boolean {
  if (cp < 0x1100) return false;
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last] = WIDE[mid]!;
    if (cp < first) hi = mid - 1;
    else if (cp > last) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Marks, format characters (ZWJ, joiners, soft hyphen), controls, Hangul medial and final Jamo. */
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}\p{Cc}\u1160-\u11ff\ud7b0-\ud7ff]/u;
/** An emoji shown as one (emoji presentation: 😀, regional indicators, skin tones). */
const EMOJI_PRESENTATION = /\p{Emoji_Presentation}/u;
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Pure: the columns one code point takes outside an emoji: 0, 1 or 2 (as wcwidth counts). */
function codePointWidth(char: string): number {
  if (ZERO_WIDTH.test(char)) return 0;
  return isWide(char.codePointAt(0)!) ? 2 : 1;
}

/** Pure: the columns one grapheme cluster takes. */
export function clusterWidth(cluster: string): number {
  if (cluster.length === 1) {
    const c = cluster.charCodeAt(0);
    if (c >= 0x20 && c < 0x7f) return 1;
  }
  const base = String.fromCodePoint(cluster.codePointAt(0) ?? 0x20);
  // An emoji is one picture, two columns wide: an emoji character, a flag (two regional
  // indicators), a ZWJ sequence (👩‍💻), a symbol or keycap asking for emoji presentation (❤️, 1️⃣).
  if (EMOJI_PRESENTATION.test(cluster)) return 2;
  if (cluster.includes('\ufe0f') && EMOJI.test(base)) return 2;
  if (cluster.includes('\u200d') && PICTOGRAPHIC.test(base)) return 2;
  // Otherwise each character its own width: a spacing mark of an Indic cluster takes a column,
  // as on a terminal; combining marks and joiners none.
  let width = 0;
  for (const char of cluster) width += codePointWidth(char);
  return width;
}

/** Pure: the terminal columns `text` takes (one line: no tabs or newlines expected). */
export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += clusterWidth(segment);
  return width;
}

/** Pure: the longest start of `text` that takes at most `columns` columns, never half a character. */
export function sliceToWidth(text: string, columns: number): string {
  if (PRINTABLE_ASCII.test(text)) return text.slice(0, Math.max(0, columns));
  let width = 0;
  let end = 0;
  for (const { segment, index } of graphemes.segment(text)) {
    const w = clusterWidth(segment);
    if (width + w > columns) break;
    width += w;
    end = index + segment.length;
  }
  return text.slice(0, end);
}

/** Pure: `text` cut to `columns` columns, `…` where it was cut. */
export function truncateToWidth(text: string, columns: number, ellipsis = '…'): string {
  if (displayWidth(text) <= columns) return text;
  return `${sliceToWidth(text, columns - displayWidth(ellipsis))}${ellipsis}`;
}

/** Pure: `text` followed by spaces up to `columns` columns (`padEnd` by display width). */
export function padEndToWidth(text: string, columns: number): string {
  return `${text}${' '.repeat(Math.max(0, columns - displayWidth(text)))}`;
}

/** Pure: spaces then `text`, up to `columns` columns (`padStart` by display width). */
export function padStartToWidth(text: string, columns: number): string {
  return `${' '.repeat(Math.max(0, columns - displayWidth(text)))}${text}`;
}

/**
 * Pure: `text` in lines of at most `columns` columns, broken between words (a word wider than
 * a line is cut), each line after the first starting with `indent`. A terminal wraps a long
 * line mid-word; this does not.
 */
export function wrapToWidth(text: string, columns: number, indent = ''): string[] {
  const lines: string[] = [];
  let line: string | undefined;
  // At least two columns: the widest character always fits.
  const limit = () => Math.max(2, columns - (lines.length > 0 ? displayWidth(indent) : 0));
  const end = () => {
    lines.push(`${lines.length > 0 ? indent : ''}${line ?? ''}`);
    line = undefined;
  };
  for (let word of text.split(' ')) {
    if (line !== undefined && displayWidth(line) + 1 + displayWidth(word) > limit()) end();
    while (displayWidth(word) > limit()) {
      const head = sliceToWidth(word, limit());
      line = head;
      end();
      word = word.slice(head.length);
    }
    line = line === undefined ? word : `${line} ${word}`;
  }
  end();
  return lines;
}
