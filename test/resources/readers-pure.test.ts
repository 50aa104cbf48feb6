// Resources' pure parts, with no IO: what they are handed (the payload, the state, what the
// warehouse knows, what came back) to what they return. The engine's sending and asking are
// tested apart (test/engine/fetch/reader.test.ts); the sync tests run them together.
import { describe, expect, it } from 'vitest';
import type { Got, Outcome, ReadInput, SyncSettings } from '../../src/engine/kit/types.ts';
import { ProblemError } from '../../src/lib/errors.ts';
import { appBundleJob } from '../../src/resources/app/bundle.ts';
import { appChartsJob } from '../../src/resources/app/charts.ts';
import { storedAppCharts } from '../../src/resources/app/knows/charts.ts';
import { archivedBody } from '../../src/resources/gateway/knows/archived-body.ts';
import { fingerprint, gatewayOpenapiJob } from '../../src/resources/gateway/openapi.ts';
import { gatewayTokensJob } from '../../src/resources/gateway/tokens.ts';
import type { ResourceStateRow } from '../../src/store/books/resource-state.ts';

const settings = { full: false, appBundles: true, gatewayChartTimeframes: ['30d'] } as unknown as SyncSettings;
function input<P>(payload: P, o: { state?: Partial<ResourceStateRow>; known?: ReadInput['known'] } = {}): ReadInput<P> {
  return { payload, state: o.state as ResourceStateRow | undefined, known: o.known ?? {}, settings, runId: 'run-1', now: () => new Date('2026-02-01T00:00:00Z') };
}
const problem = (status: number, code: string) => new ProblemError({ status, code, scope: status === 403 ? 'research' : undefined, path: '/api/v1/tokens/aurora/full', sha256: 'abc', extensions: {} } as never);

describe('app.bundle', () => {
  it('asks its route with 401/402/403 as answers, and reads such an answer into the bundle\'s status', () => {
    const i = input({ slug: 'aurora' });
    const [ask] = appBundleJob.reader.asks(i);
    expect(ask).toMatchObject({ route: 'app.bundle', params: { slug: 'aurora' }, answers: { statuses: [401, 402, 403] } });
    const got: Got = { ask: ask!, problem: problem(403, 'missing_scope'), incremental: false };
    const out = appBundleJob.reader.read(i, [got]) as Outcome;
    expect(out).toMatchObject({ status: 'missing_scope', details: { status: 'missing_scope', missingScope: 'research', problemCode: 'missing_scope' } });
    // The refusal's row keeps what an earlier fetch stored, linked to the answer's archived body.
    expect(out.writes![0]).toMatchObject({ keep: ['summary', 'payload', 'asOf', 'freshness'], from: { path: '/api/v1/tokens/aurora/full', sha256: 'abc' } });
  });
});

describe('app.charts', () => {
  it('asks what the warehouse stored only for its unchanged plan, and plans every stored chart from it', () => {
    expect(appChartsJob.knows).toBeUndefined();
    expect(appChartsJob.unchanged!.knows!({ slug: 'aurora' }, undefined)).toEqual([storedAppCharts.ask('aurora')]);
    const plan = appChartsJob.unchanged!.plan(input({ slug: 'aurora' }, { known: { storedAppCharts: [{ key: 'fees', freshness: 'fresh', rowCount: 3 }] } }));
    expect(plan.items).toEqual([{ slug: 'aurora', chartKey: 'fees', link: null, marker: expect.any(String) }]);
  });
});

describe('gateway.tokens', () => {
  it('plans the listed tokens it stored, delisted ones left out, under the marker of its last whole list', () => {
    const asOf = new Date('2026-01-31T12:00:00Z');
    const plan = gatewayTokensJob.unchanged!.plan(
      input({}, { state: { asOf }, known: { storedGatewayTokens: [{ slug: 'a', symbol: 'A', delisted: false }, { slug: 'b', symbol: 'B', delisted: true }] } }),
    );
    expect(plan.items).toEqual([{ slug: 'a', marker: asOf.toISOString() }]);
  });
});

describe('gateway.openapi', () => {
  const doc = (paths: Record<string, unknown>, version = '1.0.0') => ({ openapi: '3.1.0', info: { version }, paths });
  const response = (body: unknown, sha256: string) => ({ path: '/openapi-product.json', sha256, body }) as never;

  it('asks the previous copy\'s body only when its state kept no fingerprint of it', () => {
    expect(gatewayOpenapiJob.knows!({}, undefined)).toEqual([]);
    expect(gatewayOpenapiJob.knows!({}, { hash: 'h1', details: {} } as ResourceStateRow)).toEqual([archivedBody.ask({ source: 'gateway', path: '/openapi-product.json', sha256: 'h1' })]);
    expect(gatewayOpenapiJob.knows!({}, { hash: 'h1', details: { fingerprint: fingerprint(doc({})) } } as unknown as ResourceStateRow)).toEqual([]);
  });

  it('a changed document: the change recorded and said in the log, the paths added and removed', () => {
    const before = doc({ '/v1/tokens': { get: {} }, '/v1/old': { get: {} } });
    const after = doc({ '/v1/tokens': { get: {} }, '/v1/new': { get: {} } }, '1.1.0');
    const i = input({}, { state: { hash: 'h1', details: {} }, known: { archivedBody: before } });
    const [ask] = gatewayOpenapiJob.reader.asks(i);
    expect(ask).toMatchObject({ route: 'gateway.openapi', document: true });
    const out = gatewayOpenapiJob.reader.read(i, [{ ask: ask!, response: response(after, 'h2'), incremental: false }]) as Outcome;
    expect(out).toMatchObject({ status: 'ok', reported: 'changed', freshness: '1.1.0' });
    expect(out.notes).toEqual([expect.objectContaining({ level: 'warn', msg: 'gateway contract changed', fields: expect.objectContaining({ added: ['/v1/new'], removed: ['/v1/old'] }) })]);
    expect(out.writes![0]!.rows).toEqual([expect.objectContaining({ previousSha256: 'h1', sha256: 'h2', addedPaths: ['/v1/new'], removedPaths: ['/v1/old'] })]);
    // The same copy again: no change, nothing written.
    const same = gatewayOpenapiJob.reader.read(input({}, { state: { hash: 'h2', details: {} } }), [{ ask: ask!, response: response(after, 'h2'), incremental: false }]) as Outcome;
    expect([same.reported, same.writes, same.notes]).toEqual([undefined, [], []]);
  });
});
