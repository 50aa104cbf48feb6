// How the warehouse grows: a first sync of the simulator, an unchanged resync (normal and
// --full), then a week of daily syncs (the simulator's epochs each add a day and move every
// `asOf`; tesync's clock moves a day per sync). Prints, per step, the growth of sync.requests,
// sync.raw_responses, the `_history` tables, the daily archives and the current tables, in
// rows and bytes on disk (pg_total_relation_size: heap, TOAST and indexes, after a VACUUM as
// autovacuum would run). Figures, not a test: docs/operations.md ("Growth and retention")
// quotes them.
//
//   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx test/bench/growth.ts [--tokens 50] [--days 7] [--json]
//
// Uses a database of its own on that server (dropped at the end); the simulator is unlimited.
import { parseArgs } from 'node:util';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { DAILY_ARCHIVES, VERSIONED } from '../../src/schema/warehouse/history.ts';
import { startSimulator } from '../../sim/index.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { createTestLogger, createTestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { APP_KEY, DEFAULT_SCENARIO, GATEWAY_KEY, simOptions } from './scenario.ts';

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '50' },
    days: { type: 'string', default: '7' },
    'history-days': { type: 'string', default: String(DEFAULT_SCENARIO.historyDays) },
    json: { type: 'boolean', default: false },
  },
});
const TOKENS = Number(values.tokens);
const DAYS = Number(values.days);
const HISTORY_DAYS = Number(values['history-days']);
const DAY = 86_400_000;
// Epochs 0-2 carry designed changes (a delisting, a revision); from 3 on each adds a plain day.
const FIRST_EPOCH = 3;

const qualified = (t: PgTable) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`;
const GROUPS = {
  requests: ['sync.requests'],
  raw: ['sync.raw_responses'],
  history: VERSIONED.map((t) => `${qualified(t)}_history`),
  archives: DAILY_ARCHIVES.map((a) => qualified(a.archive)),
  current: VERSIONED.map(qualified),
} as const;
type Group = keyof typeof GROUPS;

interface Sizes {
  rows: Record<Group, number>;
  bytes: Record<Group, number>;
  /** sync.raw_responses bodies: as stored (compressed) and as text. */
  rawStored: number;
  rawText: number;
  database: number;
}

async function measure(w: Warehouse): Promise<Sizes> {
  await w.query(sql`vacuum analyze`);
  const rows = {} as Record<Group, number>;
  const bytes = {} as Record<Group, number>;
  for (const [g, tables] of Object.entries(GROUPS) as [Group, readonly string[]][]) {
    rows[g] = 0;
    bytes[g] = 0;
    for (const t of tables) {
      const [r] = await w.query<{ n: string; b: string }>(sql`select (select count(*) from ${sql.raw(t)})::text as n, pg_total_relation_size(${t}::regclass)::text as b`);
      rows[g] += Number(r!.n);
      bytes[g] += Number(r!.b);
    }
  }
  const [raw] = await w.query<{ stored: string; text: string }>(
    sql`select coalesce(sum(coalesce(pg_column_size(body), 0) + coalesce(pg_column_size(body_text), 0)), 0)::text as stored,
               coalesce(sum(octet_length(coalesce(body::text, body_text))), 0)::text as text from sync.raw_responses`,
  );
  const [db] = await w.query<{ b: string }>(sql`select pg_database_size(current_database())::text as b`);
  return { rows, bytes, rawStored: Number(raw!.stored), rawText: Number(raw!.text), database: Number(db!.b) };
}

interface Step {
  step: string;
  requests: number;
  seconds: number;
  delta: Sizes;
  total: Sizes;
  /** Bodies the run archived (first received), by route: count, bytes stored (compressed), bytes as text. */
  byRoute: Record<string, { n: number; stored: number; text: number }>;
}

/** The bodies a run archived, by route (path without query, slug and chart key as placeholders). */
async function archivedByRoute(w: Warehouse, runId: string): Promise<Step['byRoute']> {
  const rows = await w.query<{ route: string; n: string; stored: string; text: string }>(sql`
    select source || ' ' || regexp_replace(regexp_replace(regexp_replace(path, '[?].*$', ''), '/tokens/[^/]+', '/tokens/{slug}'), '/charts/[^/]+', '/charts/{key}') as route,
           count(*)::text as n,
           sum(coalesce(pg_column_size(body), 0) + coalesce(pg_column_size(body_text), 0))::text as stored,
           sum(octet_length(coalesce(body::text, body_text)))::text as text
    from sync.raw_responses where run_id = ${runId} group by 1 order by 1`);
  return Object.fromEntries(rows.map((r) => [r.route, { n: Number(r.n), stored: Number(r.stored), text: Number(r.text) }]));
}

function minus(a: Sizes, b: Sizes): Sizes {
  const sub = (x: Record<Group, number>, y: Record<Group, number>) => Object.fromEntries(Object.keys(x).map((k) => [k, x[k as Group] - y[k as Group]])) as Record<Group, number>;
  return { rows: sub(a.rows, b.rows), bytes: sub(a.bytes, b.bytes), rawStored: a.rawStored - b.rawStored, rawText: a.rawText - b.rawText, database: a.database - b.database };
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MB`;
const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;

