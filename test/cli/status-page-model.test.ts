// The status page's pure parts: thresholds from the schedules, the view model (which group is
// overdue and why, failures by cause, the budget), the HTML (every upstream string escaped,
// the one script the Content-Security-Policy allows), and which refused body is a resource's.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PAGE_CSP, esc, renderPage } from '../../src/runners/metrics/page-html.ts';
import { buildPageModel, type PageData } from '../../src/runners/metrics/page-model.ts';
import { pageThresholds, scheduleOfGroup, scheduleRoundMs } from '../../src/runners/metrics/page-thresholds.ts';
import { pageUrl, serveHost, servePort } from '../../src/cli/status-serve.ts';
import { soleRefusedBody } from '../../src/store/read/failure-bodies.ts';
import type { GroupChecks, GroupStatus } from '../../src/store/read/status.ts';

const now = new Date('2026-11-24T12:00:00Z');
const schedules = { catalog: '0 */6 * * *', screener: '5 * * * *', 'token-data': '30 2 * * *', bundles: null, export: '15 0 * * *' };
const config = { schedules, scheduleTz: 'UTC', exportDir: undefined };
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>';

const checks = (over: Partial<GroupChecks> = {}): GroupChecks => ({
  checked: 3,
  delisted: 0,
  retired: 0,
  oldestData: { resource: 'token/aave/history', token: 'aave', at: new Date('2026-11-23T00:00:00Z'), clock: 'newest history point', confirmedAt: new Date('2026-11-24T11:00:00Z') },
  leastConfirmed: { resource: 'token/aave/history', token: 'aave', at: new Date('2026-11-24T11:00:00Z') },
  stalestConfirmedAt: new Date('2026-11-24T11:00:00Z'),
  neverConfirmed: 0,
  ...over,
});
const group = (over: Partial<GroupStatus>): GroupStatus => ({
  source: 'app',
  group: 'history',
  resources: 3,
  ok: 3,
  failing: 0,
  dataAsOf: null,
  newestPointAt: new Date('2026-11-23T00:00:00Z'),
  freshness: 'fresh 3',
  lastChangedAt: null,
  lastConfirmedAt: new Date('2026-11-24T11:00:00Z'),
  stalestConfirmedAt: new Date('2026-11-24T11:00:00Z'),
  unconfirmed: 0,
  statuses: { ok: 3 },
  failures: [],
  lastError: null,
  checks: checks(),
  coverage: null,
  ...over,
});

function data(over: Partial<PageData> = {}): PageData {
  return {
    now,
    warehouse: 'Postgres at 127.0.0.1:5432/tesync',
    servedBy: 'tesync status --serve',
    refreshSeconds: 15,
    groups: [group({})],
    thresholds: pageThresholds(config, now.getTime()),
    runs: [],
    events: [],
    budget: { buckets: [], note: null },
    windows: [],
    failing: { resources: [], total: 0 },
    queues: null,
    queuesNote: 'no worker',
    notifications: { recent: [], dead: [], pending: 0 },
    notificationsNote: null,
    notifyEndpoints: [],
    ...over,
  };
}

