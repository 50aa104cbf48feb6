// The example queries of docs/warehouse.md (```sql blocks opening with `-- example: <name>`)
// and, for each, the rows it must return, computed from what the simulator served (its dataset
// API), never from the warehouse. Used by test/docs/warehouse.test.ts (through the driver, on
// Postgres, across epochs) and by test/store/server/embedded-server.test.ts (through psql, on
// the embedded server after a demo).
//
// Values are compared as Postgres prints them (its text output, as psql shows it with
// PGTZ=UTC): numerics digit for digit, timestamps as `2026-06-01 00:00:00+00`, null as null.
// Text orders are compared as the C collation sorts (the test databases' and the embedded
// server's).
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { compareDecimal, type GatewayChartItem, type SimDataset, type Timeframe } from '../../sim/index.ts';

export interface DocExample {
  name: string;
  /** the SQL as written, comments included */
  text: string;
}

export const DOC_PATH = new URL('../../docs/warehouse.md', import.meta.url);

/** Every ```sql block of the doc that opens with `-- example: <name>`, in order. */
export function docExamples(doc = readFileSync(DOC_PATH, 'utf8')): DocExample[] {
  return [...doc.matchAll(/```sql\n-- example: ([\w-]+)\n([\s\S]*?)```/g)].map((m) => ({ name: m[1]!, text: `-- example: ${m[1]}\n${m[2]!}` }));
}

/** The SQL of the example `name`. */
export function docExample(name: string, doc?: string): string {
  const found = docExamples(doc).find((e) => e.name === name);
  if (!found) throw new Error(`docs/warehouse.md has no example ${name}`);
  return found.text;
}

/**
 * A backtest example with its `with decisions as (...)` list replaced by `decisions` (a select
 * of the instants, as `at`): the same query at the instants a test or the bench chooses.
 */
export function withDecisions(example: string, decisions: string): string {
  const pattern = /with decisions as \(\n[\s\S]*?\n\)\n/;
  if (example.search(pattern) < 0) throw new Error('the example does not start with a "with decisions as (...)" list');
  return example.replace(pattern, `with decisions as (\n${decisions}\n)\n`);
}

// ---------------------------------------------------------------------------------------------
// What was served

/** A series of a gateway chart timeframe that upstream renamed in what it served. */
export interface SeriesRename {
  slug: string;
  chartKey: string;
  timeframe: Timeframe;
  from: string;
  to: string;
  /** the new series' label */
  label: string;
}

/** One sync: the simulator's dataset it read, which sources and tokens it synced, the renames served. */
export interface Synced {
  data: SimDataset;
  sources: readonly ('app' | 'gateway')[];
  /** only these tokens' own resources (a `--tokens` sync); absent: every token */
  tokens?: readonly string[];
  renames?: readonly SeriesRename[];
}

/** When a run started and finished, as Postgres prints timestamptz (sync.runs). */
export interface RunWindow {
  started: string;
  finished: string;
}

/** What the warehouse was synced from: every sync so far, in order. */
export class Served {
  readonly syncs: Synced[] = [];
  /** the last run that synced the app host */
  appRun: RunWindow | undefined;

  add(s: Synced, run: RunWindow): this {
    this.syncs.push(s);
    if (s.sources.includes('app')) this.appRun = run;
    return this;
  }

  /** The app host's data as last synced. */
  get app(): SimDataset {
    const s = this.syncs.findLast((x) => x.sources.includes('app'));
    if (!s) throw new Error('nothing synced from the app host');
    return s.data;
  }

  /** The gateway syncs that fetched a token's own resources, in order. */
  gatewaySyncsOf(slug: string): Synced[] {
    return this.syncs.filter((s) => s.sources.includes('gateway') && (!s.tokens || s.tokens.includes(slug)));
  }
}

/** A gateway chart timeframe as served in a sync: the dataset's, with that sync's renames. */
export function servedChart(s: Synced, slug: string, chartKey: string, timeframe: Timeframe): GatewayChartItem | null {
  const item = s.data.gatewayChartData(slug, chartKey, timeframe);
  if (!item) return null;
  const renames = (s.renames ?? []).filter((r) => r.slug === slug && r.chartKey === chartKey && r.timeframe === timeframe);
  return renames.reduce(renameSeries, item);
}