async function main(): Promise<void> {
  const sim = await startSimulator({ ...simOptions({ ...DEFAULT_SCENARIO, tokens: TOKENS, historyDays: HISTORY_DAYS }), latencyMs: 0, rateLimits: {}, epoch: FIRST_EPOCH });
  const tw = await createTestWarehouse();
  const { logger } = createTestLogger([APP_KEY, GATEWAY_KEY], 'warn');
  const keys = { appKey: APP_KEY, gatewayKey: GATEWAY_KEY, env: { TE_GATEWAY_HISTORY_PERIODS: '365d', TE_GATEWAY_CHART_TIMEFRAMES: 'all', TE_REQUESTS_RETENTION_DAYS: '0' } };
  const start = Date.now();
  const steps: Step[] = [];
  let unreferenced = { n: 0, stored: 0 };
  try {
    let before = await measure(tw.warehouse);
    const run = async (step: string, at: number, full = false) => {
      const t0 = Date.now();
      const out = await syncOnce(sim, tw.warehouse, logger, keys, ['app', 'gateway'], { full, clock: () => new Date(at + (Date.now() - t0)) });
      if (out.status !== 'succeeded') throw new Error(`${step}: run ${out.status}`);
      const after = await measure(tw.warehouse);
      steps.push({ step, requests: out.requests.total, seconds: (Date.now() - t0) / 1000, delta: minus(after, before), total: after, byRoute: await archivedByRoute(tw.warehouse, out.runId) });
      before = after;
      if (!values.json) process.stderr.write(`${step}: ${out.requests.total} requests, ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    };
    await run('first sync', start);
    await run('unchanged resync', start + 60_000);
    await run('unchanged resync --full', start + 120_000, true);
    for (let d = 1; d <= DAYS; d++) {
      sim.setEpoch(FIRST_EPOCH + d);
      // An hour past the day: the seventh is past TE_HISTORY_FULL_REFETCH_DAYS (7), so the
      // week holds one whole-history refetch of every token, as a daily schedule does.
      await run(`day ${d}`, start + d * DAY + 3600_000);
    }
    unreferenced = await unreferencedBodies(tw.warehouse);
  } finally {
    await sim.close();
    await tw.cleanup();
  }
  const daily = steps.filter((s) => s.step.startsWith('day '));
  const perDay = (f: (s: Step) => number) => daily.reduce((a, s) => a + f(s), 0) / Math.max(1, daily.length);
  const summary = {
    tokens: TOKENS,
    historyDays: HISTORY_DAYS,
    days: DAYS,
    perDay: {
      requestsRows: perDay((s) => s.delta.rows.requests),
      requestsBytes: perDay((s) => s.delta.bytes.requests),
      rawRows: perDay((s) => s.delta.rows.raw),
      rawBytes: perDay((s) => s.delta.bytes.raw),
      rawBytesPerToken: perDay((s) => s.delta.bytes.raw) / TOKENS,
      historyBytes: perDay((s) => s.delta.bytes.history),
      archiveBytes: perDay((s) => s.delta.bytes.archives),
      databaseBytes: perDay((s) => s.delta.database),
    },
    bytesPerRequestRow: steps.at(-1)!.total.bytes.requests / Math.max(1, steps.at(-1)!.total.rows.requests),
    unreferenced,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ summary, steps }, null, 2)}\n`);
    return;
  }
  const lines = [
    `${TOKENS} tokens, ${HISTORY_DAYS} days of history, 5 charts per token; growth per step (rows, bytes on disk incl. TOAST and indexes)`,
    '',
    '| step | requests | sync.requests | sync.raw_responses (bodies as text) | _history tables | daily archives | current tables | database |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...steps.map((s) =>
      [
        s.step,
        s.requests,
        `+${s.delta.rows.requests} rows, ${signed(s.delta.bytes.requests)}`,
        `+${s.delta.rows.raw} rows, ${signed(s.delta.bytes.raw)} (${signed(s.delta.rawText)})`,
        `+${s.delta.rows.history} rows, ${signed(s.delta.bytes.history)}`,
        `+${s.delta.rows.archives} rows, ${signed(s.delta.bytes.archives)}`,
        `${signed(s.delta.rows.current, '')} rows, ${signed(s.delta.bytes.current)}`,
        signed(s.delta.database),
      ].join(' | ').replace(/^/, '| ').concat(' |'),
    ),
    '',
    `per day (mean of ${daily.length} daily syncs): sync.requests +${summary.perDay.requestsRows.toFixed(0)} rows (${mb(summary.perDay.requestsBytes)}); ` +
      `sync.raw_responses +${summary.perDay.rawRows.toFixed(0)} rows (${mb(summary.perDay.rawBytes)}, ${kb(summary.perDay.rawBytesPerToken)} per token); ` +
      `_history ${mb(summary.perDay.historyBytes)}; daily archives ${mb(summary.perDay.archiveBytes)}; database ${mb(summary.perDay.databaseBytes)}`,
    `sync.requests: ${summary.bytesPerRequestRow.toFixed(0)} bytes per row on disk`,
    `bodies no row of app, gateway or their _history links to (raw_response_id): ${unreferenced.n} of ${steps.at(-1)!.total.rows.raw}, ${mb(unreferenced.stored)}`,
    '',
    'bodies archived by route (count, stored bytes): first sync | mean daily sync',
    ...routeLines(steps[0]!, daily),
    `totals after the last step: ${Object.entries(steps.at(-1)!.total.bytes)
      .map(([g, b]) => `${g} ${mb(b)}`)
      .join(', ')}; database ${mb(steps.at(-1)!.total.database)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Archived bodies that no current row nor version names in raw_response_id. */
async function unreferencedBodies(w: Warehouse): Promise<{ n: number; stored: number }> {
  const tables = await w.query<{ t: string }>(
    sql`select format('%I.%I', table_schema, table_name) as t from information_schema.columns
        where column_name = 'raw_response_id' and table_schema in ('app', 'gateway')
          and (table_schema, table_name) in (select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE')`,
  );
  const used = sql.join(tables.map((r) => sql.raw(`select raw_response_id from ${r.t}`)), sql` union `);
  const [row] = await w.query<{ n: string; stored: string }>(sql`
    select count(*)::text as n, coalesce(sum(coalesce(pg_column_size(body), 0) + coalesce(pg_column_size(body_text), 0)), 0)::text as stored
    from sync.raw_responses r where not exists (select 1 from (${used}) u where u.raw_response_id = r.id)`);
  return { n: Number(row!.n), stored: Number(row!.stored) };
}

function routeLines(first: Step, daily: readonly Step[]): string[] {
  const routes = [...new Set([first, ...daily].flatMap((s) => Object.keys(s.byRoute)))].sort();
  return routes.map((r) => {
    const f = first.byRoute[r] ?? { n: 0, stored: 0 };
    const dn = daily.reduce((a, s) => a + (s.byRoute[r]?.n ?? 0), 0) / Math.max(1, daily.length);
    const ds = daily.reduce((a, s) => a + (s.byRoute[r]?.stored ?? 0), 0) / Math.max(1, daily.length);
    return `  ${r}: ${f.n}, ${kb(f.stored)} | ${dn.toFixed(1)}, ${kb(ds)}`;
  });
}

function signed(n: number, unit: 'bytes' | '' = 'bytes'): string {
  const s = n >= 0 ? '+' : '-';
  const a = Math.abs(n);
  if (unit === '') return `${s}${a}`;
  return `${s}${a >= 1024 * 1024 ? mb(a) : kb(a)}`;
}

await main();