describe('thresholds', () => {
  it('two rounds of the schedule that walks the group; a day more for the data', () => {
    expect(scheduleOfGroup('screener')).toBe('screener');
    expect(scheduleOfGroup('tokens')).toBe('catalog');
    expect(scheduleOfGroup('history')).toBe('token-data');
    expect(scheduleRoundMs('5 * * * *', 'UTC', now.getTime())).toBe(3600_000);
    expect(scheduleRoundMs('0 9 * * 1-5', 'UTC', now.getTime())).toBe(3 * 86_400_000);
    const t = pageThresholds(config, now.getTime());
    expect(t('screener')).toEqual({ maxUnconfirmedHours: 2, maxAgeHours: 26, minCoveragePct: 100, basis: '2 rounds of TE_SCHEDULE_SCREENER (5 * * * *, every 1h at most)' });
    expect(t('history')).toMatchObject({ maxUnconfirmedHours: 48, maxAgeHours: 72 });
    expect(t('tokens')).toMatchObject({ maxUnconfirmedHours: 12, maxAgeHours: 36 });
    expect(t('bundle')).toEqual({ maxUnconfirmedHours: null, maxAgeHours: null, minCoveragePct: 100, basis: 'no schedule (TE_SCHEDULE_BUNDLES off)' });
  });

  it('--max-age and --max-unconfirmed set them for every group', () => {
    const t = pageThresholds(config, now.getTime(), { maxAgeHours: 24 });
    expect(t('screener')).toMatchObject({ maxAgeHours: 24, maxUnconfirmedHours: 2, basis: '--max-age 24; otherwise 2 rounds of TE_SCHEDULE_SCREENER (5 * * * *, every 1h at most)' });
    expect(pageThresholds(config, now.getTime(), { maxAgeHours: 24, maxUnconfirmedHours: 6 })('bundle')).toEqual({ maxAgeHours: 24, maxUnconfirmedHours: 6, minCoveragePct: 100, basis: '--max-age 24, --max-unconfirmed 6' });
  });
});

