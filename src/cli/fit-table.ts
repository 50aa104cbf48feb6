// Query results as a text table that fits a terminal's width (the demo's closing query on an
// 80-column terminal): whole where it fits; otherwise, step by step, numbers rounded (`1.23B`,
// `12.35`), one space between columns, then the widest columns cut with an ellipsis. Counted
// in terminal columns (src/lib/display-width.ts): a CJK character or an emoji takes two.
import { displayWidth, padEndToWidth, padStartToWidth, truncateToWidth, wrapToWidth } from '../lib/display-width.ts';

export interface FittedTable {
  text: string;
  /** Some number is shown rounded: the warehouse holds it exactly. */
  rounded: boolean;
}

/** A cell as text on one line: a newline, a tab or another control character in a value is a space. */
function cellText(v: unknown): string {
  const text = v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v);
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
}

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

function isNumeric(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'bigint' || (typeof v === 'string' && NUMBER.test(v.trim()));
}

const MAGNITUDES: readonly (readonly [number, string])[] = [
  [1e12, 'T'],
  [1e9, 'B'],
  [1e6, 'M'],
  [1e3, 'k'],
];

/**
 * Pure: a number in a few characters, for reading, not for computing: three significant digits
 * and a magnitude from a thousand on (`1.23B`, `456M`, `12.3k`), four below (`12.35`,
 * `0.0001235`). The text as it is when it is no longer than that, or not a finite number.
 */
export function shortNumber(text: string): string {
  const x = Number(text.trim());
  if (!Number.isFinite(x)) return text;
  const abs = Math.abs(x);
  let short: string;
  const at = MAGNITUDES.findIndex(([size]) => abs >= size);
  if (at === -1) {
    // 999.96 rounds to 1000: still four characters.
    short = String(Number(x.toPrecision(4)));
  } else {
    let i = at;
    let scaled = Number((x / MAGNITUDES[i]![0]).toPrecision(3));
    // 999.95k is 1.00M, not 1000k.
    if (Math.abs(scaled) >= 1000 && i > 0) scaled = Number((x / MAGNITUDES[--i]![0]).toPrecision(3));
    short = `${scaled}${MAGNITUDES[i]![1]}`;
  }
  return short.length < text.trim().length ? short : text;
}

interface Column {
  name: string;
  numeric: boolean;
  cells: string[];
}

function render(columns: readonly Column[], widths: readonly number[], gap: string): string[] {
  const line = (vals: string[]) =>
    vals
      .map((v, i) => {
        const w = widths[i]!;
        const cut = truncateToWidth(v, w);
        return columns[i]!.numeric ? padStartToWidth(cut, w) : padEndToWidth(cut, w);
      })
      .join(gap)
      .trimEnd();
  const rows = columns[0]?.cells.map((_, r) => columns.map((c) => c.cells[r]!)) ?? [];
  return [line(columns.map((c) => c.name)), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

const total = (widths: readonly number[], gap: string) => widths.reduce((a, w) => a + w, 0) + gap.length * Math.max(0, widths.length - 1);

/** The narrowest a column is cut to: an ellipsis and a few characters. */
const MIN_COLUMN = 4;

/**
 * Pure: `rows` as an aligned table in at most `width` terminal columns (numbers right-aligned),
 * one line per row where the columns can be cut to fit, each line broken where they cannot.
 */
export function fitRows(rows: readonly Record<string, unknown>[], width: number): FittedTable {
  if (rows.length === 0) return { text: '(no rows)\n', rounded: false };
  const names = Object.keys(rows[0]!);
  const exact: Column[] = names.map((name) => {
    const values = rows.map((r) => r[name]);
    const numeric = values.some((v) => v !== null && v !== undefined) && values.every((v) => v === null || v === undefined || isNumeric(v));
    return { name, numeric, cells: values.map(cellText) };
  });
  const widthsOf = (cols: readonly Column[]) => cols.map((c) => Math.max(displayWidth(c.name), ...c.cells.map(displayWidth)));
  let columns = exact;
  let widths = widthsOf(columns);
  let gap = '  ';
  let rounded = false;
  if (total(widths, gap) > width) {
    const short = exact.map((c) => (c.numeric ? { ...c, cells: c.cells.map((v) => (v === '' ? v : shortNumber(v))) } : c));
    rounded = short.some((c, i) => c.cells.some((v, r) => v !== exact[i]!.cells[r]));
    columns = short;
    widths = widthsOf(columns);
  }
  if (total(widths, gap) > width) gap = ' ';
  // The widest column loses a column at a time, its cells cut with an ellipsis: first down to
  // its header's width (a long name, not the column's name, loses its end), the first column
  // (what tells the rows apart) last; then, where that is not enough, headers too.
  const floors: ((c: Column) => number)[] = [(c) => Math.max(MIN_COLUMN, displayWidth(c.name)), () => MIN_COLUMN];
  for (const floor of floors) {
    while (total(widths, gap) > width) {
      const shrinkable = (i: number) => widths[i]! > floor(columns[i]!);
      let widest = -1;
      for (let i = 1; i < widths.length; i++) if (shrinkable(i) && (widest === -1 || widths[i]! > widths[widest]!)) widest = i;
      if (widest === -1 && shrinkable(0)) widest = 0;
      if (widest === -1) break;
      widths = widths.map((w, i) => (i === widest ? w - 1 : w));
    }
  }
  // Too many columns to fit even so: each line broken, never wrapped mid-character by the terminal.
  const lines = render(columns, widths, gap).flatMap((l) => (displayWidth(l) > width ? wrapToWidth(l, width, '  ') : [l]));
  return { text: `${lines.join('\n')}\n`, rounded };
}

/**
 * Pure: each line of `text` within `width` terminal columns, a longer one broken between words,
 * its later lines indented two spaces past its own indent.
 */
export function fitText(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((line) => (displayWidth(line) > width ? wrapToWidth(line, width, `${/^ */.exec(line)![0]}  `) : [line]))
    .join('\n');
}