/** The item with one series renamed, as upstream would send it after renaming. */
export function renameSeries(item: GatewayChartItem, r: Pick<SeriesRename, 'from' | 'to' | 'label'>): GatewayChartItem {
  const key = (k: string) => (k === r.from ? r.to : k);
  return {
    ...item,
    config: { ...item.config, series: item.config.series.map((s) => (s.key === r.from ? { ...s, key: r.to, label: r.label } : s)) },
    data: item.data.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [key(k), v])) as GatewayChartItem['data'][number]),
  };
}

const TIMEFRAME_ORDER: Timeframe[] = ['7d', '30d', '90d', '180d', '1y', '365d', 'all'];

/** The timeframe tesync mirrors for a configured one: itself when the chart lists it, else the longest listed (365d before 1y). */
export function mirroredTimeframe(configured: Timeframe, listed: readonly Timeframe[]): Timeframe | null {
  if (listed.includes(configured)) return configured;
  return TIMEFRAME_ORDER.filter((t) => listed.includes(t)).at(-1) ?? null;
}

// ---------------------------------------------------------------------------------------------
// Expected rows

/** A cell that cannot come from the simulator (e.g. a time on tesync's clock): a check instead. */
export interface Matcher {
  describe: string;
  test(actual: string | null): boolean;
}
export type Cell = string | null | Matcher;
export interface Expected {
  columns: string[];
  rows: Cell[][];
}

/** An instant as Postgres prints it ('2026-07-01 00:00:00.5+00'), in ms. */
export const instantMs = (s: string) => Date.parse(s.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));

/** A date or instant (ISO) as Postgres prints a timestamptz in UTC. */
export function pgTimestamptz(iso: string): string {
  const t = new Date(Date.parse(iso)).toISOString(); // 2026-06-01T00:00:00.000Z
  const frac = t.slice(19, 23).replace(/\.?0+$/, '');
  return `${t.slice(0, 10)} ${t.slice(11, 19)}${frac}+00`;
}

/** a - b for numerics as Postgres computes and prints it: exact, at the larger of the two scales. */
export function pgSubtract(a: string, b: string): string {
  const scale = (s: string) => (s.split('.')[1] ?? '').length;
  const n = Math.max(scale(a), scale(b));
  const big = (s: string) => {
    const [i, f = ''] = s.replace('-', '').split('.');
    const v = BigInt(`${i}${f.padEnd(n, '0')}`);
    return s.startsWith('-') ? -v : v;
  };
  const d = big(a) - big(b);
  const abs = (d < 0n ? -d : d).toString().padStart(n + 1, '0');
  const text = n > 0 ? `${abs.slice(0, -n)}.${abs.slice(-n)}` : abs;
  return d < 0n ? `-${text}` : text;
}

/** Code-unit order: the C collation's. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** Ascending, nulls last (Postgres' default). */
const byDecimal = (a: string | null, b: string | null) => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : compareDecimal(a, b));
const positive = (v: string | null): v is string => v !== null && compareDecimal(v, '0') > 0;

const atOrAfter = (instant: string, what: string): Matcher => ({
  describe: `<${what}: at or after ${instant}>`,
  test: (v) => v !== null && instantMs(v) >= instantMs(instant),
});
const within = (w: RunWindow, what: string): Matcher => ({
  describe: `<${what}: between ${w.started} and ${w.finished}>`,
  test: (v) => v !== null && instantMs(v) >= instantMs(w.started) && instantMs(v) <= instantMs(w.finished),
});
const oneOf = (values: string[]): Matcher => ({ describe: `<one of ${values.join(', ')}>`, test: (v) => v !== null && values.includes(v) });

function listedSlugs(data: SimDataset): Set<string> {
  return new Set(data.appTokens().map((t) => t.slug));
}

/** The gateway's tokens listed now: its catalog as the last sync of the whole gateway served it. */
function gatewayListed(s: Served): string[] {
  const last = s.syncs.findLast((x) => x.sources.includes('gateway') && !x.tokens);
  return last ? last.data.gatewayTokens().map((t) => t.slug) : [];
}