describe('buildPageModel', () => {
  it('a group within its thresholds is on time; one past them says which resource lags, how old, by which clock', () => {
    const old = group({ checks: checks({ oldestData: { resource: 'token/zeta/history', token: 'zeta', at: new Date('2026-11-01T00:00:00Z'), clock: 'newest history point', confirmedAt: new Date('2026-11-24T11:00:00Z') } }) });
    const today = checks({ oldestData: { resource: 'screener', token: null, at: new Date('2026-11-24T00:00:00Z'), clock: 'upstream asOf', confirmedAt: new Date('2026-11-24T11:00:00Z') } });
    const m = buildPageModel(data({ groups: [group({ group: 'screener', checks: today }), old] }));
    expect(m.groups[0]).toMatchObject({ name: 'app.screener', state: 'on time', tone: 'ok', dataLimit: '26h', confirmedLimit: '2h', reasons: [] });
    expect(m.groups[1]).toMatchObject({ name: 'app.history', state: 'overdue', tone: 'bad', dataOver: true, confirmedOver: false, lagging: 'token/zeta/history' });
    expect(m.groups[1]!.reasons).toEqual([
      'data of token zeta is 23.5d old by its newest history point, 2026-11-01 00:00 UTC (more than its threshold of 72h); upstream says fresh 3; tesync last confirmed it 60m ago',
    ]);
    expect(m.summary.find((s) => s.label === 'overdue')).toEqual({ label: 'overdue', value: '1', tone: 'bad' });
  });

  it('a group holding less than its lists promise is not on time: incomplete once a walk of it has ended, else a walk under way', () => {
    const short = { expected: 200, covered: 47, missing: 153, notOffered: 0, listChangedAt: now, missingNamed: [{ resource: 'token/a/snapshot', why: 'never fetched' }] };
    const m = buildPageModel(
      data({
        groups: [
          group({ group: 'snapshot', coverage: { ...short, walkedSince: true } }),
          group({ group: 'history', coverage: { ...short, walkedSince: false } }),
          group({ group: 'charts', coverage: { ...short, covered: 200, missing: 0, missingNamed: [], walkedSince: true } }),
        ],
      }),
    );
    expect(m.groups[0]).toMatchObject({ state: 'incomplete', tone: 'bad', coverage: '47/200 (23.5%)', coverageOver: true });
    expect(m.groups[0]!.reasons).toEqual(['holds 47/200 (23.5%) of what its lists promise (less than its minimum of 100%); missing: token/a/snapshot: never fetched and 152 more']);
    expect(m.groups[1]).toMatchObject({ state: 'walk under way', tone: 'warn', coverageOver: true });
    expect(m.groups[2]).toMatchObject({ state: 'on time', coverage: '200/200', coverageOver: false });
    expect(m.summary.find((s) => s.label === 'incomplete')).toEqual({ label: 'incomplete', value: '2', tone: 'bad' });
  });

  it('the last notifications in words, each delivery by its endpoint\'s label, and the dead ones apart', () => {
    const event = { id: 'e1', type: 'custom_coverage_below', subject: 'coverage:app.snapshot', occurredAt: new Date('2026-11-24T11:00:00Z'), source: 'app', group: 'snapshot', runId: null, figures: { held: '47/200 (23.5%)', min_pct: 100, missing: 'token/a/snapshot: never fetched' } };
    const delivery = { endpoint: 'https://hooks.example.com#1a2b3c4d', attempts: 10, lastAttemptAt: new Date('2026-11-24T11:30:00Z'), lastHttpStatus: 500, lastError: 'answered 500', nextAttemptAt: null };
    const m = buildPageModel(data({ notifications: { recent: [{ ...event, deliveries: [{ ...delivery, status: 'dead' }] }], dead: [{ ...event, deliveries: [{ ...delivery, status: 'dead' }] }], pending: 2 }, notifyEndpoints: ['https://hooks.example.com#1a2b3c4d'] }));
    expect(m.notifications).toMatchObject({ pending: 2, endpoints: 'https://hooks.example.com#1a2b3c4d' });
    expect(m.notifications!.recent[0]).toMatchObject({ type: 'custom_coverage_below', tone: 'bad', text: 'tesync (Postgres at 127.0.0.1:5432/tesync): app.snapshot holds 47/200 (23.5%) of what its lists promise, below its minimum of 100%; missing: token/a/snapshot: never fetched' });
    expect(m.notifications!.dead[0]!.deliveries).toEqual([{ endpoint: 'https://hooks.example.com#1a2b3c4d', status: 'dead', tone: 'bad', detail: 'gave up after 10 attempts; the last answered 500, 30m ago' }]);
    const html = renderPage(m);
    expect(html).toContain('id="notify-dead"');
    expect(html).toContain('data-type="custom_coverage_below"');
  });

  it('failing resources by cause, each with its body or why it has none', () => {
    const r = { source: 'app', group: 'history', status: 'failed', type: 'ProblemError', code: 'bad', httpStatus: 422, bucket: 'app-public', lastError: HOSTILE, lastAttemptAt: now, consecutiveFailures: 2 };
    const m = buildPageModel(
      data({
        failing: {
          total: 3,
          resources: [
            { ...r, resource: 'token/a/history', bodyId: 7 },
            { ...r, resource: 'token/b/history', bodyId: null },
            { ...r, resource: 'token/c/history/365d', status: 'failed', type: 'UpstreamTimeoutError', code: null, httpStatus: null, bodyId: null },
          ],
        },
      }),
    );
    expect(m.causes.map((c) => [c.cause, c.count])).toEqual([
      ['ProblemError 422 bad', 2],
      ['UpstreamTimeoutError', 1],
    ]);
    expect(m.causes[0]!.items.map((i) => i.bodyHref)).toEqual(['/body/7', null]);
    expect(m.causes[1]!.items[0]!.bodyNote).toBe('no body kept (no answer, or a 5xx or 429)');
  });

  it('the budget now beside the last hour of requests', () => {
    const m = buildPageModel(
      data({
        budget: {
          note: null,
          buckets: [{ bucket: 'gateway', mode: 'metered', remaining: 40, limit: 120, inFlight: 2, waiters: 0, waitingUntilMs: now.getTime() + 30_000, reason: 'retry-after', windowMs: 10_000, windowKnown: true, cycleMs: 11_000, refillInMs: 30_000 }],
        },
        windows: [{ bucket: 'gateway', requests: 80, tooMany: 1, retryAfters: 1, retryAfterMs: 30_000, longestRetryAfterMs: 30_000, failed: 0, remaining: 40, limit: 120, lastAt: now }],
      }),
    );
    expect(m.buckets).toEqual([
      {
        bucket: 'gateway',
        tone: 'warn',
        mode: 'metered',
        remaining: '40 of 120',
        meter: { value: 40, max: 120 },
        inFlight: 2,
        held: 'retry-after until 2026-11-24 12:00:30 UTC (30s)',
        window: { requests: 80, tooMany: 1, retryAfters: '1 (30s in all, longest 30s)', failed: 0, lastSeen: '0s ago' },
      },
    ]);
  });
});

