// `tesync status`: how old the data is by its own clock (upstream's asOf, the newest history
// point), upstream's verdict, when tesync last confirmed it, the tables' sizes as sizes, and
// failing resources counted by cause. Run as the real CLI against warehouses synced from the
// simulator: data months old and marked stale fails `--max-age 24` and says why; data of
// today passes.
import { beforeAll, describe, expect, it } from 'vitest';
import { overMaxAge, overMaxUnconfirmed, type OverLimit } from '../../src/cli/status.ts';
import { formatCause, formatSizes, formatStatus } from '../../src/cli/status-format.ts';
import type { GroupChecks, GroupStatus } from '../../src/store/read/status.ts';
import { ANCHOR_DATE } from '../../sim/index.ts';
import { runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse, type SimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey } from '../helpers/services.ts';
import { commandEnv } from '../helpers/sync.ts';

const now = new Date('2026-11-24T12:00:00Z');
const checks = (over: Partial<GroupChecks> = {}): GroupChecks => ({
  checked: 5,
  delisted: 0,
  retired: 0,
  oldestData: { resource: 'token/aave/chart/tvl', token: 'aave', at: new Date('2026-11-24T00:00:00Z'), clock: 'upstream asOf', confirmedAt: new Date('2026-11-24T11:00:00Z') },
  leastConfirmed: { resource: 'token/aave/chart/tvl', token: 'aave', at: new Date('2026-11-24T10:00:00Z') },
  stalestConfirmedAt: new Date('2026-11-24T10:00:00Z'),
  neverConfirmed: 0,
  ...over,
});
const group = (over: Partial<GroupStatus>): GroupStatus => ({
  source: 'gateway',
  group: 'charts',
  resources: 5,
  ok: 2,
  failing: 3,
  dataAsOf: new Date('2026-11-24T00:00:00Z'),
  newestPointAt: null,
  freshness: 'fresh 5',
  lastChangedAt: new Date('2026-11-24T11:00:00Z'),
  lastConfirmedAt: new Date('2026-11-24T11:00:00Z'),
  stalestConfirmedAt: new Date('2026-11-24T10:00:00Z'),
  unconfirmed: 0,
  statuses: { ok: 2, failed: 3 },
  failures: [],
  lastError: null,
  checks: checks(),
  coverage: null,
  ...over,
});