/** Listed tokens' screener rows, cheapest first by 30-day P/FCF (positive only). */
function cheapest(data: SimDataset) {
  const listed = listedSlugs(data);
  return data
    .appScreenerRows()
    .filter((r) => listed.has(r.token.slug) && positive(r.multiples['30d'].value))
    .sort((a, b) => compareDecimal(a.multiples['30d'].value!, b.multiples['30d'].value!) || byText(a.token.slug, b.token.slug));
}

/** The cheapest listed token whose coverage includes metric history, and the streams the doc reads for it. */
export function historyPick(data: SimDataset): { slug: string; streams: string[] } {
  const row = cheapest(data).find((r) => data.appToken(r.token.slug)?.coverage.metricHistory);
  if (!row) throw new Error('no listed token with metric history and a 30-day P/FCF');
  const streams = data.appStreams(row.token.slug) ?? [];
  return { slug: row.token.slug, streams: streams.includes('aggregate') ? ['aggregate'] : [...streams] };
}

/** A token's daily 30-day P/FCF on the given streams, as app.metric_history keeps it: [stream, date, value]. */
export function erm30dHistory(data: SimDataset, slug: string, streams: readonly string[]): [string, string, string | null][] {
  return (data.appHistoryPoints(slug) ?? [])
    .filter((p) => p.metric === 'erm30d' && streams.includes(p.stream))
    .sort((a, b) => byText(a.date, b.date) || byText(a.stream, b.stream))
    .map((p) => [p.stream, p.date, p.value]);
}

/** Every null number of a listed token's screener row and snapshot: [slug, surface, path, status, reason]. */
function nullNumbers(data: SimDataset): string[][] {
  const out: (string | null)[][] = [];
  const walk = (slug: string, surface: string, node: unknown, path: string) => {
    if (node === null || typeof node !== 'object') return;
    if ('value' in node && 'metric' in node) {
      const mv = node as unknown as { value: string | null; status: string; reason?: string };
      if (mv.value === null) out.push([slug, surface, path, mv.status, mv.reason ?? null]);
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) walk(slug, surface, item, `${path}.${(item as { key: string }).key}`);
      return;
    }
    for (const [k, v] of Object.entries(node)) walk(slug, surface, v, path ? `${path}.${k}` : k);
  };
  const listed = listedSlugs(data);
  for (const row of data.appScreenerRows()) {
    if (!listed.has(row.token.slug)) continue;
    const { token: _token, ...numbers } = row;
    walk(row.token.slug, 'screener', numbers, '');
  }
  for (const slug of listed) {
    const snap = data.appSnapshot(slug);
    if (snap) walk(slug, 'snapshot', { row: snap.row, combinedRevenue: snap.combinedRevenue, fundamentals: snap.fundamentals, streams: snap.streams }, '');
  }
  return (out as string[][]).sort((a, b) => byText(a[0]!, b[0]!) || byText(a[1]!, b[1]!) || byText(a[2]!, b[2]!));
}

/** The 3 listed tokens cheapest by 30-day P/FCF (docs' backtest). */
function backtestPicks(data: SimDataset) {
  return cheapest(data)
    .slice(0, 3)
    .map((r, i) => ({ rank: String(i + 1), slug: r.token.slug, m30: r.multiples['30d'].value!, emc: r.effectiveMarketCap.value }));
}

/**
 * The 3 listed tokens cheapest by their latest erm30d point (docs' history backtest): on the
 * aggregate stream, or a single-stream token's own.
 */
function historyBacktestPicks(data: SimDataset) {
  const picks: { slug: string; ts: string; value: string }[] = [];
  for (const slug of listedSlugs(data)) {
    const streams = data.appStreams(slug) ?? [];
    const stream = streams.length === 1 ? streams[0]! : 'aggregate';
    const latest = erm30dHistory(data, slug, [stream]).at(-1);
    if (latest && positive(latest[2])) picks.push({ slug, ts: `${latest[1]} 00:00:00+00`, value: latest[2]! });
  }
  return picks
    .sort((a, b) => compareDecimal(a.value, b.value) || byText(a.slug, b.slug))
    .slice(0, 3)
    .map((p, i) => ({ rank: String(i + 1), ...p }));
}