describe('renderPage', () => {
  it('escapes every string it is given; its one script is the one the policy allows', () => {
    const hostile = group({ source: HOSTILE, lastError: HOSTILE, freshness: HOSTILE });
    const html = renderPage(
      buildPageModel(
        data({
          warehouse: HOSTILE,
          groups: [hostile],
          runs: [{ id: 'r1', trigger: 'cli', schedule: null, status: 'failed', sources: [HOSTILE], startedAt: now, finishedAt: now, requests: 1, stats: { failures: [{ job: 'x', resource: HOSTILE, error: HOSTILE }] }, error: HOSTILE }],
          events: [{ kind: 'binding', at: now, source: 'app', event: 'rebound', fromUpstream: HOSTILE, toUpstream: HOSTILE, command: 'sync', host: HOSTILE }],
        }),
      ),
    );
    expect(html).not.toContain('<img');
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(html).toContain(esc(HOSTILE));
    expect(esc(`<a href="x" onclick='y'>&`)).toBe('&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(PAGE_CSP).toContain(`script-src 'sha256-${createHash('sha256').update(script).digest('base64')}'`);
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(PAGE_CSP).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(PAGE_CSP).toContain("default-src 'none'");
  });
});

describe('soleRefusedBody', () => {
  const bodies = [
    { id: 1, source: 'gateway', runId: 'r1', path: '/v1/tokens/aave/metrics/history?period=365d' },
    { id: 2, source: 'gateway', runId: 'r1', path: '/v1/tokens/aave-v2/charts' },
    { id: 3, source: 'app', runId: 'r1', path: '/api/v1/tokens/aave/charts' },
    { id: 4, source: 'gateway', runId: 'r2', path: '/v1/tokens/zeta' },
    { id: 5, source: 'gateway', runId: 'r2', path: '/v1/tokens/zeta/charts' },
  ];
  it('links the one body of its run, source and token; none when it cannot be told', () => {
    expect(soleRefusedBody({ source: 'gateway', resource: 'token/aave/history/365d', runId: 'r1' }, bodies)).toBe(1);
    expect(soleRefusedBody({ source: 'gateway', resource: 'token/zeta/page', runId: 'r2' }, bodies)).toBeNull();
    expect(soleRefusedBody({ source: 'gateway', resource: 'screener', runId: 'r1' }, bodies)).toBeNull();
    expect(soleRefusedBody({ source: 'app', resource: 'tokens', runId: 'r1' }, bodies)).toBe(3);
    expect(soleRefusedBody({ source: 'app', resource: 'tokens', runId: null }, bodies)).toBeNull();
  });
});

describe('status --serve: where it listens', () => {
  it('TE_METRICS_PORT unless --port; 127.0.0.1 unless --host', () => {
    expect(servePort(undefined, 9464)).toBe(9464);
    expect(servePort('0', 9464)).toBe(0);
    expect(() => servePort('70000', 9464)).toThrow('--port must be a whole number from 0 to 65535, not "70000"');
    expect(serveHost(undefined)).toBe('127.0.0.1');
    expect(serveHost('0.0.0.0')).toBe('0.0.0.0');
    expect(() => serveHost('http://x')).toThrow(/^--host needs an address/);
    expect(pageUrl('127.0.0.1', 9464)).toBe('http://127.0.0.1:9464/');
    expect(pageUrl('::1', 9464)).toBe('http://[::1]:9464/');
  });
});