describe('formatStatus', () => {
  it('lists each failing group by cause under the table', () => {
    const g = group({
      failures: [
        { status: 'failed', type: 'ProblemError', code: 'missing_scope', httpStatus: 403, resources: 2 },
        { status: 'failed', type: 'UpstreamTimeoutError', code: null, httpStatus: null, resources: 1 },
      ],
      lastError: 'ProblemError: GET /v1/x failed with 403 missing_scope',
    });
    const text = formatStatus('postgres://db', [g, group({ source: 'app', group: 'tokens', failing: 0, statuses: { ok: 5 } })], [], now);
    expect(text).toMatch(/source\s+group\s+resources\s+data time \(UTC\)\s+data age\s+upstream\s+confirmed/);
    expect(text).toContain('Failing resources by cause:\n  gateway.charts: 2 failed ProblemError 403 missing_scope, 1 failed UpstreamTimeoutError\n');
    expect(text).not.toContain('app.tokens:');
  });

  it('says nothing of causes when nothing fails', () => {
    expect(formatStatus('postgres://db', [group({ failing: 0, statuses: { ok: 5 } })], [], now)).not.toContain('by cause');
  });

  it('a failure recorded before the columns existed still counts', () => {
    expect(formatCause({ status: 'invalid', type: null, code: null, httpStatus: null, resources: 4 })).toBe('4 invalid unknown error');
  });

  it('shows the oldest data time, marking a newest history point, its age, the verdict and the confirmation', () => {
    const history = group({
      group: 'history',
      freshness: 'stale 5',
      checks: checks({ oldestData: { resource: 'token/aave/history', token: 'aave', at: new Date('2026-06-30T00:00:00Z'), clock: 'newest history point', confirmedAt: null }, neverConfirmed: 1 }),
    });
    expect(formatStatus('postgres://db', [history], [], now)).toMatch(/^gateway\s+history\s+5\s+2026-06-30 00:00\*\s+147\.5d\s+stale 5\s+2\.0h, 1 never\s+-\s+failed 3, ok 2$/m);
    // At 80 columns: the day only, the count left to the statuses.
    expect(formatStatus('postgres://db', [history], [], now, { width: 80 })).toMatch(/^gateway\.history\s+2026-06-30\*\s+147\.5d\s+2\.0h, 1 never\s+stale 5\s+failed 3, ok 2$/m);
  });

  it('counts the resources of delisted tokens in the statuses', () => {
    const text = formatStatus('postgres://db', [group({ statuses: { ok: 5 }, checks: checks({ checked: 4, delisted: 1 }) })], [], now, { width: 80 });
    expect(text).toMatch(/ ok 5, 1 delisted$/m);
  });

  it('an empty warehouse fails a check, and says so only when one was asked for', () => {
    expect(formatStatus('postgres://db', [], [], now, { over: [] })).toContain('Nothing synced yet: run `tesync sync`.\n\nOver the limit: nothing was synced.\n');
    expect(formatStatus('postgres://db', [], [], now)).not.toContain('Over the limit');
  });

  it('labels row counts that are estimates, and unknown ones', () => {
    const lines = formatSizes({
      schemas: [
        { schema: 'app', tables: 2, rows: 1_500_000, exact: false, unknown: 0, bytes: 300 * 1024 * 1024 },
        { schema: 'sync', tables: 1, rows: 0, exact: false, unknown: 1, bytes: 20 * 1024 * 1024 },
      ],
      tables: [
        { table: 'app.metric_history', schema: 'app', rows: 1_499_000, exact: false, bytes: 290 * 1024 * 1024 },
        { table: 'sync.raw_responses', schema: 'sync', rows: null, exact: false, bytes: 20 * 1024 * 1024 },
        { table: 'app.tokens', schema: 'app', rows: 1000, exact: true, bytes: 10 * 1024 * 1024 },
      ],
    });
    expect(lines[0]).toMatch(/rows: counted, or ~ estimated from Postgres's statistics for analyzed tables over 8\.0 MB; on disk: with indexes and TOAST/);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}app\s+2\s+~1,500,000\s+300 MB$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}sync\s+1\s+~0\s+20 MB {2}\(\+ 1 table not counted: too big to count now, never analyzed\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}app\.metric_history\s+~1,499,000\s+290 MB$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}sync\.raw_responses\s+\?\s+20 MB$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {4}app\.tokens\s+1,000\s+10 MB$/));
  });
});

describe('the checks', () => {
  const historyChecks = (at: string, confirmedAt = '2026-11-24T11:59:00Z') =>
    checks({ oldestData: { resource: 'token/ferrous/history', token: 'ferrous', at: new Date(at), clock: 'newest history point', confirmedAt: new Date(confirmedAt) } });

  it('--max-age judges the oldest data by its own clock, names its token, and not when tesync last confirmed it', () => {
    const old = group({ group: 'history', freshness: 'stale 5', lastConfirmedAt: new Date('2026-11-24T11:59:00Z'), checks: historyChecks('2026-06-30T00:00:00Z') });
    const [o] = overMaxAge([old, group({})], now, 24);
    expect(o).toMatchObject({ source: 'gateway', group: 'history', clock: 'newest history point', resource: 'token/ferrous/history', token: 'ferrous' });
    expect(o!.reason).toBe(
      'gateway.history: data of token ferrous is 147.5d old by its newest history point, 2026-06-30 00:00 UTC (more than --max-age 24h); upstream says stale 5; tesync last confirmed it 60s ago',
    );
    const chart = checks({ oldestData: { resource: 'token/aave/chart/tvl', token: 'aave', at: new Date('2026-11-22T00:00:00Z'), clock: 'upstream asOf', confirmedAt: null } });
    expect(overMaxAge([group({ freshness: null, checks: chart })], now, 24)[0]!.reason).toMatch(
      /^gateway\.charts: data of token aave \(token\/aave\/chart\/tvl\) is 2\.5d old by upstream's asOf, 2026-11-22 00:00 UTC \(more than --max-age 24h\); upstream gives no freshness verdict; tesync last confirmed it never$/,
    );
    const screener = checks({ oldestData: { resource: 'screener', token: null, at: new Date('2026-11-22T00:00:00Z'), clock: 'upstream asOf', confirmedAt: null } });
    expect(overMaxAge([group({ group: 'screener', checks: screener })], now, 24)[0]!.reason).toMatch(/^gateway\.screener: data is 2\.5d old by upstream's asOf/);
    expect(overMaxAge([group({})], now, 24)).toEqual([]);
  });

  it('a group whose resources are all delisted, not found or skipped has nothing to judge', () => {
    const gone = group({ checks: checks({ checked: 0, delisted: 5, oldestData: null, leastConfirmed: null, stalestConfirmedAt: null }) });
    expect(overMaxAge([gone], now, 24)).toEqual([]);
    expect(overMaxUnconfirmed([gone], now, 24)).toEqual([]);
  });

  it('a group upstream gives no data time is judged by when tesync last confirmed it', () => {
    const contract = (at: Date | null) =>
      group({ group: 'contract', dataAsOf: null, freshness: null, checks: checks({ checked: 1, oldestData: null, leastConfirmed: { resource: 'openapi', token: null, at }, neverConfirmed: at ? 0 : 1 }) });
    expect(overMaxAge([contract(new Date('2026-11-24T11:00:00Z'))], now, 24)).toEqual([]);
    const [o] = overMaxAge([contract(new Date('2026-11-23T06:00:00Z'))], now, 24);
    expect(o).toMatchObject({ clock: 'last confirmed', ageHours: 30, resource: 'openapi' });
    expect(o!.reason).toBe('gateway.contract: upstream gives no data time; judged by when tesync last confirmed openapi: 30.0h ago (more than --max-age 24h)');
    expect(overMaxAge([contract(null)], now, 24)[0]!.reason).toMatch(/confirmed openapi: never \(more than/);
  });

  it("--max-unconfirmed judges tesync's clock, and names the resource least recently confirmed, or never", () => {
    const old = group({ checks: checks({ oldestData: { resource: 'token/aave/chart/tvl', token: 'aave', at: new Date('2026-01-01T00:00:00Z'), clock: 'upstream asOf', confirmedAt: null } }) });
    expect(overMaxUnconfirmed([old], now, 24)).toEqual([]);
    const [o] = overMaxUnconfirmed([old], now, 1);
    expect(o).toMatchObject({ resource: 'token/aave/chart/tvl', token: 'aave', ageHours: 2 });
    expect(o!.reason).toBe('gateway.charts: token/aave/chart/tvl, the least recently confirmed resource, was confirmed by tesync 2.0h ago (more than --max-unconfirmed 1h)');
    const never = checks({ neverConfirmed: 2, leastConfirmed: { resource: 'token/zeta/chart/tvl', token: 'zeta', at: null } });
    expect(overMaxUnconfirmed([group({ checks: never })], now, 24)[0]!.reason).toBe('gateway.charts: never confirmed by tesync: token/zeta/chart/tvl and 1 more (2 of 5 resources)');
  });
});

describe('tesync status on warehouses synced from the simulator', () => {
  const appKey = canaryKey('app');
  const gatewayKey = canaryKey('gateway');
  const today = new Date().toISOString().slice(0, 10);
  const upstream = (o: { lastDate?: string; freshness: 'fresh' | 'stale' }) =>
    useSimAndWarehouse({ tokens: 4, historyDays: 10, chartsPerToken: 1, seed: 23, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey], ...o });
  // Upstream's data months old (the simulator's fixed calendar) and marked stale; and data of today.
  const old = upstream({ freshness: 'stale' });
  const fresh = upstream({ lastDate: today, freshness: 'fresh' });
  // When tesync confirmed it, as the report gives it: seconds ago on an idle machine, minutes
  // on a busy one (the syncs and the reports before this one take longer there).
  const AGO = '\\d+[sm]';
  // The old warehouse's sync, from before it started to after it ended (this machine's clock).
  let oldSynced: { from: number; to: number };
  const envOf = (w: SimAndWarehouse) => commandEnv(w.sim, { appKey, gatewayKey }, w.databaseUrl, { LOG_LEVEL: 'warn' });
  beforeAll(async () => {
    const synced = async (w: SimAndWarehouse) => {
      const from = Date.now();
      const r = await runCli(['sync'], envOf(w));
      return { r, from, to: Date.now() };
    };
    // Side by side: a simulator and a warehouse each.
    const [o, f] = await Promise.all([synced(old), synced(fresh)]);
    for (const { r } of [o, f]) expect(r.code, r.stderr).toBe(0);
    oldSynced = o;
  }, patience(180_000));

  it('data months old and marked stale: --max-age 24 exits 1 and says which group, how old, by which clock', async () => {
    const r = await runCli(['status', '--wide', '--max-age', '24'], envOf(old));
    expect(r.code, r.stderr).toBe(1);
    const days = (Date.now() - Date.parse(`${ANCHOR_DATE}T00:00:00Z`)) / 86_400_000;
    expect(days).toBeGreaterThan(30);
    // The table: data time, its age, upstream's verdict, when tesync confirmed it.
    expect(r.stdout).toMatch(/source\s+group\s+resources\s+data time \(UTC\)\s+data age\s+upstream\s+confirmed\s+held\s+statuses/);
    expect(r.stdout).toMatch(new RegExp(`^app\\s+history\\s+\\d+\\s+${ANCHOR_DATE} 00:00\\*\\s+\\d+\\.\\dd\\s+stale \\d+\\s+${AGO}\\s+\\d+\\/\\d+\\s+ok \\d+`, 'm'));
    // A screener has no verdict of its own: its rows' verdicts, counted.
    expect(r.stdout).toMatch(new RegExp(`^gateway\\s+screener\\s+1\\s+${ANCHOR_DATE} 00:00\\s+\\d+\\.\\dd\\s+stale \\d+\\s+${AGO}`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^gateway\\s+page\\s+\\d+\\s+${ANCHOR_DATE} 00:00\\s+\\d+\\.\\dd\\s+-\\s+${AGO}`, 'm'));
    // The reasons, one per group, with the clock each was judged by.
    // Every group but the OpenAPI document (no data time; confirmed seconds ago).
    expect(r.stdout).toMatch(/^Over the limit: 14 of 15 groups$/m);
    expect(r.stdout).toMatch(
      new RegExp(`^ {2}app\\.history: data of token [a-z-]+ is \\d+\\.\\dd old by its newest history point, ${ANCHOR_DATE} 00:00 UTC \\(more than --max-age 24h\\); upstream says stale \\d+; tesync last confirmed it ${AGO} ago$`, 'm'),
    );
    expect(r.stdout).toMatch(new RegExp(`^ {2}gateway\\.screener: data is \\d+\\.\\dd old by upstream's asOf, ${ANCHOR_DATE} 00:00 UTC`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^ {2}gateway\\.history: data of token [a-z-]+ \\(token/[a-z-]+/history/\\w+\\) is \\d+\\.\\dd old`, 'm'));
    expect(r.stdout).not.toMatch(/^ {2}gateway\.contract:/m);
    // Sizes as sizes, labelled.
    expect(r.stdout).toContain("Table sizes (rows: counted, or ~ estimated from Postgres's statistics for analyzed tables over 8.0 MB; on disk: with indexes and TOAST):");
    expect(r.stdout).toMatch(/^ {2}app\s+\d+\s+[\d,]+\s+\d[\d.]* (kB|MB)$/m);
    expect(r.stdout).toMatch(/^ {2}sync\s+\d+\s+[\d,]+\s+\d[\d.]* (kB|MB)$/m);
    expect(r.stdout).not.toContain('rows written');
    console.info(r.stdout);
  });

  it('the same data, judged by when tesync confirmed it, passes --max-unconfirmed 24', async () => {
    const r = await runCli(['status', '--max-unconfirmed', '24'], envOf(old));
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).not.toContain('Over the limit');
  });

  it('--json gives each group\'s clocks, the sizes and the reasons', async () => {
    const r = await runCli(['status', '--json', '--max-age', '24'], envOf(old));
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout) as {
      groups: { source: string; group: string; dataAsOf: string; newestPointAt: string | null; freshness: string | null; lastConfirmedAt: string }[];
      sizes: { schemas: { schema: string; rows: number; bytes: number }[]; tables: { table: string; rows: number; exact: boolean; bytes: number }[] };
      overLimit: OverLimit[];
    };
    const history = j.groups.find((g) => g.source === 'app' && g.group === 'history')!;
    expect(history.newestPointAt!.slice(0, 10)).toBe(ANCHOR_DATE);
    expect(history.freshness).toMatch(/^stale \d+$/);
    // Confirmed by that sync: between its start and its end.
    expect(Date.parse(history.lastConfirmedAt)).toBeGreaterThanOrEqual(oldSynced.from);
    expect(Date.parse(history.lastConfirmedAt)).toBeLessThanOrEqual(oldSynced.to);
    const over = j.overLimit.find((o) => o.group === 'history' && o.source === 'app')!;
    expect(over).toMatchObject({ clock: 'newest history point', at: `${ANCHOR_DATE}T00:00:00.000Z`, resource: expect.stringMatching(/^token\/[a-z-]+\/history$/), token: expect.any(String) });
    expect(over.ageHours).toBeGreaterThan(30 * 24);
    const metricHistory = j.sizes.tables.find((t) => t.table === 'app.metric_history')!;
    expect(metricHistory.exact).toBe(true);
    expect(metricHistory.rows).toBeGreaterThan(100);
    expect(metricHistory.bytes).toBeGreaterThan(8192);
    expect(j.sizes.schemas.map((s) => s.schema)).toEqual(['app', 'gateway', 'sync']);
  });

  it('data of today, marked fresh: --max-age 24 exits 0', async () => {
    const r = await runCli(['status', '--max-age', '24'], envOf(fresh));
    expect(r.code, r.stdout).toBe(0);
    // Not a terminal: 80 columns, the day only.
    expect(r.stdout).toMatch(new RegExp(`^app\\.history\\s+${today}\\*\\s+[\\d.]+[smh]\\s+${AGO}\\s+fresh \\d+\\s+ok \\d+$`, 'm'));
    for (const line of r.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(r.stdout).not.toContain('Over the limit');
    console.info(r.stdout);
  });
  it('ages are judged on the warehouse\'s clock: a status process 3 days ahead (faketime) still finds today\'s data fresh', async () => {
    const r = await runCli(['status', '--json', '--max-age', '24', '--max-unconfirmed', '1'], envOf(fresh), { wrap: ['faketime', '-f', '+3d'] });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { overLimit: OverLimit[] }).overLimit).toEqual([]);
    // The same process judges months-old data by the same clock: as old as it is, not 3 days older.
    const o = await runCli(['status', '--json', '--max-age', '24'], envOf(old), { wrap: ['faketime', '-f', '+3d'] });
    const over = (JSON.parse(o.stdout) as { overLimit: OverLimit[] }).overLimit.find((x) => x.group === 'history' && x.source === 'app')!;
    const truth = (Date.now() - Date.parse(`${ANCHOR_DATE}T00:00:00Z`)) / 3_600_000;
    expect(over.ageHours).toBeGreaterThan(truth - 1);
    expect(over.ageHours).toBeLessThan(truth + 24);
  });
});