/** Gateway chart points at the timeframe mirrored for `all`, as the latest fetch of each chart served them. */
interface ChartPoint {
  slug: string;
  chartKey: string;
  timeframe: Timeframe;
  ts: string;
  series: string;
  label: string | null;
  value: string | null;
}

function chartPointsOf(s: Synced, slug: string): ChartPoint[] {
  const out: ChartPoint[] = [];
  for (const c of s.data.gatewayCharts(slug) ?? []) {
    const tf = mirroredTimeframe('all', c.timeframes);
    const item = tf && servedChart(s, slug, c.key, tf);
    if (!tf || !item) continue;
    for (const row of item.data) {
      for (const series of item.config.series) {
        if (!(series.key in row)) continue;
        out.push({ slug, chartKey: c.key, timeframe: tf, ts: pgTimestamptz(row.timestamp), series: series.key, label: series.label, value: row[series.key] ?? null });
      }
    }
  }
  return out;
}

const chartOrder = (a: ChartPoint, b: ChartPoint) => byText(a.chartKey, b.chartKey) || byText(a.ts, b.ts) || byText(a.series, b.series);

/**
 * The rows each example must return, from what was served. An example that reads the mirror
 * as a whole (rows are never deleted) sees what its last fetch served for every token ever
 * listed; one that reads "now" sees the current universe only.
 */
