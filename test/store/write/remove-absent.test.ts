// removeAbsent and absentKeys on Postgres: the stored rows of a set that a whole response no
// longer carries, told by an anti-join over one array per key column (a history's tens of
// thousands of rows are a few parameters); a window's set from its first value on; an empty
// set stated whole; a delisting table marked, not deleted.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { metricHistory, tokens } from '../../../src/schema/warehouse/app.ts';
import { gatewayChartPoints, gatewayChartSeries, gatewayTrendPoints } from '../../../src/schema/warehouse/gateway.ts';
import { keptMembers, wholeSet } from '../../../src/engine/kit/stated-set.ts';
import { SET_FROM, absentKeys, removeAbsent, removeKeys } from '../../../src/store/write/set-removal.ts';
import { upsertRows } from '../../../src/store/write/upsert.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const t0 = new Date('2026-01-02T00:00:00.000Z');
const meta = { fetchedAt: t0, asOf: null, freshness: null, runId: null, status: 'ok' };
const day = (n: number) => new Date(t0.getTime() + n * 86_400_000);

describe('removeAbsent on Postgres', () => {
  const w = useTestWarehouse();

  const history = (slug: string, stream: string, metric: string, n: number) => ({ tokenSlug: slug, stream, metric, ts: day(n), interval: '1d', value: String(n), unit: null, kind: null, ...meta });
  const count = async (q: string) => Number((await w.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${q}`)))[0]!.n);

  it('a set of thousands: exactly the rows the response no longer carries, in its scope only', async () => {
    const all = [];
    for (const stream of ['fees', 'burn']) for (const metric of ['a', 'b', 'c']) for (let n = 0; n < 1000; n++) all.push(history('x', stream, metric, n));
    await upsertRows(w.db, metricHistory, [...all, history('y', 'fees', 'a', 5)]);
    const kept = all.filter((r) => !(r.ts.getTime() === day(500).getTime() || (r.stream === 'burn' && r.metric === 'c')));
    const planned = await absentKeys(w.db, metricHistory, kept, { tokenSlug: 'x' });
    expect(planned.members).toBe(6000);
    expect(planned.absent).toHaveLength(6 + 999);
    // Keys as Postgres prints a JSON array of them, sorted: 500 days after t0 comes first.
    expect(planned.absent[0]).toBe('["x", "burn", "a", "2027-05-17T00:00:00+00:00"]');
    expect(await w.db.transaction((t) => removeAbsent(t as never, metricHistory, kept, { tokenSlug: 'x' }))).toBe(1005);
    expect(await count("app.metric_history where token_slug = 'x'")).toBe(kept.length);
    expect(await count("app.metric_history where token_slug = 'y'")).toBe(1);
    // The same rows again: nothing absent.
    expect((await absentKeys(w.db, metricHistory, kept, { tokenSlug: 'x' })).absent).toEqual([]);
  });

  it('an empty set stated whole removes the scope; a key the scope fixes whole removes nothing else', async () => {
    expect((await absentKeys(w.db, metricHistory, [], { tokenSlug: 'y' })).absent).toHaveLength(1);
    expect(await w.db.transaction((t) => removeAbsent(t as never, metricHistory, [], { tokenSlug: 'y' }))).toBe(1);
    expect(await count("app.metric_history where token_slug = 'y'")).toBe(0);
  });

  it("a window's set starts at its first value: what slid out before it stays", async () => {
    const point = (n: number) => ({ tokenSlug: 'x', period: '7d', seriesKey: 's', ts: day(n), value: String(n), payload: null, ...meta });
    await upsertRows(w.db, gatewayTrendPoints, [0, 1, 2, 3, 4, 5].map(point));
    const now = [2, 4, 5, 6].map(point);
    const scope = { tokenSlug: 'x', period: '7d', [SET_FROM]: { ts: day(2) } };
    expect((await absentKeys(w.db, gatewayTrendPoints, now, scope)).absent).toEqual(['["x", "7d", "s", "2026-01-05T00:00:00+00:00"]']);
    expect((await absentKeys(w.db, gatewayTrendPoints, now, scope)).members).toBe(4);
    await upsertRows(w.db, gatewayTrendPoints, now);
    expect(await w.db.transaction((t) => removeAbsent(t as never, gatewayTrendPoints, now, scope))).toBe(1);
    expect((await w.query<{ n: number }>(sql`select extract(day from ts)::int as n from gateway.trend_points order by ts`)).map((r) => r.n)).toEqual([2, 3, 4, 6, 7, 8]);
  });

  it("a catalog keeps what it names by some key columns; a chart's series stays while a timeframe has points of it", async () => {
    const point = (chartKey: string, timeframe: string, seriesKey: string) => ({ tokenSlug: 'z', chartKey, timeframe, ts: day(1), seriesKey, value: '1', payload: null, ...meta });
    await upsertRows(w.db, gatewayChartPoints, [point('c1', '30d', 's1'), point('c1', '90d', 's2'), point('c2', '30d', 's1')]);
    const catalog = keptMembers(gatewayChartPoints, { tokenSlug: 'z' }, true, [{ chartKey: 'c1' }]).replace!;
    expect((await absentKeys(w.db, gatewayChartPoints, [], catalog)).absent).toEqual(['["z", "c2", "30d", "2026-01-03T00:00:00+00:00", "s1"]']);
    expect(await w.db.transaction((t) => removeAbsent(t as never, gatewayChartPoints, [], catalog))).toBe(1);

    const series = (seriesKey: string) => ({ tokenSlug: 'z', chartKey: 'c1', seriesKey, label: null, render: null, declared: true, payload: null, ...meta });
    await upsertRows(w.db, gatewayChartSeries, [series('s1'), series('s2'), series('s3')]);
    // The 30d response carries s1 only: s2 stays while 90d has points of it, s3 (no points) goes.
    const stated = wholeSet(gatewayChartSeries, { tokenSlug: 'z', chartKey: 'c1' }, true).replace!;
    expect((await absentKeys(w.db, gatewayChartSeries, [series('s1')], stated)).absent).toEqual(['["z", "c1", "s3"]']);
    expect(await w.db.transaction((t) => removeAbsent(t as never, gatewayChartSeries, [series('s1')], stated))).toBe(1);
    await w.db.transaction((t) => removeAbsent(t as never, gatewayChartPoints, [], keptMembers(gatewayChartPoints, { tokenSlug: 'z', chartKey: 'c1' }, true, [{ timeframe: '30d' }]).replace!));
    expect((await absentKeys(w.db, gatewayChartSeries, [series('s1')], stated)).absent).toEqual(['["z", "c1", "s2"]']);
  });

  it('removeKeys removes what absentKeys found, in the scope only, by the keys as it gave them', async () => {
    const point = (n: number) => ({ tokenSlug: 'k', period: '30d', seriesKey: 's', ts: day(n), value: String(n), payload: null, ...meta });
    await upsertRows(w.db, gatewayTrendPoints, [0, 1, 2, 3].map(point));
    const scope = { tokenSlug: 'k', period: '30d' };
    const { absent } = await absentKeys(w.db, gatewayTrendPoints, [point(0), point(2)], scope);
    expect(absent).toHaveLength(2);
    // A key of another scope is not removed even when named.
    expect(await w.db.transaction((t) => removeKeys(t as never, gatewayTrendPoints, scope, [...absent, '["x", "7d", "s", "2026-01-02T00:00:00+00:00"]']))).toBe(2);
    expect((await w.query<{ n: number }>(sql`select extract(day from ts)::int as n from gateway.trend_points where token_slug = 'k' order by ts`)).map((r) => r.n)).toEqual([2, 4]);
    expect(await w.db.transaction((t) => removeKeys(t as never, gatewayTrendPoints, scope, []))).toBe(0);
  });

  it('a delisting table: the members not delisted, and those marked instead of deleted', async () => {
    const token = (slug: string) => ({ slug, displayName: null, symbol: null, imageUrl: null, coverageScreener: false, coverageSnapshot: false, coverageMetricHistory: false, coverageTrend: false, coverageCharts: false, coverageBacktests: false, firstSeenAt: t0, lastSeenAt: t0, delistedAt: null, payload: {}, ...meta });
    await upsertRows(w.db, tokens, ['a', 'b', 'c'].map(token));
    await w.db.transaction((t) => removeAbsent(t as never, tokens, [token('a'), token('b')], {}));
    expect(await absentKeys(w.db, tokens, [token('a')], {})).toEqual({ members: 2, absent: ['["b"]'] });
    expect(await count('app.tokens')).toBe(3);
  });
});
