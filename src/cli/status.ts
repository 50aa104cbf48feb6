// `tesync status`: per source and resource group, how old the data is (the data's own time),
// upstream's freshness verdict and when tesync last confirmed it; the tables' sizes; failing
// resources by cause; the last runs. Exits 1 when a group's data is older than --max-age (or
// nothing was synced), so cron can use it as a health check.
import { parseArgs } from 'node:util';
import { openWarehouse } from '../store/connection.ts';
import { readStatus, type FailureCount, type GroupStatus, type RunSummary } from '../store/status.ts';
import { EXACT_COUNT_MAX_BYTES, formatBytes, type TableSizes } from '../store/table-sizes.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync status [--json] [--max-age HOURS] [--max-unconfirmed HOURS]

Per source and resource group: the data's own time (upstream's asOf; for history groups the
newest history point) and its age, upstream's freshness verdict, when tesync last confirmed
the group, statuses and the last error; then the tables' sizes (rows and space on disk),
the failing resources counted by cause, and the last runs.

  --max-age HOURS          exit 1 when a group's data is older than HOURS by the data's own
                           clock: the newest history point of a history group, else the
                           newest asOf upstream gave (a group upstream gives no data time, the
                           OpenAPI document, by when tesync last confirmed it); also when
                           nothing was synced. Says which group, how old and by which clock.
  --max-unconfirmed HOURS  exit 1 when a resource of a group was not confirmed (fetched, or
                           found unchanged) by tesync within HOURS, or never: tesync's clock,
                           whatever the data's age.
  --json                   the same as JSON.`;

/** Why a group fails a check, for people and for --json. */
export interface OverLimit {
  source: string;
  group: string;
  /** The clock judged: the data's own time, or tesync's (when it confirmed the data). */
  clock: 'newest history point' | 'upstream asOf' | 'last confirmed' | 'least recently confirmed';
  at: Date | null;
  ageHours: number | null;
  reason: string;
}

export async function runStatus({ config, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      'max-age': { type: 'string' },
      'max-unconfirmed': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const maxAgeHours = hoursOption('--max-age', values['max-age']);
  const maxUnconfirmedHours = hoursOption('--max-unconfirmed', values['max-unconfirmed']);
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    await warehouse.migrate();
    const { groups, runs, sizes } = await readStatus(warehouse);
    const now = new Date();
    const over = [
      ...(maxAgeHours === undefined ? [] : overMaxAge(groups, now, maxAgeHours)),
      ...(maxUnconfirmedHours === undefined ? [] : overMaxUnconfirmed(groups, now, maxUnconfirmedHours)),
    ];
    const checked = maxAgeHours !== undefined || maxUnconfirmedHours !== undefined;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ warehouse: warehouse.location, groups, sizes, runs, overLimit: over }, null, 2)}\n`);
    } else {
      process.stdout.write(formatStatus(warehouse.location, groups, runs, now, { sizes, ...(checked ? { over } : {}) }));
    }
    if (checked && (groups.length === 0 || over.length > 0)) return 1;
    return 0;
  } finally {
    await warehouse.close();
  }
}

function hoursOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n)) throw new UsageError(`${name} must be a number of hours greater than 0`);
  return n;
}

/** The data's own latest time and the clock it comes from; null where upstream gives none. Pure. */
export function dataTime(g: GroupStatus): { at: Date; clock: 'newest history point' | 'upstream asOf' } | null {
  if (g.newestPointAt) return { at: g.newestPointAt, clock: 'newest history point' };
  if (g.dataAsOf) return { at: g.dataAsOf, clock: 'upstream asOf' };
  return null;
}

const hoursSince = (at: Date, now: Date) => (now.getTime() - at.getTime()) / 3600_000;
const limitText = (option: string, hours: number) => `more than ${option} ${hours}h`;

/** Groups whose data is older than `maxAgeHours` by the data's own clock. Pure. */
export function overMaxAge(groups: GroupStatus[], now: Date, maxAgeHours: number): OverLimit[] {
  const out: OverLimit[] = [];
  for (const g of groups) {
    const name = `${g.source}.${g.group}`;
    const t = dataTime(g);
    const confirmed = `tesync last confirmed it ${ago(g.lastConfirmedAt, now)}`;
    if (t) {
      const h = hoursSince(t.at, now);
      if (h <= maxAgeHours) continue;
      const verdict = g.freshness ? `upstream says ${g.freshness}` : 'upstream gives no freshness verdict';
      const what = t.clock === 'newest history point' ? 'the newest history point' : "upstream's asOf";
      out.push({ source: g.source, group: g.group, clock: t.clock, at: t.at, ageHours: h, reason: `${name}: data ${age(t.at, now)} old by ${what}, ${utc(t.at)} (${limitText('--max-age', maxAgeHours)}); ${verdict}; ${confirmed}` });
    } else {
      // No data time to judge (the OpenAPI document): how long since tesync last had it confirmed.
      const h = g.lastConfirmedAt ? hoursSince(g.lastConfirmedAt, now) : null;
      if (h !== null && h <= maxAgeHours) continue;
      out.push({
        source: g.source,
        group: g.group,
        clock: 'last confirmed',
        at: g.lastConfirmedAt,
        ageHours: h,
        reason: `${name}: upstream gives no data time; judged by when tesync last confirmed it: ${g.lastConfirmedAt ? `${age(g.lastConfirmedAt, now)} ago` : 'never'} (${limitText('--max-age', maxAgeHours)})`,
      });
    }
  }
  return out;
}

