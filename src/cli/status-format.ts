// `tesync status` as text, fitted to a width: a terminal's, or 80 columns for a pipe, a file
// or cron's mail; no line is longer, so a terminal never wraps one mid-word. The table keeps
// what a person scans in columns and wraps the lists (verdicts, statuses) inside theirs; a
// last error gets its own line, shortened to fit; prose and reasons wrap at spaces. `--wide`
// (no width) lays everything out at its full width, one line per group.
import { displayWidth, padEndToWidth as padEnd, padStartToWidth as padStart, sliceToWidth as takeWidth } from '../lib/display-width.ts';
import { age, minute, second } from '../lib/ages.ts';
import { formatCause } from '../store/read/status-checks.ts';
import { coverageText, missingText } from '../store/read/coverage.ts';
import type { GroupStatus, RunSummary } from '../store/read/status.ts';
import { EXACT_COUNT_MAX_BYTES, formatBytes, type TableSizes } from '../store/read/table-sizes.ts';

/** A failed check as the report lists it. */
export interface Reason {
  source: string;
  group: string;
  reason: string;
}

export interface StatusView {
  sizes?: TableSizes;
  /** The failed checks; present when a check was asked for. */
  over?: readonly Reason[];
  /** Columns to fit; Infinity (the default): each line at its full width. */
  width?: number;
}

export { age, ago, minute, utc } from '../lib/ages.ts';
export { formatCause } from '../store/read/status-checks.ts';

/** The data time the table shows: the oldest among the resources the checks judge. */
function dataTimeCell(g: GroupStatus, at: (d: Date) => string): string {
  const d = g.checks.oldestData;
  return d ? `${at(d.at)}${d.clock === 'newest history point' ? '*' : ''}` : '-';
}

function confirmedCell(g: GroupStatus, now: Date): string {
  const c = g.checks;
  if (c.checked === 0) return '-';
  const never = c.neverConfirmed > 0 ? `${c.neverConfirmed} never` : '';
  if (!c.stalestConfirmedAt) return never || 'never';
  return never ? `${age(c.stalestConfirmedAt, now)}, ${never}` : age(c.stalestConfirmedAt, now);
}

function statusesCell(g: GroupStatus): string {
  const counts = Object.entries(g.statuses)
    .sort()
    .map(([s, n]) => `${s} ${n}`);
  return [...counts, ...(g.checks.delisted > 0 ? [`${g.checks.delisted} delisted`] : []), ...(g.checks.retired > 0 ? [`${g.checks.retired} no longer listed`] : [])].join(', ');
}

/** `47/200`: held of promised; `-` for a group nothing promises. */
const heldCell = (g: GroupStatus) => (g.coverage ? coverageText(g.coverage) : '-');

const LEGEND = [
  "data time: the data's own time, the oldest among the group's resources (upstream's asOf; * a history resource's newest point); age: how long before now. confirmed: how long ago tesync (its own clock) last confirmed the group's least recently confirmed resource, and how many it never confirmed. upstream: its freshness verdicts, and how many resources (for a screener, rows) carry each; - where it gives none.",
  'held: of the resources its lists promise (listed tokens\' routes, their charts, periods and timeframes), those the warehouse holds; a walk stopped half-way leaves the rest missing, named under its group.',
  "Resources of delisted tokens, those their list no longer lists (a chart gone from its catalog, a period no longer configured), and those upstream says do not exist (not_found) or tesync skips (skipped), count in statuses but not in data time, confirmed or the checks.",
];

export function formatStatus(location: string, groups: GroupStatus[], runs: RunSummary[], now: Date, view: StatusView = {}): string {
  const width = view.width ?? Infinity;
  const out: string[] = [`Warehouse: ${location}`, ''];
  if (groups.length === 0) {
    out.push('Nothing synced yet: run `tesync sync`.');
    if (view.over !== undefined) out.push('', 'Over the limit: nothing was synced.');
    return `${fitLines(out, width).join('\n')}\n`;
  }
  out.push(...(Number.isFinite(width) ? groupTable(groups, now, width) : wideGroupTable(groups, now)));
  // Prose reads badly at 150 columns: at most 96 even with --wide.
  out.push('', ...LEGEND.flatMap((p) => fitLine(p, Math.min(width, 96), 2)));
  if (view.sizes) out.push('', ...formatSizes(view.sizes));
  const failing = groups.filter((g) => g.failures.length > 0);
  if (failing.length > 0) {
    out.push('', 'Failing resources by cause:');
    for (const g of failing) out.push(`  ${g.source}.${g.group}: ${g.failures.map(formatCause).join(', ')}`);
  }
  if (runs.length > 0) out.push('', 'Recent runs (UTC):', ...table(runs.map((r) => [`  ${second(r.startedAt)}`, r.status, r.trigger, r.id])));
  if (view.over && view.over.length > 0) {
    const n = new Set(view.over.map((o) => `${o.source}.${o.group}`)).size;
    out.push('', `Over the limit: ${n} of ${groups.length} groups`);
    for (const o of view.over) out.push(`  ${o.reason}`);
  }
  return `${fitLines(out, width).join('\n')}\n`;
}

