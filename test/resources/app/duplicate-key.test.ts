// A body that names a key twice could mean either value (RFC 8259 leaves it open), and a
// reader that keeps one of two equal values has still read a body it was not sure of: the
// resource is refused, not read with the last value as JSON.parse would. Neither value reaches
// a table, the resource is `invalid` with its body kept verbatim (as text: jsonb would collapse
// the two names), it is asked once (a retry would not change how it was written), and the rest
// of the run goes on. On both hosts; with two values (the simulator's `duplicatedKeys` form)
// and with the same value twice (served through a proxy that repeats a member as it was).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patience } from '../../helpers/patience.ts';
import { useSimAndWarehouse, type SimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');
const fixture = { tokens: 4, historyDays: 3, chartsPerToken: 1, gatewayKeys: [gatewayKey] };

async function stateOf(fx: SimAndWarehouse, source: string, resource: string) {
  const [state] = await fx.warehouse.query<{ status: string; last_error: string }>(sql`select status, last_error from sync.resource_state where source = ${source} and resource = ${resource}`);
  return state;
}

/** The bodies archived for `path` as refused: each must be text (jsonb would keep one name). */
async function refusedBodies(fx: SimAndWarehouse, path: string) {
  const bodies = await fx.warehouse.query<{ body: unknown; body_text: string }>(sql`select body, body_text from sync.raw_responses where path = ${path} and status = 'invalid'`);
  for (const b of bodies) expect(b.body).toBeNull();
  return bodies.map((b) => b.body_text);
}

const count = async (fx: SimAndWarehouse, table: string) => Number((await fx.warehouse.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${table}`)))[0]!.n);

describe('a key named twice with two values', () => {
  const fx = useSimAndWarehouse({ ...fixture, forms: { duplicatedKeys: { 'app.token': 'effectiveMarketCap', 'gateway.token': 'priceUsd' } } });

  it('a snapshot naming effectiveMarketCap twice: neither value stored, invalid, the body kept with both', async () => {
    const run = await fx.sync(log.logger, { appKey }, ['app']);
    const slug = fx.sim.data.appTokens()[0]!.slug;
    const path = `/api/v1/tokens/${slug}`;

    const state = await stateOf(fx, 'app', `token/${slug}/snapshot`);
    expect(state).toMatchObject({ status: 'invalid' });
    expect(state!.last_error).toMatch(/"effectiveMarketCap" appears twice/);
    expect(await fx.warehouse.query(sql`select 1 from app.token_snapshots where token_slug = ${slug}`)).toHaveLength(0);
    expect(await fx.warehouse.query(sql`select 1 from app.metric_values where token_slug = ${slug} and surface = 'snapshot'`)).toHaveLength(0);

    const bodies = await refusedBodies(fx, path);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.match(/"effectiveMarketCap":/g)).toHaveLength(2);
    expect(bodies[0]).toContain('"effectiveMarketCap":"0","effectiveMarketCap":');
    // Asked once: how a body is written does not change by asking again.
    expect(fx.sim.requests.filter((r) => r.path === path)).toHaveLength(1);

    // The rest of the run went on: the screener, whose rows name the key once each, is stored.
    expect(run.status).toBe('partial');
    expect(await count(fx, 'app.screener_rows')).toBe(fx.sim.data.appScreenerRows().length);
  }, patience(60_000));

  it('a gateway token page naming priceUsd twice: no page, no section stored, invalid, the body kept with both', async () => {
    fx.sim.resetRequests();
    const run = await fx.sync(log.logger, { gatewayKey }, ['gateway']);
    const slug = fx.sim.data.gatewayTokens()[0]!.slug;
    const path = `/v1/tokens/${slug}`;

    const state = await stateOf(fx, 'gateway', `token/${slug}/page`);
    expect(state).toMatchObject({ status: 'invalid' });
    expect(state!.last_error).toMatch(/"priceUsd" appears twice/);
    expect(await count(fx, 'gateway.token_pages')).toBe(0);
    expect(await count(fx, 'gateway.token_sections')).toBe(0);

    const bodies = await refusedBodies(fx, path);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.match(/"priceUsd":/g)).toHaveLength(2);
    expect(bodies[0]).toMatch(/"priceUsd":"0","priceUsd":"[0-9.]+"/);
    expect(fx.sim.requests.filter((r) => r.path === path)).toHaveLength(1);

    expect(run.status).toBe('partial');
    expect(await count(fx, 'gateway.tokens')).toBe(fx.sim.data.gatewayTokens().length);
  }, patience(60_000));
});

describe('a key named twice with the same value', () => {
  const fx = useSimAndWarehouse(fixture);
  /** Paths whose body the proxy serves with `member` named twice, its value text repeated. */
  const repeated = new Map<string, string>();
  let proxy: Server;
  let proxyUrl = '';

  beforeAll(async () => {
    proxy = createServer((req, res) => {
      void (async () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host'));
        const upstream = await fetch(`${fx.sim.url}${req.url}`, { headers, redirect: 'manual' });
        let body = await upstream.text();
        const member = repeated.get(req.url ?? '');
        if (member !== undefined && upstream.status === 200) body = repeatMember(body, member);
        const out = Object.fromEntries([...upstream.headers].filter(([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)));
        res.writeHead(upstream.status, out).end(body);
      })().catch(() => res.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => proxy?.close(r));
  });

  it('a snapshot and a gateway page naming a key twice with one value: refused all the same, the body kept as sent', async () => {
    const slug = fx.sim.data.appTokens()[0]!.slug;
    const gatewaySlug = fx.sim.data.gatewayTokens()[0]!.slug;
    const appPath = `/api/v1/tokens/${slug}`;
    const gatewayPath = `/v1/tokens/${gatewaySlug}`;
    repeated.set(appPath, 'effectiveMarketCap');
    repeated.set(gatewayPath, 'priceUsd');
    const run = await fx.sync(log.logger, { appKey, gatewayKey, env: { TE_APP_URL: proxyUrl, TE_GATEWAY_URL: proxyUrl } }, ['app', 'gateway']);

    const snapshot = await stateOf(fx, 'app', `token/${slug}/snapshot`);
    expect(snapshot).toMatchObject({ status: 'invalid' });
    expect(snapshot!.last_error).toMatch(/"effectiveMarketCap" appears twice/);
    expect(await fx.warehouse.query(sql`select 1 from app.token_snapshots where token_slug = ${slug}`)).toHaveLength(0);
    expect(await fx.warehouse.query(sql`select 1 from app.metric_values where token_slug = ${slug} and surface = 'snapshot'`)).toHaveLength(0);
    const [appBody] = await refusedBodies(fx, appPath);
    const mcap = /"effectiveMarketCap":(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})/.exec(appBody ?? '')?.[1];
    expect(mcap).toBeDefined();
    expect(appBody).toContain(`"effectiveMarketCap":${mcap},"effectiveMarketCap":${mcap}`);

    const page = await stateOf(fx, 'gateway', `token/${gatewaySlug}/page`);
    expect(page).toMatchObject({ status: 'invalid' });
    expect(page!.last_error).toMatch(/"priceUsd" appears twice/);
    expect(await fx.warehouse.query(sql`select 1 from gateway.token_pages where token_slug = ${gatewaySlug}`)).toHaveLength(0);
    const [gatewayBody] = await refusedBodies(fx, gatewayPath);
    expect(gatewayBody).toMatch(/"priceUsd":("[0-9.]+"),"priceUsd":\1[,}]/);

    for (const path of [appPath, gatewayPath]) expect(fx.sim.requests.filter((r) => r.path === path)).toHaveLength(1);
    // Every other token's snapshot and page, each naming its keys once, is stored.
    expect(run.status).toBe('partial');
    const snapshots = fx.sim.data.appTokens().filter((t) => fx.sim.data.appSnapshot(t.slug) !== null);
    expect(await count(fx, 'app.token_snapshots')).toBe(snapshots.length - 1);
    const pages = fx.sim.data.gatewayTokens().filter((t) => fx.sim.data.gatewayPage(t.slug) !== null);
    expect(await count(fx, 'gateway.token_pages')).toBe(pages.length - 1);
  }, patience(60_000));
});

/** `text` with the first member named `name` written twice, its value text repeated exactly. */
function repeatMember(text: string, name: string): string {
  const start = text.indexOf(`${JSON.stringify(name)}:`);
  if (start < 0) throw new Error(`no member ${name}`);
  let depth = 0;
  let end = text.indexOf(':', start) + 1;
  for (let inString = false; end < text.length; end++) {
    const c = text[end];
    if (inString) {
      if (c === '\\') end++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) break;
      depth--;
    } else if (c === ',' && depth === 0) break;
  }
  const member = text.slice(start, end);
  return `${text.slice(0, start)}${member},${text.slice(start)}`;
}
