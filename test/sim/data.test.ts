import { describe, expect, it } from 'vitest';
import { SimData } from '../../sim/data.ts';
import { isCanonicalDecimal, significantDigits } from '../../sim/decimal.ts';

const params = { seed: 42, tokens: 12, historyDays: 120, chartsPerToken: 3 };

/** every decimal-looking string in a value */
function decimals(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string' && /^-?[\d.]+$/.test(v)) out.push(v);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) decimals(x, out);
  return out;
}

describe('the dataset', () => {
  it('is identical for the same seed and differs for another', () => {
    const a = new SimData(params).view(0);
    const b = new SimData(params).view(0);
    const c = new SimData({ ...params, seed: 43 }).view(0);
    const dump = (v: typeof a) =>
      JSON.stringify([
        v.appTokens(),
        v.appScreenerRows(),
        v.appTokens().map((t) => [v.appSnapshot(t.slug), v.appHistory(t.slug), v.appCharts(t.slug), v.researchBundle(t.slug)]),
        v.appCharts('aurora')?.map((ch) => v.appChartData('aurora', ch.key)),
        v.gatewayScreenerRows(),
        v.gatewayInsights(),
        v.gatewayTokens().map((t) => [v.gatewayPage(t.slug), v.gatewayTrend(t.slug, '30d'), v.gatewayCharts(t.slug)]),
        v.openapi(),
      ]);
    expect(dump(a)).toBe(dump(b));
    expect(dump(a)).not.toBe(dump(c));
    // names and coverage do not depend on the seed
    expect(c.appTokens().map((t) => [t.slug, t.coverage])).toEqual(a.appTokens().map((t) => [t.slug, t.coverage]));
  });

  it('keeps every number a canonical decimal string', () => {
    const v = new SimData(params).view(0);
    const all = [...decimals(v.appScreenerRows()), ...decimals(v.appHistory('aurora')), ...decimals(v.gatewayScreenerRows())];
    expect(all.length).toBeGreaterThan(1000);
    for (const d of all) expect(isCanonicalDecimal(d), d).toBe(true);
  });

  it('gives gateway decimals 25 to 32 significant digits, with negatives, a zero and a huge value', () => {
    const rows = new SimData(params).view(0).gatewayScreenerRows();
    const values = decimals(rows.map(({ windows, priceUsd, mcap, effMcap, effRatio, revAnnualized, multAnnualized, fcfMomentum }) => ({ windows, priceUsd, mcap, effMcap, effRatio, revAnnualized, multAnnualized, fcfMomentum })));
    for (const d of values) if (d !== '0') expect(significantDigits(d), d).toBeGreaterThanOrEqual(25);
    for (const d of values) expect(significantDigits(d), d).toBeLessThanOrEqual(32);
    expect(values.some((d) => d.startsWith('-'))).toBe(true);
    expect(rows.find((r) => r.slug === 'emberline')?.revAnnualized).toBe('0');
    expect(rows.find((r) => r.slug === 'emberline')?.multAnnualized).toBeNull();
    expect(rows.find((r) => r.slug === 'nihon-swap')?.mcap).toMatch(/^\d{24}\.\d+$/);
    expect(rows.find((r) => r.slug === 'glacier-lend')?.priceUsd).toBeNull();
  });

  it('has app values with nulls explained, and extra fields', () => {
    const rows = new SimData(params).view(0).appScreenerRows();
    const mvs = rows.flatMap((r) => [r.effectiveMarketCap, r.effectiveRatio, r.annualizedRevenue, ...Object.values(r.multiples), ...Object.values(r.revenues)]);
    const nulls = mvs.filter((m) => m.value === null);
    expect(nulls.length).toBeGreaterThan(0);
    for (const m of nulls) {
      expect(m.reason).toBeTruthy();
      expect(m.status).not.toBe('ok');
    }
    expect(mvs.some((m) => m.extras)).toBe(true);
    for (const m of mvs) if (m.value !== null) expect(significantDigits(m.value)).toBeLessThanOrEqual(19);
  });

  it('covers tokens unevenly', () => {
    const v = new SimData(params).view(0);
    const tokens = v.appTokens();
    expect(tokens.find((t) => t.slug === 'obrien-q')?.coverage.snapshot).toBe(false);
    expect(v.appSnapshot('obrien-q')).toBeNull();
    expect(v.appHistory('zuerich-yield')).toBeNull();
    expect(v.appCharts('bobby-tables')).toEqual([]);
    expect(v.appScreenerRows().some((r) => r.token.slug === 'rocket-fuel')).toBe(false);
    expect(v.gatewayTokens().some((t) => t.slug === 'rocket-fuel')).toBe(false);
    expect(v.appStreams('basalt-finance')).toEqual(['lending']);
    expect(v.appStreams('aurora')?.[0]).toBe('aggregate');
    expect(v.gatewayTrend('bobby-tables', '30d')).toBeNull();
    expect(v.gatewayTrend('basalt-finance', '180d')).toBeNull();
    expect(v.gatewayTrend('basalt-finance', '30d')?.times).toHaveLength(30);
  });

  it('makes the aggregate stream the sum of its components, and history as long as asked', () => {
    const v = new SimData(params).view(0);
    const docs = v.appHistory('aurora') ?? [];
    expect(docs.map((d) => d.stream)).toEqual(['aggregate', 'fees', 'buybacks']);
    for (const d of docs) {
      expect(d.rows).toHaveLength(120);
      expect(d.rows[0]?.date).toBe(v.firstDate);
      expect(d.rows.at(-1)?.date).toBe('2026-06-30');
    }
    expect(v.appHistoryPoints('aurora')).toHaveLength(3 * 120 * 7);
  });

  it('applies the documented epoch changes', () => {
    const store = new SimData(params);
    const e0 = store.view(0);
    const e1 = store.view(1);
    const ch = e1.epochChanges;
    expect(ch).toEqual(e0.epochChanges);
    expect(ch.delistedSlug).toBe('cobalt-dex');
    expect(e0.appToken('cobalt-dex')).not.toBeNull();
    expect(e1.appToken('cobalt-dex')).toBeNull();
    expect(e1.appScreenerRows().some((r) => r.token.slug === 'cobalt-dex')).toBe(false);
    expect(e1.gatewayTokens().some((t) => t.slug === 'cobalt-dex')).toBe(false);
    expect(e1.appHistory('cobalt-dex')).toBeNull();
    expect(e1.gatewayPage('cobalt-dex')).toBeNull();

    const rev = ch.revised;
    expect(rev?.slug).toBe('aurora');
    expect(rev?.app.before).not.toBe(rev?.app.after);
    expect(e0.appScreenerRows()[0]?.effectiveMarketCap.value).toBe(rev?.app.before);
    expect(e1.appScreenerRows()[0]?.effectiveMarketCap.value).toBe(rev?.app.after);
    expect(e1.appSnapshot('aurora')?.row.effectiveMarketCap.value).toBe(rev?.app.after);
    expect(e0.gatewayScreenerRows()[0]?.effMcap).toBe(rev?.gateway.before);
    expect(e1.gatewayScreenerRows()[0]?.effMcap).toBe(rev?.gateway.after);
    // nothing else of the row moved
    const strip = (r: unknown) => JSON.stringify(r, (k, v) => (k === 'effectiveMarketCap' || k === 'effMcap' || k === 'asOf' ? undefined : v));
    expect(strip(e1.appScreenerRows()[0])).toBe(strip(e0.appScreenerRows()[0]));
    expect(strip(e1.gatewayScreenerRows()[0])).toBe(strip(e0.gatewayScreenerRows()[0]));

    expect(ch.newDate).toBe('2026-07-01');
    const h0 = e0.appHistory('aurora') ?? [];
    const h1 = e1.appHistory('aurora') ?? [];
    expect(h1[0]?.rows).toHaveLength(121);
    expect(h1[0]?.rows.at(-1)?.date).toBe('2026-07-01');
    expect(h1.map((d) => d.rows.slice(0, 120))).toEqual(h0.map((d) => d.rows));
    const t1 = e1.gatewayTrend('aurora', '7d');
    expect(t1?.times.at(-1)).toBe('2026-07-01');

    const b0 = e0.researchBundle('aurora');
    const b1 = e1.researchBundle('aurora');
    expect(b1?.valueDrivers.length).toBe((b0?.valueDrivers.length ?? 0) + 1);
    expect(b1?.valueDrivers.at(-1)?.id).toBe(ch.bundle?.addedDriverId);
    expect(b1?.valueDriverEdges.at(-1)).toEqual({ fromValueDriverId: 'vd-1', toValueDriverId: ch.bundle?.addedDriverId });

    expect(Object.keys(e0.openapi().paths)).not.toContain(ch.openapiAddedPath);
    expect(Object.keys(e1.openapi().paths)).toContain(ch.openapiAddedPath);
  });

  it('at benchmark scale, generates each token on its own, on demand', () => {
    const scale = { seed: 1, tokens: 1000, historyDays: 1095, chartsPerToken: 3 };
    const v = new SimData(scale).view(0);
    expect(v.appTokens()).toHaveLength(1000);
    const docs = v.appHistory('token-0999');
    expect(docs?.[0]?.rows).toHaveLength(1095);
    // A token's data is the same whichever tokens were generated before it: nothing is made
    // for the universe as a whole. (How fast that starts: npm run bench.)
    const other = new SimData(scale).view(0);
    for (const t of other.appTokens().slice(0, 3)) other.appHistory(t.slug);
    expect(other.appHistory('token-0999')).toEqual(docs);
  });

  it('hands out frozen objects', () => {
    const v = new SimData(params).view(0);
    expect(Object.isFrozen(v.appScreenerRows()[0]?.effectiveMarketCap)).toBe(true);
  });
});