/** One line per group, every column at its full width, the last error cut at 60 characters. */
function wideGroupTable(groups: GroupStatus[], now: Date): string[] {
  const header = ['source', 'group', 'resources', 'data time (UTC)', 'data age', 'upstream', 'confirmed', 'held', 'statuses', 'last error'];
  const body = groups.map((g) => [
    g.source,
    g.group,
    String(g.resources),
    dataTimeCell(g, minute),
    g.checks.oldestData ? age(g.checks.oldestData.at, now) : '-',
    g.freshness ?? '-',
    confirmedCell(g, now),
    heldCell(g),
    statusesCell(g),
    g.lastError ? truncate(g.lastError, 60) : '',
  ]);
  return table([header, ...body]);
}

/**
 * The table within `width`: the day only as data time (the age says the rest), the resource
 * count left to the statuses (they add up to it), verdicts and statuses wrapped inside their
 * columns at their commas, the last error on a line of its own. Lists too long for columns
 * at this width go on a line of their own under their group instead.
 */
function groupTable(groups: GroupStatus[], now: Date, width: number): string[] {
  // The group's name is shortened only when nothing else can give way.
  const columns = (shorten: boolean): Column[] => [{ header: 'group', shorten }, { header: 'data time' }, { header: 'age' }, { header: 'confirmed' }];
  const lists: Column[] = [{ header: 'upstream', wrap: true }, { header: 'statuses', wrap: true }];
  const rows = groups.map((g) => [
    `${g.source}.${g.group}`,
    dataTimeCell(g, (d) => d.toISOString().slice(0, 10)),
    g.checks.oldestData ? age(g.checks.oldestData.at, now) : '-',
    confirmedCell(g, now),
  ]);
  const listCells = (g: GroupStatus) => [g.freshness ?? '-', statusesCell(g)];
  const full = wrappedTable([...columns(false), ...lists], rows.map((r, i) => [...r, ...listCells(groups[i]!)]), width);
  const fits = [...full.header, ...full.rows.flat()].every((l) => displayWidth(l) <= width);
  const t = fits ? full : wrappedTable(columns(true), rows, width);
  const out = [...t.header];
  const label = '    last error: ';
  groups.forEach((g, i) => {
    out.push(...t.rows[i]!);
    if (!fits) out.push(...fitLine(`    upstream: ${listCells(g)[0]}; statuses: ${listCells(g)[1]}`, width, 2));
    if (g.lastError) out.push(`${label}${truncate(g.lastError, Math.max(8, width - label.length))}`);
    // Only a group short of what its lists promise says so: the others hold all of it.
    if (g.coverage && g.coverage.missing > 0) out.push(...fitLine(`    held: ${coverageText(g.coverage)}; missing: ${missingText(g.coverage)}`, width, 2));
  });
  return out;
}

/** The sizes section: per schema, then the largest tables. Pure. */
export function formatSizes(sizes: TableSizes, largest = 5): string[] {
  const rows = (n: number | null, exact: boolean) => (n === null ? '?' : `${exact ? '' : '~'}${n.toLocaleString('en-US')}`);
  const out = [
    `Table sizes (rows: counted, or ~ estimated from Postgres's statistics for analyzed tables over ${formatBytes(EXACT_COUNT_MAX_BYTES)}; on disk: with indexes and TOAST):`,
    ...table(
      [
        ['  schema', 'tables', 'rows', 'on disk', ''],
        ...sizes.schemas.map((s) => [`  ${s.schema}`, String(s.tables), rows(s.rows, s.exact), formatBytes(s.bytes), s.unknown > 0 ? `(+ ${s.unknown} table${s.unknown === 1 ? '' : 's'} not counted: too big to count now, never analyzed)` : '']),
      ],
      [1, 2, 3],
    ),
  ];
  const top = sizes.tables.slice(0, largest);
  if (top.length > 0) {
    out.push('  largest tables:');
    out.push(...table(top.map((t) => [`    ${t.table}`, rows(t.rows, t.exact), formatBytes(t.bytes)]), [1, 2]));
  }
  return out;
}

/** Columns padded to their widest cell; `right` lists the columns aligned right (numbers). */
function table(rows: string[][], right: readonly number[] = []): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => displayWidth(r[i]!))));
  const cell = (c: string, i: number, last: boolean) => (right.includes(i) ? padStart(c, widths[i]!) : last ? c : padEnd(c, widths[i]!));
  return rows.map((r) => r.map((c, i) => cell(c, i, i === r.length - 1)).join('  ').trimEnd());
}

export interface Column {
  header: string;
  /** A list (`a 1, b 2`): wrapped at its commas when the table is too wide. */
  wrap?: boolean;
  /** Shortened in the middle (`gateway.a-lo…name`) when the lists alone cannot make the table fit. */
  shorten?: boolean;
}