export const EXPECTED: Record<string, (s: Served) => Expected> = {
  'latest-screener': (s) => ({
    columns: ['token_slug', 'display_name', 'multiple_30d', 'effective_market_cap', 'annualized_revenue'],
    rows: cheapest(s.app)
      .slice(0, 5)
      .map((r) => [r.token.slug, r.token.displayName, r.multiples['30d'].value, r.effectiveMarketCap.value, r.annualizedRevenue.value]),
  }),

  'pfcf-history': (s) => {
    const pick = historyPick(s.app);
    return {
      columns: ['token_slug', 'stream', 'day', 'pfcf_30d'],
      rows: erm30dHistory(s.app, pick.slug, pick.streams).map(([stream, day, value]) => [pick.slug, stream, day, value]),
    };
  },

  'point-in-time-screener': (s) => {
    const listed = listedSlugs(s.app);
    return {
      columns: ['token_slug', 'multiple_30d', 'effective_market_cap'],
      rows: s.app
        .appScreenerRows()
        .filter((r) => listed.has(r.token.slug))
        .sort((a, b) => byDecimal(a.multiples['30d'].value, b.multiples['30d'].value) || byText(a.token.slug, b.token.slug))
        .map((r) => [r.token.slug, r.multiples['30d'].value, r.effectiveMarketCap.value]),
    };
  },

  'null-reasons': (s) => ({ columns: ['token_slug', 'surface', 'path', 'status', 'reason'], rows: nullNumbers(s.app) }),

  freshness: (s) => {
    const data = s.app;
    const run = s.appRun!;
    return {
      columns: ['slug', 'latest_day', 'status', 'verified_at'],
      rows: data
        .appTokens()
        .filter((t) => t.coverage.metricHistory)
        .map((t) => t.slug)
        .sort(byText)
        .map((slug) => {
          const days = (data.appHistoryPoints(slug) ?? []).map((p) => p.date).sort(byText);
          return [slug, days.at(-1) ?? null, oneOf(['ok', 'unchanged']), within(run, 'verified by the last app sync')];
        }),
    };
  },

  'chart-series': (s) => {
    const last = s.gatewaySyncsOf('aurora').at(-1);
    return {
      columns: ['chart_key', 'ts', 'series_key', 'label', 'value'],
      rows: (last ? chartPointsOf(last, 'aurora') : []).sort(chartOrder).map((p) => [p.chartKey, p.ts, p.series, p.label, p.value]),
    };
  },

  // Every listed token's charts as chart-series reads aurora's: the latest fetch of each.
  'gateway-chart-longest': (s) => {
    const points = gatewayListed(s).flatMap((slug) => {
      const last = s.gatewaySyncsOf(slug).at(-1);
      return last ? chartPointsOf(last, slug) : [];
    });
    return {
      columns: ['token_slug', 'chart_key', 'timeframe', 'ts', 'series_key', 'value'],
      rows: points.sort((a, b) => byText(a.slug, b.slug) || chartOrder(a, b)).map((p) => [p.slug, p.chartKey, p.timeframe, p.ts, p.series, p.value]),
    };
  },

  // The tokens listed now in either API, each with the screener row the mirror keeps for it
  // (the last one served: a listed token the latest screener left out keeps its earlier row).
  'app-vs-gateway-screener': (s) => {
    const app = new Map<string, ReturnType<SimDataset['appScreenerRows']>[number]>();
    for (const sync of s.syncs) if (sync.sources.includes('app')) for (const r of sync.data.appScreenerRows()) app.set(r.token.slug, r);
    const gw = new Map<string, ReturnType<SimDataset['gatewayScreenerRows']>[number]>();
    for (const sync of s.syncs) if (sync.sources.includes('gateway') && !sync.tokens) for (const r of sync.data.gatewayScreenerRows()) gw.set(r.slug, r);
    const appListed = listedSlugs(s.app);
    const gwListed = new Set(gatewayListed(s));
    const slugs = [...new Set([...appListed, ...gwListed])].sort(byText);
    return {
      columns: ['token_slug', 'app_effective_market_cap', 'gw_effective_market_cap', 'app_holder_fcf_annualized', 'gw_holder_fcf_annualized', 'app_pfcf_30d', 'gw_pfcf_30d'],
      rows: slugs.map((slug) => {
        const a = appListed.has(slug) ? app.get(slug) : undefined;
        const g = gwListed.has(slug) ? gw.get(slug) : undefined;
        return [slug, a?.effectiveMarketCap.value ?? null, g?.effMcap ?? null, a?.annualizedRevenue.value ?? null, g?.revAnnualized ?? null, a?.multiples['30d'].value ?? null, g?.windows['30d'].mult ?? null];
      }),
    };
  },

  // The first listed gateway token (by slug, then period) with a multAnnualized trend, every
  // point the mirror keeps of it (points that slid out of the period stay).
  'gateway-pfcf-trend': (s) => {
    const points = new Map<string, Map<string, string | null>>(); // `${slug}\0${period}` -> date -> value
    for (const slug of gatewayListed(s)) {
      for (const sync of s.gatewaySyncsOf(slug)) {
        for (const period of ['365d'] as const) {
          const trend = sync.data.gatewayTrend(slug, period);
          const values = trend?.series.find((x) => x.key === 'multAnnualized')?.values;
          if (!trend || !values) continue;
          const key = `${slug}\0${period}`;
          const days = points.get(key) ?? new Map<string, string | null>();
          trend.times.forEach((t, i) => days.set(t.slice(0, 10), values[i] ?? null)); // the UTC day
          points.set(key, days);
        }
      }
    }
    const first = [...points.keys()].sort(byText)[0];
    const slug = first?.split('\0')[0] ?? '';
    const days = first ? [...points.get(first)!].sort((a, b) => byText(a[0], b[0])) : [];
    return { columns: ['token_slug', 'day', 'pfcf'], rows: days.map(([day, value]) => [slug, day, value]) };
  },

  // In "Time and history": at every instant before the first sync nothing; now, the picks of the
  // data last synced.
  'backtest-no-look-ahead': (s) => ({
    columns: ['at', 'rank', 'token_slug', 'multiple_30d', 'effective_market_cap'],
    rows: backtestPicks(s.app).map((p) => [atOrAfter(s.appRun!.finished, 'now'), p.rank, p.slug, p.m30, p.emc]),
  }),
  'backtest-history': (s) => ({
    columns: ['at', 'rank', 'token_slug', 'ts', 'pfcf_30d'],
    rows: historyBacktestPicks(s.app).map((p) => [atOrAfter(s.appRun!.finished, 'now'), p.rank, p.slug, p.ts, p.value]),
  }),
};

// ---------------------------------------------------------------------------------------------
// Comparing