/** Groups with a resource tesync has not confirmed within `hours`, or never. Pure. */
export function overMaxUnconfirmed(groups: GroupStatus[], now: Date, hours: number): OverLimit[] {
  const out: OverLimit[] = [];
  for (const g of groups) {
    const name = `${g.source}.${g.group}`;
    const h = g.stalestConfirmedAt ? hoursSince(g.stalestConfirmedAt, now) : null;
    if (g.unconfirmed === 0 && h !== null && h <= hours) continue;
    const why =
      g.unconfirmed > 0
        ? `${g.unconfirmed} of ${g.resources} resources never confirmed by tesync`
        : `the least recently confirmed resource was confirmed by tesync ${age(g.stalestConfirmedAt, now)} ago (${limitText('--max-unconfirmed', hours)})`;
    out.push({ source: g.source, group: g.group, clock: 'least recently confirmed', at: g.stalestConfirmedAt, ageHours: h, reason: `${name}: ${why}` });
  }
  return out;
}

export function age(from: Date | null, now: Date): string {
  if (!from) return 'never';
  const s = Math.max(0, Math.round((now.getTime() - from.getTime()) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 90 * 60) return `${Math.round(s / 60)}m`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)}h`;
  return `${(s / 86400).toFixed(1)}d`;
}

const ago = (from: Date | null, now: Date) => (from ? `${age(from, now)} ago` : 'never');
/** `2026-06-30 00:00 UTC`-style, without the zone (the header says UTC). */
const minute = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');
const utc = (d: Date) => `${minute(d)} UTC`;

export function formatStatus(location: string, groups: GroupStatus[], runs: RunSummary[], now: Date, extra: { sizes?: TableSizes; over?: OverLimit[] } = {}): string {
  const out: string[] = [`Warehouse: ${location}`, ''];
  if (groups.length === 0) {
    out.push('Nothing synced yet: run `tesync sync`.');
    if (extra.over !== undefined) out.push('', 'Over the limit: nothing was synced.');
    return `${out.join('\n')}\n`;
  }
  const header = ['source', 'group', 'resources', 'data time (UTC)', 'data age', 'upstream says', 'confirmed', 'statuses', 'last error'];
  const body = groups.map((g) => {
    const t = dataTime(g);
    return [
      g.source,
      g.group,
      String(g.resources),
      t ? `${minute(t.at)}${t.clock === 'newest history point' ? '*' : ''}` : '-',
      t ? age(t.at, now) : '-',
      g.freshness ?? '-',
      g.unconfirmed > 0 ? `${age(g.stalestConfirmedAt, now)}, ${g.unconfirmed} never` : age(g.stalestConfirmedAt, now),
      Object.entries(g.statuses)
        .sort()
        .map(([s, n]) => `${s} ${n}`)
        .join(', '),
      g.lastError ? truncate(g.lastError, 60) : '',
    ];
  });
  out.push(...table([header, ...body]));
  out.push(
    '',
    "data time: the data's own time, the newest asOf upstream gave (* the newest history point);",
    '  data age: how long before now. upstream says: its freshness verdicts, and how many resources',
    '  (for a screener, rows) carry each; - where upstream gives none.',
    "confirmed: when tesync (its own clock) last confirmed the group's least recently confirmed resource.",
  );
  if (extra.sizes) out.push('', ...formatSizes(extra.sizes));
  const failing = groups.filter((g) => g.failures.length > 0);
  if (failing.length > 0) {
    out.push('', 'Failing resources by cause:');
    for (const g of failing) out.push(`  ${g.source}.${g.group}: ${g.failures.map(formatCause).join(', ')}`);
  }
  if (runs.length > 0) {
    out.push('', 'Recent runs:');
    for (const r of runs) out.push(`  ${r.startedAt.toISOString()}  ${r.status.padEnd(9)} ${r.trigger.padEnd(8)} ${r.id}`);
  }
  if (extra.over && extra.over.length > 0) {
    const n = new Set(extra.over.map((o) => `${o.source}.${o.group}`)).size;
    out.push('', `Over the limit: ${n} of ${groups.length} groups`);
    for (const o of extra.over) out.push(`  ${o.reason}`);
  }
  return `${out.join('\n')}\n`;
}

/** The sizes section: per schema, then the largest tables. Pure. */
export function formatSizes(sizes: TableSizes, largest = 5): string[] {
  const rows = (n: number | null, exact: boolean) => (n === null ? '?' : `${exact ? '' : '~'}${n.toLocaleString('en-US')}`);
  const out = [
    `Table sizes (rows: counted, or ~ estimated by Postgres for tables over ${formatBytes(EXACT_COUNT_MAX_BYTES)}; on disk: with indexes and TOAST):`,
    ...table(
      [
        ['  schema', 'tables', 'rows', 'on disk', ''],
        ...sizes.schemas.map((s) => [`  ${s.schema}`, String(s.tables), rows(s.rows, s.exact), formatBytes(s.bytes), s.unknown > 0 ? `(+ ${s.unknown} tables not yet analyzed)` : '']),
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

/** `3 failed ProblemError 401 unauthorized`: the count, then what the failure columns say. */
export function formatCause(c: FailureCount): string {
  const what = [c.type ?? 'unknown error', c.httpStatus === null ? null : String(c.httpStatus), c.code].filter((x) => x !== null).join(' ');
  return `${c.resources} ${c.status} ${what}`;
}

/** Columns padded to their widest cell; `right` lists the columns aligned right (numbers). */
function table(rows: string[][], right: readonly number[] = []): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const cell = (c: string, i: number, last: boolean) => (right.includes(i) ? c.padStart(widths[i]!) : last ? c : c.padEnd(widths[i]!));
  return rows.map((r) => r.map((c, i) => cell(c, i, i === r.length - 1)).join('  ').trimEnd());
}

function truncate(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}
