// One clock for every stored time (issues 45, 55): `tesync sync` under faketime, its process
// clock 3 days ahead (then 3 days behind), against a warehouse on the right clock. No time
// tesync stored in any table of sync, app or gateway is ahead of the warehouse's
// clock_timestamp() after the sync, none is earlier than the run's start on the server's
// clock; the instants meant to lie ahead (`expires_at`, the rate budget's leases and windows
// in `sync.rate_budgets.record`) lie no further ahead than their own span on the server's
// clock; retention (TE_REQUESTS_RETENTION_DAYS) removes nothing early; and `tesync status`,
// run on the right clock, ages the data confirmed just now as just confirmed.
import { spawnSync } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey } from '../helpers/services.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { commandEnv } from '../helpers/sync.ts';
import { RECORD_TTL_MS } from '../../src/upstream/budget/budget-store.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');

/** Every timestamptz column tesync writes in these schemas: upstream's own times (`as_of`, `ts`, `generated_at`, `data_from`, `data_through`) and instants meant to lie ahead (a budget record's `expires_at`) aside. */
async function storedTimes(w: Warehouse): Promise<{ column: string; max: string | null; min: string | null; ahead: boolean; before: boolean }[]> {
  const columns = await w.query<{ t: string; c: string }>(sql`
    select table_schema || '.' || table_name as t, column_name as c from information_schema.columns c
    where table_schema in ('sync', 'app', 'gateway') and data_type = 'timestamp with time zone'
      and exists (select 1 from information_schema.tables x where x.table_schema = c.table_schema and x.table_name = c.table_name and x.table_type = 'BASE TABLE')
      and column_name not in ('as_of', 'ts', 'generated_at', 'data_as_of', 'known_to', 'expires_at', 'data_from', 'data_through')
    order by 1, 2`);
  const out = [];
  const [{ started }] = (await w.query<{ started: string }>(sql`select min(started_at)::text as started from sync.runs`)) as [{ started: string }];
  for (const { t, c } of columns) {
    const [r] = await w.query<{ max: string | null; min: string | null; ahead: boolean | null; before: boolean | null }>(
      sql.raw(`select max("${c}")::text as max, min("${c}")::text as min, max("${c}") > clock_timestamp() as ahead, min("${c}") < timestamptz '${started}' - interval '1 second' as before from ${t}`),
    );
    if (r!.max !== null) out.push({ column: `${t}.${c}`, max: r!.max, min: r!.min, ahead: r!.ahead === true, before: r!.before === true });
  }
  return out;
}

/** Every `expires_at` column: how far past the server's clock its latest value lies, in ms. */
async function expiries(w: Warehouse): Promise<{ column: string; aheadMs: number }[]> {
  const columns = await w.query<{ t: string }>(sql`
    select table_schema || '.' || table_name as t from information_schema.columns
    where table_schema = 'sync' and column_name = 'expires_at' and data_type = 'timestamp with time zone' order by 1`);
  const out = [];
  for (const { t } of columns) {
    const [r] = await w.query<{ ahead: number | null }>(sql.raw(`select (extract(epoch from max(expires_at) - clock_timestamp()) * 1000)::float8 as ahead from ${t}`));
    if (r!.ahead !== null) out.push({ column: `${t}.expires_at`, aheadMs: r!.ahead });
  }
  return out;
}

/** The budget records' own instants (epoch ms: observed, window, reset, blocked, leases), against the server's clock. */
async function budgetInstants(w: Warehouse): Promise<{ bucket: string; field: string; aheadMs: number }[]> {
  const rows = await w.query<{ bucket: string; record: { state: Record<string, unknown>; leases: Record<string, number> }; now_ms: number }>(
    sql`select bucket, record, (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms from sync.rate_budgets`,
  );
  const out = [];
  for (const r of rows) {
    for (const [field, v] of Object.entries(r.record.state)) if (field.endsWith('AtMs') || field === 'windowFromMs' || field === 'blockedUntilMs') out.push({ bucket: r.bucket, field, aheadMs: Number(v) - r.now_ms });
    for (const [id, v] of Object.entries(r.record.leases)) out.push({ bucket: r.bucket, field: `lease ${id}`, aheadMs: Number(v) - r.now_ms });
  }
  return out;
}

describe.each([['+3d'], ['-3d']])('tesync sync under faketime %s, the warehouse on the right clock', (skew) => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 4, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  beforeAll(() => {
    const probe = spawnSync('faketime', ['-f', skew, process.execPath, '-e', 'process.stdout.write(String(Date.now()))'], { encoding: 'utf8' });
    expect(probe.status, `faketime is needed (Debian package faketime; .ci/run installs it): ${probe.error?.message ?? probe.stderr}`).toBe(0);
    expect(Math.abs(Number(probe.stdout) - Date.now())).toBeGreaterThan(2 * 86_400_000);
  });

  it('stores every time on the warehouse clock, and status ages it so', async () => {
    const env = commandEnv(fx.sim, { appKey, gatewayKey }, fx.databaseUrl, { LOG_LEVEL: 'warn', TE_REQUESTS_RETENTION_DAYS: '2' });
    const w = fx.warehouse;
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['sync'], env, { wrap: ['faketime', '-f', skew], timeoutMs: 120_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
    }
    const times = await storedTimes(w);
    expect(times.map((t) => t.column)).toEqual(expect.arrayContaining(['sync.resource_state.last_success_at', 'sync.resource_state.last_attempt_at', 'sync.runs.started_at', 'sync.requests.started_at', 'app.tokens.fetched_at', 'sync.upstream_bindings.bound_at']));
    expect(times.filter((t) => t.ahead), 'stored ahead of the warehouse clock').toEqual([]);
    expect(times.filter((t) => t.before), 'stored before the first run began').toEqual([]);

    // Instants meant to lie ahead lie ahead by their own span on the server's clock, not by the skew.
    const ahead = await expiries(w);
    expect(ahead.map((e) => e.column)).toEqual(expect.arrayContaining(['sync.rate_budgets.expires_at']));
    expect(ahead.filter((e) => e.aheadMs > RECORD_TTL_MS), 'expires_at further ahead than its span').toEqual([]);
    const instants = await budgetInstants(w);
    expect(instants.length).toBeGreaterThan(0);
    // A reset announced by the upstream lies at most its window ahead (the simulator's: a minute); a lease, a request timeout.
    expect(instants.filter((e) => e.aheadMs > 3600_000), 'a budget instant ahead of the server clock by more than an hour').toEqual([]);

    // Retention judged on the server's clock: the first sync's requests (two days old on the skewed clock ahead, by 3 days) are kept.
    const [{ runs }] = (await w.query<{ runs: number }>(sql`select count(distinct run_id)::int as runs from sync.requests`)) as [{ runs: number }];
    expect(runs, 'requests of both syncs kept under TE_REQUESTS_RETENTION_DAYS=2').toBe(2);

    // Status, on the right clock: the data was confirmed minutes ago, not days off.
    const status = await runCli(['status', '--json', '--max-unconfirmed', '1'], env, { timeoutMs: 60_000 });
    expect(status.code, status.stdout + status.stderr).toBe(0);
  }, patience(300_000));
});
