// The follow-ups a settled job plans come from its children's declarations (fan-out.ts), read
// against the real catalog: a parent never names its children.
import { describe, expect, it } from 'vitest';
import { childrenOf, fanOut } from '../../../src/engine/job/fan-out.ts';
import { catalog } from '../../../src/resources/index.ts';
import { readTokenList } from '../../../src/engine/kit/lists.ts';
import { gatewayTokenItems } from '../../../src/resources/gateway/tokens.ts';
import type { SyncSettings } from '../../../src/engine/kit/types.ts';

const settings = (over: Partial<SyncSettings> = {}): SyncSettings => ({
  full: false,
  appBundles: true,
  historyOverlapDays: 3,
  historyFullRefetchMs: 7 * 86_400_000,
  historyFromParam: 'from',
  gatewayHistoryPeriods: ['30d', '365d'],
  gatewayChartTimeframes: ['30d'],
  markerMaxAgeMs: 86_400_000,
  batchSize: 2000,
  ...over,
});
const shown = (r: { followUps: { name: string; payload: unknown }[] }) => r.followUps.map((f) => `${f.name} ${JSON.stringify(f.payload)}`);

describe('fan-out from declarations', () => {
  const token = (slug: string, coverage = {}) => readTokenList([{ slug, coverage, freshness: { asOf: '2026-11-01T00:00:00Z' } }], 1).items[0]!.item;

  it('plans from the app token list only the routes the coverage flags say exist, token by token, in the API\'s order', () => {
    const planned = fanOut(childrenOf(catalog, 'app.tokens'), { items: [token('a', { snapshot: true, charts: true }), token('b', { metricHistory: true })] }, settings());
    expect(planned.followUps.map((f) => f.name)).toEqual(['app.screener', 'app.snapshot', 'app.charts', 'app.bundle', 'app.history', 'app.bundle']);
    expect(planned.followUps[1]!.payload).toEqual({ slug: 'a', marker: expect.any(String) });
    expect(planned.wholeList).toBeUndefined();
  });

  it('plans no bundle without an app key, and a whole list names only the kinds it plans', () => {
    const planned = fanOut(childrenOf(catalog, 'app.tokens'), { items: [token('a', { snapshot: true })], wholeUnder: 'token/' }, settings({ appBundles: false }));
    expect(shown(planned)).toEqual(['app.screener {}', expect.stringMatching(/^app\.snapshot \{"slug":"a","marker":/)]);
    expect(planned.wholeList).toEqual({ under: 'token/', groups: ['snapshot', 'history', 'charts'], planned: ['token/a/snapshot'] });
  });

  it('plans the gateway screener, contract and per-token work for every configured period', () => {
    expect(shown(fanOut(childrenOf(catalog, 'gateway.tokens'), { items: gatewayTokenItems(['a'], null) }, settings()))).toEqual([
      'gateway.screener {}',
      'gateway.openapi {}',
      'gateway.page {"slug":"a"}',
      'gateway.history {"slug":"a","period":"30d"}',
      'gateway.history {"slug":"a","period":"365d"}',
      'gateway.charts {"slug":"a"}',
    ]);
    expect(shown(fanOut(childrenOf(catalog, 'gateway.tokens'), { items: gatewayTokenItems(['a'], 'm1') }, settings({ gatewayHistoryPeriods: [] })))).toContain('gateway.page {"slug":"a","marker":"m1"}');
  });

  it('plans a job without `each` once, and nothing without a parent', () => {
    expect(shown(fanOut(childrenOf(catalog, 'app.metrics'), undefined, settings()))).toEqual(['app.tokens {}']);
    expect(childrenOf(catalog, 'app.chart')).toEqual([]);
  });
});