/** The narrowest a shortened column becomes. */
const SHORTEST = 8;

const GAP = 2;

/**
 * Pure: a table whose list columns give up width (down to their longest item), then its
 * shortened columns (down to SHORTEST), until the table fits `width`; each row one line or more.
 */
export function wrappedTable(columns: readonly Column[], rows: readonly string[][], width: number): { header: string[]; rows: string[][] } {
  const items = rows.map((r) => r.map((c, i) => (columns[i]!.wrap ? c.split(', ') : [c])));
  const natural = columns.map((col, i) => Math.max(displayWidth(col.header), ...rows.map((r) => displayWidth(r[i]!))));
  // A wrapped line ends in a comma: an item needs one column more.
  const listLeast = columns.map((col, i) => (col.wrap ? Math.max(displayWidth(col.header), ...items.flatMap((r) => r[i]!.map((x) => displayWidth(x) + 1))) : natural[i]!));
  const shortLeast = columns.map((col, i) => (col.shorten ? Math.min(natural[i]!, Math.max(displayWidth(col.header), SHORTEST)) : natural[i]!));
  const widths = [...natural];
  let over = widths.reduce((a, b) => a + b, 0) + GAP * (columns.length - 1) - width;
  for (const least of [listLeast, shortLeast]) {
    while (over > 0) {
      // Take a column from the one with the most to give.
      let pick = -1;
      for (let i = 0; i < columns.length; i++) if (widths[i]! > least[i]! && (pick < 0 || widths[i]! - least[i]! > widths[pick]! - least[pick]!)) pick = i;
      if (pick < 0) break;
      widths[pick]!--;
      over--;
    }
  }
  const lay = (list: string[], i: number) => {
    if (columns[i]!.wrap) return wrapItems(list, widths[i]!);
    return columns[i]!.shorten ? list.map((c) => (displayWidth(c) > widths[i]! ? shortenMiddle(c, widths[i]!) : c)) : list;
  };
  const render = (cells: string[][]) => {
    const height = Math.max(...cells.map((c) => c.length));
    return Array.from({ length: height }, (_, k) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? (c[k] ?? '') : padEnd(c[k] ?? '', widths[i]!)))
        .join(' '.repeat(GAP))
        .trimEnd(),
    );
  };
  return { header: render(columns.map((c) => [c.header])), rows: items.map((r) => render(r.map(lay))) };
}

/** Pure: `a 1, b 2, c 3` in lines of at most `width`, broken after a comma. */
export function wrapItems(items: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  items.forEach((item, i) => {
    const candidate = line ? `${line}, ${item}` : item;
    const last = i === items.length - 1;
    if (!line || displayWidth(candidate) + (last ? 0 : 1) <= width) line = candidate;
    else {
      lines.push(`${line},`);
      line = item;
    }
  });
  lines.push(line);
  return lines;
}

/** Pure: each line at most `width` columns (see fitLine); lines that fit are left as they are. */
export function fitLines(lines: readonly string[], width: number): string[] {
  return lines.flatMap((l) => fitLine(l, width));
}

/**
 * Pure: `line` broken at spaces into lines of at most `width` columns, the later ones
 * indented `hang` more than the first. A word wider than a line is shortened in its middle
 * (`start…end`) rather than broken, so no word is ever split across lines.
 */
export function fitLine(line: string, width: number, hang = 4): string[] {
  if (displayWidth(line) <= width) return [line];
  const spaces = /^ */.exec(line)![0];
  const words = line.slice(spaces.length).split(/ +/);
  // An indent of half the width or more leaves too little room: kept only up to that.
  const indent = spaces.slice(0, Math.floor(width / 2));
  const next = indent + ' '.repeat(indent.length + hang < width / 2 ? hang : 0);
  const out: string[] = [];
  let current = '';
  for (const word of words) {
    if (current && displayWidth(current) + 1 + displayWidth(word) <= width) {
      current += ` ${word}`;
      continue;
    }
    if (current) out.push(current);
    const lead = out.length === 0 ? indent : next;
    const room = Math.max(1, width - displayWidth(lead));
    current = lead + (displayWidth(word) <= room ? word : shortenMiddle(word, room));
  }
  out.push(current);
  return out;
}

/** Pure: one line of at most `n` columns, cut at a space near the end where there is one. */
export function truncate(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  if (displayWidth(one) <= n) return one;
  const cut = takeWidth(one, n - 1);
  const space = cut.lastIndexOf(' ');
  return `${space >= cut.length - 16 && space > 0 ? cut.slice(0, space) : cut}…`;
}

function shortenMiddle(word: string, n: number): string {
  if (n < 3) return takeWidth(word, n);
  const head = takeWidth(word, Math.ceil((n - 1) / 2));
  const tailWidth = n - 1 - displayWidth(head);
  const chars = [...word];
  let tail = '';
  for (let i = chars.length - 1; i >= 0 && displayWidth(chars[i]! + tail) <= tailWidth; i--) tail = chars[i]! + tail;
  return `${head}…${tail}`;
}
