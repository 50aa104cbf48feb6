// Upstreams that move a route or go down for announced maintenance, end to end: simulator over
// real HTTP → tesync (in-process sync) → real Postgres.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimOptions, Simulator } from '../../sim/index.ts';
import { expectAppMirror } from '../helpers/app-mirror.ts';
import { expectGatewayMirror } from '../helpers/gateway-mirror.ts';
import { freshSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { startRecordingProxy } from '../helpers/recording-proxy.ts';

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
const DATA: SimOptions = { tokens: 6, historyDays: 20, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] };

let other: Server;
let otherUrl: string;
let otherHits = 0;

beforeAll(async () => {
  // Another host: any request reaching it is a leak.
  other = createServer((_req, res) => {
    otherHits++;
    res.end('{"data":{},"meta":{}}');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => other.close(r));
});
afterEach(() => {
  otherHits = 0;
});

/** A simulator with `options` over DATA and a warehouse, the case's own. */
const setUp = (options: Partial<SimOptions> = {}) => freshSimAndWarehouse({ ...DATA, ...options });

type RequestRow = { path: string; http_status: number | null; attempt: number; error: string | null; bucket: string };
const requestsOf = (t: TestWarehouse, like: string) =>
  t.warehouse.query<RequestRow>(sql`select path, http_status, attempt, error, bucket from sync.requests where path like ${like} order by started_at, id`);

describe('redirects', () => {
  it("a same-origin 307 on a chart's data (app and gateway): its points stored, both hops in sync.requests, the body archived under the route's path", async () => {
    const { sim, tw } = await setUp();
    const app = sim.data.appTokens().find((t) => t.coverage.charts)!.slug;
    const appChart = sim.data.appCharts(app)![0]!.key;
    const gw = sim.data.gatewayTokens()[0]!.slug;
    sim.redirect({ from: `/api/v1/tokens/${app}/charts/${appChart}`, status: 307 });
    sim.redirect({ from: `/v1/tokens/${gw}/charts/`, status: 307 });
    const log = createTestLogger([appKey, gwKey], 'info');
    const run = await syncOnce(sim, tw.warehouse, log.logger, { appKey, gatewayKey: gwKey }, ['app', 'gateway']);
    expect(run.status).toBe('succeeded');
    expect(run.stats.failed).toBe(0);
    await expectAppMirror(tw.warehouse, sim.data, { bundles: 'ok' });
    await expectGatewayMirror(tw.warehouse, sim.data);

    const appHops = await requestsOf(tw, `/api/v1/%tokens/${app}/charts/${appChart}%`);
    // The route moved to itself with another query: the hop is the same route, exactly.
    const own = appHops[0]!.path;
    expect(own.split('?')[0]).toBe(`/api/v1/tokens/${app}/charts/${appChart}`);
    expect(appHops.map((r) => [r.path, r.http_status, r.attempt])).toEqual([
      [own, 307, 1],
      [`${own}${own.includes('?') ? '&' : '?'}moved=1`, 200, 1],
    ]);
    expect(appHops[0]!.error).toBe(`redirect 307 followed to ${appHops[1]!.path}`);
    const gwHops = await requestsOf(tw, `/v1/%tokens/${gw}/charts/%`);
    expect(gwHops.filter((r) => r.http_status === 307).length).toBeGreaterThan(0);
    expect(gwHops.filter((r) => r.http_status === 307).length).toBe(gwHops.filter((r) => /[?&]moved=1$/.test(r.path)).length);
    expect(gwHops.every((r) => r.bucket === 'gateway')).toBe(true);
    // The archive knows the body by the route's own path: the rows' provenance points at it.
    const linked = await tw.warehouse.query<{ path: string }>(
      sql`select distinct r.path from app.chart_points p join sync.raw_responses r on r.id = p.raw_response_id where p.token_slug = ${app} and p.chart_key = ${appChart}`,
    );
    expect(linked.map((r) => r.path.split('?')[0])).toEqual([`/api/v1/tokens/${app}/charts/${appChart}`]);
    expect(log.lines().join('\n')).not.toContain(appKey);
  });

  it("a 302 of a chart's data to another host: nothing reaches it, the chart failed with 302 and the host only, the key in no log line", async () => {
    const { sim, tw } = await setUp();
    const gw = sim.data.gatewayTokens()[0]!.slug;
    sim.redirect({ from: `/v1/tokens/${gw}/charts/`, status: 302, to: otherUrl });
    const log = createTestLogger([appKey, gwKey], 'debug');
    const run = await syncOnce(sim, tw.warehouse, log.logger, { appKey, gatewayKey: gwKey }, ['gateway']);
    expect(otherHits).toBe(0);
    expect(run.status).toBe('partial');
    const failed = await tw.warehouse.query<{ resource: string; status: string; http_status: number; last_error: string }>(
      sql`select resource, status, http_status, last_error from sync.resource_state where status = 'failed' order by resource`,
    );
    expect(failed.length).toBeGreaterThan(0);
    // Exactly the charts redirected away: the token's other resources were mirrored.
    const redirected = new Set(sim.requests.filter((r) => r.status === 302).map((r) => r.path));
    expect(failed.length).toBeLessThanOrEqual(redirected.size);
    const host = new URL(otherUrl).host;
    for (const f of failed) {
      expect(f).toMatchObject({ status: 'failed', http_status: 302 });
      expect(f.resource).toMatch(new RegExp(`^token/${gw}/chart/`));
      expect(f.last_error).toContain(`redirect to ${host} not followed: off the base URL`);
      expect(f.last_error).not.toContain('/v1/tokens/' + gw + '/charts/?');
    }
    const all = JSON.stringify(await tw.warehouse.query(sql`select * from sync.requests`)) + JSON.stringify(failed) + log.lines().join('\n');
    expect(all).not.toContain(gwKey);
    expect(all).not.toContain(`${otherUrl}/`);
  });
});

/** A recording proxy in front of the simulator that answers `redirects` itself (by path and query as received) with a 307. */
async function recordingProxy(target: Simulator, redirects: Map<string, string>) {
  const proxy = await startRecordingProxy(target.port);
  for (const [path, location] of redirects) proxy.answers.set(path, { status: 307, headers: { Location: location, 'Content-Type': 'text/plain' }, body: `Redirecting to ${location}` });
  return proxy;
}

/** Forms of a token's path (`P` the API prefix, `s` the slug) a server might read otherwise: none is a route. */
const OFF_ROUTE = (P: string, s: string): string[] => [
  `${P}/internal./tokens`,
  `${P}/internal~/x`,
  `${P}/internal:8080/x`,
  `${P}/internal@x/x`,
  `${P}/internal+/x`,
  `${P}/tokens./x`,
  `${P}/%69nternal/tokens`,
  `${P}/%2569nternal/tokens`,
  `${P}/tokens/${s}/%2e%2e/%2e%2e/internal/tokens`,
  '/api/v1/tokens/x/%2e%2e/%2e%2e/y',
  `${P}/tokens/a%2Fb`,
  `${P}\\tokens\\${s}`,
  `${P}/Tokens/${s}`,
  `${P.toUpperCase()}/tokens/${s}`,
  `${P}/tokens//${s}`,
  `${P}/tokens/${s}/`,
  `${P}/tokens;v=2/${s}`,
  `${P}/moved/tokens/${s}`,
];

describe('a redirect to a path that is no route, exactly', () => {
  it('is never requested in a sync behind a recording proxy: no key off the route, each resource failed with 307 and the host only', async () => {
    const { sim, tw } = await setUp({ tokens: 8, historyDays: 5, chartsPerToken: 1 });
    // Keyed resources (the gateway's page shells, the app's bundles) and public ones (the app's snapshots), each moved to one form.
    const slots = [
      ...sim.data.gatewayTokens().map((t) => ({ own: `/v1/tokens/${t.slug}`, P: '/v1', slug: t.slug })),
      ...sim.data.appTokens().map((t) => ({ own: `/api/v1/tokens/${t.slug}/full`, P: '/api/v1', slug: t.slug })),
      ...sim.data.appTokens().filter((t) => t.coverage.snapshot).map((t) => ({ own: `/api/v1/tokens/${t.slug}`, P: '/api/v1', slug: t.slug })),
    ];
    const redirects = new Map(slots.map((x, i) => [x.own, OFF_ROUTE(x.P, x.slug)[i % OFF_ROUTE(x.P, x.slug).length]!]));
    expect(slots.length).toBeGreaterThanOrEqual(OFF_ROUTE('/v1', 'x').length);
    const proxy = await recordingProxy(sim, redirects);
    try {
      const log = createTestLogger([appKey, gwKey], 'debug');
      const run = await syncOnce(sim, tw.warehouse, log.logger, { appKey, gatewayKey: gwKey, env: { TE_APP_URL: proxy.url, TE_GATEWAY_URL: proxy.url } }, ['app', 'gateway']);
      expect(run.status).toBe('partial');

      // Every redirected resource asked once, and answered 307; no target of any of them asked.
      const asked = proxy.seen.map((x) => x.path);
      for (const own of redirects.keys()) expect(asked, own).toContain(own);
      const targets = new Set([...redirects.values()].map((l) => new URL(l, proxy.url).pathname));
      expect(asked.filter((p) => targets.has(p.split('?')[0]!) && !redirects.has(p))).toEqual([]);
      // ... not even one a WHATWG parser would read as a route (`\\` as `/`): no path was asked twice.
      expect(asked.filter((p, i) => asked.indexOf(p) !== i)).toEqual([]);
      // What the proxy saw is only routes of the seeds, exactly: the key went nowhere else.
      const route = /^\/(api\/v1\/(metrics|screener|tokens(\/[a-z0-9-]+(\/(full|charts(\/[a-z0-9-]+)?|metrics\/history))?)?)|v1\/(screener|tokens(\/[a-z0-9-]+(\/(charts(\/[a-z0-9-]+)?|metrics\/history))?)?)|openapi-product\.json)(\?|$)/;
      expect(proxy.seen.filter((x) => !route.test(x.path)).map((x) => x.path)).toEqual([]);
      for (const x of proxy.seen) if (x.authorization !== undefined) expect(x.path, 'keyed').toMatch(/^\/(v1\/|openapi-product\.json|api\/v1\/tokens\/[a-z0-9-]+\/full$)/);

      const failed = await tw.warehouse.query<{ resource: string; status: string; http_status: number; last_error: string }>(
        sql`select resource, status, http_status, last_error from sync.resource_state where http_status = 307 order by resource`,
      );
      expect(failed.length).toBe(redirects.size);
      const host = new URL(proxy.url).host;
      for (const f of failed) {
        expect(f.status).toBe('failed');
        expect(f.last_error).toMatch(new RegExp(`redirect to ${host.replace(/\./g, '\\.')} not followed: (off the route prefix|an unsafe path|not a route)`));
      }
      const told = JSON.stringify(failed) + JSON.stringify(await tw.warehouse.query(sql`select path, error from sync.requests`)) + log.lines().join('\n');
      for (const l of redirects.values()) if (!l.endsWith('/')) expect(told).not.toContain(l);
      expect(told).not.toContain(appKey);
      expect(told).not.toContain(gwKey);
      console.info(`off-route redirects: ${redirects.size} resources moved to ${OFF_ROUTE('/v1', 'x').length} forms, ${proxy.seen.length} requests seen by the proxy, 0 to a target, ${failed.length} resources failed with 307`);
    } finally {
      await proxy.close();
    }
  });
});

describe('an announced outage', () => {
  // The gateway's as long as an upstream's maintenance window may announce; the app's short.
  it.each([
    ['gateway', 25],
    ['app-public', 4],
  ] as const)('503 + Retry-After on %s for %i s in the middle of a sync of both sources: 0 requests to it inside the window, every resource mirrored, no attempt spent', async (bucket, SECONDS) => {
    // The app's outage begins after its twelfth request; the gateway's 35 or so requests would
    // often all be answered by then. Held to 8 a second (a limit the budget paces to, from the
    // reset it is told, without a 429), they go on through the outage.
    const busy: Partial<SimOptions> = bucket === 'app-public' ? { rateLimits: { gateway: { limit: 8, windowMs: 1000 } } } : {};
    const { sim, tw } = await setUp({ outage: { bucket, seconds: SECONDS, after: 12 }, latencyMs: [2, 10], ...busy });
    const log = createTestLogger([appKey, gwKey], 'info');
    // One attempt per request: a 503 that spent one would fail its resource.
    const run = await syncOnce(sim, tw.warehouse, log.logger, { appKey, gatewayKey: gwKey, env: { TE_MAX_ATTEMPTS: '1' } }, ['app', 'gateway']);
    const [w] = sim.outages;
    expect(w).toMatchObject({ bucket, seconds: SECONDS });
    // As tesync saw it: no request of the bucket was sent from the moment the first 503 had
    // been read until its Retry-After ran out, counted from the headers, which came somewhere
    // inside the request's duration: surely held until its start plus the Retry-After. A turn
    // taken before the headers were read took its start then too (the start is read as the
    // turn is granted), so the bound is the read itself, on tesync's one clock.
    const first = sql`(select started_at, started_at + duration_ms * interval '1 ms' as at, retry_after_ms from sync.requests where http_status = 503 order by started_at, id limit 1)`;
    const sent = await tw.warehouse.query<{ status: number; sent: string; first: string; until: string }>(sql`
      select r.http_status as status, r.started_at::text as sent, f.at::text as first, (f.started_at + f.retry_after_ms * interval '1 ms')::text as until
      from sync.requests r, ${first} f
      where r.bucket = ${bucket === 'app-public' ? 'app-public' : 'gateway'} and r.started_at > f.at and r.started_at < f.started_at + f.retry_after_ms * interval '1 ms'`);
    expect(sent).toEqual([]);
    // As the simulator saw it: what it answered inside the window (503) was on its way as the
    // window began. Every such answer is one tesync recorded, and sent before it had read the first.
    const [answered] = await tw.warehouse.query<{ n: number; late: number }>(
      sql`select count(*)::int as n, count(*) filter (where r.started_at > f.at)::int as late from sync.requests r, ${first} f where r.http_status = 503`,
    );
    const ofBucket = sim.requests.filter((r) => r.bucket === bucket);
    expect(answered).toEqual({ n: ofBucket.filter((r) => r.status === 503).length, late: 0 });
    expect(ofBucket.filter((r) => r.at >= w!.endsAt).length).toBeGreaterThan(0);
    // The outage fell in the middle of the sync: the other source was busy meanwhile.
    const meanwhile = sim.requests.filter((r) => r.bucket !== bucket && r.at > w!.startedAt && r.at < w!.endsAt).length;
    expect(meanwhile).toBeGreaterThan(0);

    expect(run.status).toBe('succeeded');
    expect(run.stats.failed).toBe(0);
    await expectAppMirror(tw.warehouse, sim.data, { bundles: 'ok' });
    await expectGatewayMirror(tw.warehouse, sim.data);
    const held = await tw.warehouse.query<{ http_status: number; retry_after_ms: number; problem_code: string }>(
      sql`select http_status, retry_after_ms, problem_code from sync.requests where http_status = 503 order by started_at, id`,
    );
    expect(held.length).toBeGreaterThanOrEqual(1);
    for (const h of held) expect(h).toMatchObject({ http_status: 503, problem_code: bucket === 'gateway' ? 'service-unavailable' : 'engine_data_unavailable' });
    expect(held[0]!.retry_after_ms).toBe(SECONDS * 1000);
    console.info(`outage of ${bucket} for ${SECONDS} s: ${sim.requests.length} requests, ${ofBucket.length} to the bucket, ${held.length} answered 503 (in flight as it began), 0 sent inside the window, ${meanwhile} to the other buckets meanwhile`);
  });
});
