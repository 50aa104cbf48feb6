// Bad input and a hostile upstream: path parameters that would escape their route, links
// and redirects off the configured base, names full of quotes, SQL, control characters
// and emoji, and absurdly nested JSON. None of it reaches the wire or the database harmfully.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../sim/index.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';
import { recordFigure } from '../helpers/fault-figures.ts';

const HOSTILE = ['..', '.', '%2e%2e', '%2E%2E', 'a/b', '?x=1', '#', '', 'x'.repeat(10_000), '../../v1/internal/keys', 'a b', 'ä', 'tok\nen'];
const NAMES = [`O'Brien "Q" \\ Token`, `Robert'); DROP TABLE app.tokens;--`, 'Tab\there\u0007bell\u001b[31mred', 'Emoji 🚀🔥 ✨ 日本', '<script>alert(1)</script>'];

const envelope = (data: unknown, count?: number) => JSON.stringify({ data, meta: { servedAt: new Date().toISOString(), asOf: '2026-06-30T00:00:00.000Z', ...(count === undefined ? {} : { count }) } });
const log = createTestLogger([], 'warn');

describe('hostile upstream', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 404 });

  it('hostile slugs and chart keys never reach the wire; hostile names are stored verbatim', async () => {
    const good = fx.sim.data.appTokens()[0]!;
    const tokens = [
      { ...good },
      ...HOSTILE.map((slug, i) => ({ slug, displayName: `hostile ${i}`, symbol: 'H', coverage: { snapshot: true, metricHistory: true, charts: true } })),
      ...NAMES.map((displayName, i) => ({ slug: `named-${i}`, displayName, symbol: `N${i}`, coverage: {} })),
    ];
    fx.sim.resetRequests();
    fx.sim.script('/api/v1/tokens', [{ status: 200, body: envelope(tokens) }]);
    const charts = HOSTILE.map((key) => ({ key, title: 'x', freshness: 'fresh', rowCount: 1, dataEndpoint: `/api/v1/tokens/${good.slug}/charts/${key}` }));
    fx.sim.script(`/api/v1/tokens/${good.slug}/charts`, [{ status: 200, body: envelope(charts) }]);
    const run = await fx.sync(log.logger, {}, ['app']);
    expect(run.status).not.toBe('failed');
    // Only well-formed, documented paths went out.
    for (const r of fx.sim.requests) {
      expect(r.path).toMatch(/^\/api\/v1\/(metrics|tokens|screener)(\/[a-z0-9-]+(\/(charts(\/[a-z0-9-]+)?|metrics\/history))?)?(\?[a-z=&%0-9-]*)?$/);
    }
    const stored = await fx.warehouse.query<{ slug: string; display_name: string }>(sql`select slug, display_name from app.tokens where slug like 'named-%' order by slug`);
    expect(stored.map((r) => r.display_name)).toEqual(NAMES);
    // The table the SQL-ish name talks about is still there.
    const [t] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.tokens`);
    expect(t!.n).toBeGreaterThan(NAMES.length);
    const [partial] = await fx.warehouse.query<{ status: string }>(sql`select status from sync.resource_state where source = 'app' and resource = 'tokens'`);
    expect(partial!.status).toBe('partial');
    recordFigure('hostile.params', { tried: HOSTILE.length * 2, reachedWire: 0 });
    recordFigure('hostile.names', { tried: NAMES.length, storedVerbatim: NAMES.length });
  });

  it('a redirect off the base URL is not followed, and links off the base are not requested', async () => {
    fx.sim.resetRequests();
    const slug = fx.sim.data.appTokens()[0]!.slug;
    fx.sim.script(`/api/v1/tokens/${slug}/charts`, [
      { status: 200, body: envelope([{ key: 'evil', dataEndpoint: 'http://127.0.0.2:1/steal' }, { key: 'inner', href: '/v1/internal/keys' }]) },
    ]);
    fx.sim.script('/api/v1/screener', [{ status: 302, headers: { location: 'http://127.0.0.2:1/screener' } }]);
    const run = await fx.sync(log.logger, {}, ['app'], { full: true });
    expect(run.stats.failures.some((f) => f.resource === 'screener')).toBe(true);
    expect(fx.sim.requests.some((r) => r.path.includes('internal'))).toBe(false);
    // The chart keys were fine: their data came from the documented path, not the links.
    expect(fx.sim.requests.some((r) => r.path === `/api/v1/tokens/${slug}/charts/evil`)).toBe(true);
  });

  it('deeply nested JSON is kept or refused cleanly, never crashing the run', async () => {
    const slug = fx.sim.data.appTokens()[0]!.slug;
    const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    fx.sim.script(`/api/v1/tokens/${slug}`, [{ status: 200, body: `{"data":{"token":{"slug":"${slug}"},"extra":${deep}},"meta":{}}` }]);
    const run = await fx.sync(log.logger, {}, ['app'], { full: true });
    expect(run.status).not.toBe('failed');
    const [state] = await fx.warehouse.query<{ status: string }>(sql`select status from sync.resource_state where source = 'app' and resource = ${`token/${slug}/snapshot`}`);
    expect(['ok', 'invalid', 'failed']).toContain(state!.status);
    recordFigure('hostile.deepJson', { depth: 20_000, resourceStatus: state!.status });
  });
});

describe('deletions are never inferred from failure', () => {
  const fx = useSimAndWarehouse({ tokens: 5, historyDays: 5, chartsPerToken: 1, seed: 505 });
  beforeAll(async () => {
    const run = await fx.sync(log.logger, {}, ['app']);
    expect(run.status).toBe('succeeded');
  });

  const delisted = async () => (await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.tokens where delisted_at is not null`))[0]!.n;

  it.each([
    ['fails outright', () => [{ status: 500, code: 'internal_error' }, { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }]],
    ['comes back short of meta.count', (s: Simulator) => [{ status: 200, body: envelope(s.data.appTokens().slice(0, 2), 5) }]],
    ['has an unreadable item', (s: Simulator) => [{ status: 200, body: envelope([...s.data.appTokens().slice(0, 2), { nope: true }]) }]],
    ['comes back empty', () => [{ status: 200, body: envelope([], 0) }]],
    ['is not a list', () => [{ status: 200, body: envelope({ tokens: 'soon' }) }]],
  ])('a token list that %s delists nothing', async (_what, answers) => {
    fx.sim.script('/api/v1/tokens', (answers as (s: Simulator) => never[])(fx.sim));
    await fx.sync(log.logger, {}, ['app'], { full: true });
    expect(await delisted()).toBe(0);
  });

  it('while a whole list that lacks a token does delist it', async () => {
    fx.sim.script('/api/v1/tokens', [{ status: 200, body: envelope(fx.sim.data.appTokens().slice(1), 4) }]);
    await fx.sync(log.logger, {}, ['app']);
    expect(await delisted()).toBe(1);
    recordFigure('deletions.fromFailure', { failureShapesTried: 5, tokensWronglyDelisted: 0 });
  });
});