export interface Answer {
  /** the result's column names, when the client gives them (psql -t does not) */
  columns?: string[];
  rows: (string | null)[][];
}

const NULL = '∅';
const show = (row: readonly (string | null)[]) => row.map((c) => (c === null ? NULL : c)).join(' | ');

/**
 * Null when the answer is the expected one; else what differs, for people: the example, the
 * columns, the row counts, the first rows that differ, and rows found on one side only.
 */
export function differences(name: string, when: string, answer: Answer, s: Served): string | null {
  const make = EXPECTED[name];
  if (!make) return `example ${name} (docs/warehouse.md) has no expected rows: add them, computed from the simulator's data, to EXPECTED in test/docs/doc-examples.ts`;
  const want = make(s);
  const problems: string[] = [];
  if (answer.columns && show(answer.columns) !== show(want.columns)) problems.push(`columns: expected ${show(want.columns)}\n              got ${show(answer.columns)}`);
  // Matchers take the actual cell where it passes, so that only real differences remain.
  const resolved = want.rows.map((row, i) => row.map((cell, j) => (cell === null || typeof cell === 'string' ? cell : cell.test(answer.rows[i]?.[j] ?? null) ? (answer.rows[i]![j] ?? null) : cell.describe)));
  const wantLines = resolved.map(show);
  const gotLines = answer.rows.map(show);
  if (wantLines.length !== gotLines.length) problems.push(`rows: expected ${wantLines.length}, got ${gotLines.length}`);
  const differing = wantLines.flatMap((line, i) => (line !== gotLines[i] ? [i] : [])).slice(0, 5);
  for (const i of differing) problems.push(`row ${i + 1}: expected ${wantLines[i]}\n${' '.repeat(String(i + 1).length + 6)}got ${gotLines[i] ?? '(no row)'}`);
  if (wantLines.length === 0 && gotLines.length > 0) problems.push(`first row: got ${gotLines[0]}`);
  const extra = gotLines.filter((l) => !wantLines.includes(l));
  const missing = wantLines.filter((l) => !gotLines.includes(l));
  if (extra.length) problems.push(`${extra.length} row(s) the simulator did not serve, e.g.\n  ${extra.slice(0, 3).join('\n  ')}`);
  if (missing.length) problems.push(`${missing.length} row(s) missing, e.g.\n  ${missing.slice(0, 3).join('\n  ')}`);
  if (!problems.length) return null;
  if (!extra.length && !missing.length && wantLines.length === gotLines.length) problems.push('(the same rows in another order)');
  return `example ${name} (${when}) differs from what the simulator served:\n${problems.join('\n')}`;
}

/** Throws with `differences` when the answer is not the expected one. */
export function assertSameAsServed(name: string, when: string, answer: Answer, s: Served): void {
  const d = differences(name, when, answer, s);
  if (d !== null) throw new Error(d);
}

/** Runs an example through postgres.js and returns its cells exactly as Postgres printed them (UTC). */
export async function queryAsText(databaseUrl: string, text: string): Promise<Answer> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connection: { TimeZone: 'UTC' } });
  try {
    const result = await sql.unsafe(text).raw();
    return { columns: result.columns.map((c) => c.name), rows: result.map((row) => row.map((cell) => (cell === null ? null : Buffer.from(cell).toString('utf8')))) };
  } finally {
    await sql.end();
  }
}

/** psql's arguments and environment for an answer `parsePsql` reads: unaligned, tab-separated, no headers, null shown as ∅, UTC. */
export const PSQL_ARGS = ['-X', '-q', '-A', '-t', '-F', '\t', '-P', `null=${NULL}`, '-v', 'ON_ERROR_STOP=1'];
export const PSQL_ENV = { PGTZ: 'UTC' };

export function parsePsql(stdout: string): Answer {
  const lines = stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return { rows: lines.map((l) => l.split('\t').map((c) => (c === NULL ? null : c))) };
}

/** For a failed psql: when the client is not installed, says which Debian package has it (.ci/run installs it). */
export function psqlNotInstalled(err: unknown): never {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error("psql is not installed: install Debian's postgresql-client (apt-get install -y --no-install-recommends postgresql-client; .ci/run does)");
  }
  throw err;
}
