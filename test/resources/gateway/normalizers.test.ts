import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { readChart, sameRequest, seriesKeys, timeframeRecord } from '../../../src/resources/gateway/chart.ts';
import { chartMarker, mirrorColumns, readGatewayCatalogItem, timeframesToFetch } from '../../../src/resources/gateway/charts.ts';
import { readTrend } from '../../../src/resources/gateway/history.ts';
import { normalizeInsight, normalizeInsights } from '../../../src/resources/gateway/insights.ts';
import { matchRowToken, matchSymbol, type KnownToken } from '../../../src/resources/gateway/match.ts';
import { diffContract, fingerprint } from '../../../src/resources/gateway/openapi.ts';
import { normalizePage } from '../../../src/resources/gateway/page.ts';
import { isNotFound as isNotCovered, judgeFailure } from '../../../src/lib/failure.ts';
import { problemDetails as detailsOf } from '../../../src/store/books/resource-state.ts';

/** What a failed fetch keeps of its problem in `details.problem`. */
const problemDetails = (err: unknown) => detailsOf(judgeFailure(err));
import { normalizeScreenerRow } from '../../../src/resources/gateway/screener.ts';
import type { JobContext } from '../../../src/engine/kit/types.ts';
import { gatewayChartItem, gatewayPageShell, gatewayTrend } from '../../../src/schema/upstream/gateway.ts';
import { ProblemError, UpstreamServerError } from '../../../src/lib/errors.ts';

const json = (text: string) => parse(text) as any;
const NOW = new Date('2026-07-01T12:00:00Z');
const ctx = { now: () => NOW, runId: '00000000-0000-0000-0000-000000000001' } as unknown as JobContext;

const known: KnownToken[] = [
  { slug: 'aurora', symbol: 'AUR', delisted: false },
  { slug: 'basalt', symbol: 'BAS', delisted: false },
  { slug: 'old-basalt', symbol: 'BAS', delisted: true },
  { slug: 'cobalt', symbol: 'COB', delisted: true },
  { slug: 'twin-a', symbol: 'TWN', delisted: false },
  { slug: 'twin-b', symbol: 'TWN', delisted: false },
];

describe('token matching', () => {
  it('takes slug, token.slug or a bare token string as they are', () => {
    expect(matchRowToken({ slug: 'x', symbol: 'AUR' }, known)).toEqual({ slug: 'x', by: 'slug' });
    expect(matchRowToken({ token: { slug: 'y', symbol: 'AUR' } }, known)).toEqual({ slug: 'y', by: 'token.slug' });
    expect(matchRowToken({ token: 'z' }, known)).toEqual({ slug: 'z', by: 'token' });
  });

  it('matches a symbol through the token list: listed first, then case-insensitive, then delisted', () => {
    expect(matchRowToken({ symbol: 'AUR' }, known)).toEqual({ slug: 'aurora', by: 'symbol' });
    expect(matchRowToken({ token: { symbol: 'AUR' } }, known)).toEqual({ slug: 'aurora', by: 'symbol' });
    expect(matchSymbol('BAS', known)).toEqual({ slug: 'basalt', by: 'symbol' });
    expect(matchSymbol(' aur ', known)).toEqual({ slug: 'aurora', by: 'symbol' });
    expect(matchSymbol('COB', known)).toEqual({ slug: 'cobalt', by: 'symbol' });
  });

  it('never guesses: ambiguous and unknown symbols, and rows naming nothing, stay unmatched', () => {
    expect(matchSymbol('TWN', known)).toEqual({ slug: null, reason: 'ambiguous-symbol', symbol: 'TWN' });
    expect(matchSymbol('NOPE', known)).toEqual({ slug: null, reason: 'unknown-symbol', symbol: 'NOPE' });
    expect(matchRowToken({ slug: '', symbol: '' }, known)).toEqual({ slug: null, reason: 'no-token', symbol: null });
  });
});

describe('screener rows', () => {
  const row = (naming: string) =>
    json(`{${naming}, "name": "Aurora", "priceUsd": "1.2345678901234567890123456789", "mcap": "123456789012345678901234567890",
      "effMcap": "-0.00000000000000000000000000012", "effRatio": "0", "revAnnualized": null, "multAnnualized": "12.5",
      "windows": {"7d": {"rev": "-5.25", "mult": null}, "30d": {"rev": "1", "mult": "2"}, "90d": null, "180d": "bad", "365d": {"rev": "x", "mult": "3"}},
      "streams": [{"key": "fees", "label": "Fees", "rev": "10.5", "sharePct": "41.2"}, {"label": "no key"}],
      "dataFreshness": "fresh", "fcfMomentum": "-0.5", "extra": {"kept": true}}`);

  it('reads every value exactly, windows and streams included', () => {
    const r = normalizeScreenerRow(ctx, row('"slug": "aurora", "symbol": "AUR"'), known, null);
    if (!r.matched) throw new Error('expected a match');
    expect(r.row).toMatchObject({
      tokenSlug: 'aurora', symbol: 'AUR', name: 'Aurora', matchedBy: 'slug', priceUsd: '1.2345678901234567890123456789', mcap: '123456789012345678901234567890',
      effMcap: '-0.00000000000000000000000000012', effRatio: '0', revAnnualized: null, multAnnualized: '12.5', fcfMomentum: '-0.5', dataFreshness: 'fresh', status: 'ok',
    });
    expect((r.row.payload as any).extra).toEqual({ kept: true });
    const w = Object.fromEntries(r.windows.map((x) => [x.window, [x.rev, x.mult, x.status]]));
    expect(w).toEqual({ '7d': ['-5.25', null, 'ok'], '30d': ['1', '2', 'ok'], '90d': [null, null, 'ok'], '180d': [null, null, 'invalid'], '365d': [null, '3', 'invalid'] });
    expect(r.streams).toHaveLength(1);
    expect(r.streams[0]).toMatchObject({ streamKey: 'fees', label: 'Fees', rev: '10.5', sharePct: '41.2' });
    expect(r.unkeyedStreams).toBe(1);
  });

  it('lands a symbol-only row on the right slug', () => {
    const r = normalizeScreenerRow(ctx, row('"symbol": "BAS"'), known, null);
    expect(r.matched && [r.row.tokenSlug, r.row.matchedBy]).toEqual(['basalt', 'symbol']);
    const nested = normalizeScreenerRow(ctx, row('"token": {"slug": "aurora", "symbol": "AUR"}'), known, null);
    expect(nested.matched && [nested.row.tokenSlug, nested.row.matchedBy, nested.row.symbol]).toEqual(['aurora', 'token.slug', 'AUR']);
  });

  it('keeps an unmatched row, keyed by its symbol or its content', () => {
    const r = normalizeScreenerRow(ctx, row('"symbol": "TWN"'), known, null);
    expect(!r.matched && r.unmatched).toMatchObject({ rowKey: 'symbol:TWN', reason: 'ambiguous-symbol', symbol: 'TWN' });
    const none = normalizeScreenerRow(ctx, json('{"effMcap": "1"}'), known, null);
    expect(!none.matched && none.unmatched).toMatchObject({ reason: 'no-token', rowKey: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const junk = normalizeScreenerRow(ctx, 'not a row', known, null);
    expect(!junk.matched && junk.unmatched).toMatchObject({ reason: 'unreadable', payload: 'not a row', status: 'invalid' });
    const number = normalizeScreenerRow(ctx, json('[5]')[0], known, null);
    expect(!number.matched && number.unmatched).toMatchObject({ reason: 'unreadable', status: 'invalid' });
    const numericWindow = normalizeScreenerRow(ctx, json('{"slug": "a", "windows": {"7d": 5}}'), known, null);
    expect(numericWindow.matched && numericWindow.windows[0]).toMatchObject({ window: '7d', rev: null, mult: null, status: 'invalid' });
  });

  it('an invalid decimal is null, the row invalid, the raw value in payload', () => {
    const r = normalizeScreenerRow(ctx, json('{"slug": "aurora", "effMcap": "12.3.4", "mcap": "1e999999"}'), known, null);
    if (!r.matched) throw new Error('expected a match');
    expect([r.row.effMcap, r.row.mcap, r.row.status]).toEqual([null, null, 'invalid']);
    expect((r.row.payload as any).effMcap).toBe('12.3.4');
  });
});

describe('insights', () => {
  it('keys an insight by its own id, else by a hash of its content that ignores key order', () => {
    expect(normalizeInsight(ctx, json('{"id": "top-fcf", "type": "top", "value": "12.50", "generatedAt": "2026-06-30T00:00:00.000Z"}'), null)).toMatchObject({
      id: 'top-fcf', type: 'top', value: '12.50', generatedAt: new Date('2026-06-30T00:00:00Z'), status: 'ok',
    });
    expect(normalizeInsight(ctx, json('{"id": 42}'), null).id).toBe('42');
    const a = normalizeInsight(ctx, json('{"title": "x", "value": 1.50}'), null);
    const b = normalizeInsight(ctx, json('{"value": 1.50, "title": "x"}'), null);
    expect(a.id).toMatch(/^sha256:/);
    expect(a.id).toBe(b.id);
    expect(normalizeInsight(ctx, json('{"title": "x", "value": 1.5}'), null).id).not.toBe(a.id);
    expect(normalizeInsight(ctx, json('{"id": "v", "value": "oops"}'), null)).toMatchObject({ value: null, status: 'invalid' });
  });

  it('says when the body had no insights array', () => {
    expect(normalizeInsights(ctx, undefined, null)).toEqual({ present: false, rows: [] });
    expect(normalizeInsights(ctx, [], null)).toEqual({ present: true, rows: [] });
  });
});

describe('token page', () => {
  it('puts meta and combined revenue into columns and the unshown shapes into jsonb', () => {
    const raw = json(`{"meta": {"tokenId": 1007, "symbol": "AUR", "name": "Aurora", "slug": "aurora", "chain": "eth", "protocolType": "dex", "priceUsd": "0.000123456789012345678901234567", "imageUrl": "i"},
      "combinedRevenue": {"annualized": "-1.5", "allTime": "99999999999999999999999999999999.1", "deltaPct": "0", "deltaAbs": null},
      "sections": {"trend": {"supported": true, "state": "ready", "reason": null, "asOf": "2026-06-30T00:00:00.000Z"}, "charts": {"supported": false, "state": "unsupported", "reason": "none", "asOf": null}, "odd": 3},
      "chartDefs": [{"key": "k"}], "kpis": [{"value": "1"}], "revenueFunctions": [], "fundamentals": {"fdv": "2"}, "methodology": {"cards": []}, "verification": {"status": "partial"}}`);
    const n = normalizePage(ctx, 'aurora', gatewayPageShell.parse(raw), raw, null);
    expect(n.page).toMatchObject({
      tokenSlug: 'aurora', tokenId: 1007, symbol: 'AUR', chain: 'eth', protocolType: 'dex', priceUsd: '0.000123456789012345678901234567',
      combinedAnnualized: '-1.5', combinedAllTime: '99999999999999999999999999999999.1', combinedDeltaPct: '0', combinedDeltaAbs: null,
      chartDefs: [{ key: 'k' }], revenueFunctions: [], fundamentals: { fdv: '2' }, status: 'ok',
    });
    expect(n.sections.map((s) => [s.section, s.supported, s.state, s.reason, s.asOf?.toISOString() ?? null, s.status])).toEqual([
      ['trend', true, 'ready', null, '2026-06-30T00:00:00.000Z', 'ok'],
      ['charts', false, 'unsupported', 'none', null, 'ok'],
      ['odd', null, null, null, null, 'invalid'],
    ]);
  });

  it('marks the page invalid for an unreadable value or token id', () => {
    const raw = json('{"meta": {"tokenId": "abc", "priceUsd": "1..2"}}');
    const n = normalizePage(ctx, 'x', gatewayPageShell.parse(raw), raw, null);
    expect([n.page.tokenId, n.page.priceUsd, n.page.status, n.page.kpis]).toEqual([null, null, 'invalid', null]);
    expect(n.invalid).toEqual(['meta.priceUsd', 'meta.tokenId']);
  });
});

describe('history (TrendData)', () => {
  it('goes to long format, exactly, nulls kept, unreadable values invalid', () => {
    const data = gatewayTrend.parse(json(`{"times": ["2026-06-29", "2026-06-30", "garbage"], "series": [
      {"key": "revAnnualized", "values": ["123456789012345678901234567890.5", null, "1"]},
      {"key": "effMcap", "values": ["-0.5", "oops"]}]}`))!;
    const r = readTrend(ctx, 'aurora', '30d', data, null);
    expect(r.points.map((p) => [p.seriesKey, p.ts.toISOString().slice(0, 10), p.value, p.status, p.payload])).toEqual([
      ['revAnnualized', '2026-06-29', '123456789012345678901234567890.5', 'ok', null],
      ['revAnnualized', '2026-06-30', null, 'ok', null],
      ['effMcap', '2026-06-29', '-0.5', 'ok', null],
      ['effMcap', '2026-06-30', null, 'invalid', 'oops'],
    ]);
    expect(r).toMatchObject({ series: ['revAnnualized', 'effMcap'], badTimes: 1, misaligned: 1, invalidValues: 1 });
    expect(r.lastTs?.toISOString()).toBe('2026-06-30T00:00:00.000Z');
    expect(gatewayTrend.parse(null)).toBeNull();
  });
});

describe('charts', () => {
  it('reads catalog items in every key and link form, with their timeframes', () => {
    expect(readGatewayCatalogItem({ chartKey: 'fees', title: 'Fees', timeframes: ['30d', 'all'], links: { data: '/v1/tokens/a/charts/fees' } })).toMatchObject({
      key: 'fees', title: 'Fees', timeframes: ['30d', 'all'], link: '/v1/tokens/a/charts/fees',
    });
    expect(readGatewayCatalogItem({ id: 'x', href: 'http://evil.invalid/x' })).toMatchObject({ key: 'x', timeframes: null, link: 'http://evil.invalid/x' });
    expect(readGatewayCatalogItem({ key: '../etc' })).toBeNull();
  });

  it('asks a chart only for timeframes it lists: a configured one it does not list becomes the longest it does', () => {
    expect(timeframesToFetch({ timeframes: ['30d', '90d'] }, ['all', '30d'])).toEqual(['90d', '30d']);
    expect(timeframesToFetch({ timeframes: ['30d', '90d'] }, ['30d'])).toEqual(['30d']);
    expect(timeframesToFetch({ timeframes: null }, ['all', '30d'])).toEqual(['all', '30d']);
    expect(timeframesToFetch({ timeframes: [] }, ['all'])).toEqual([]);
    expect(mirrorColumns({ timeframes: ['30d', '90d', '365d'] }, ['all'])).toEqual({ mirroredTimeframes: ['365d'], timeframeSubstitutions: { all: '365d' } });
    expect(mirrorColumns({ timeframes: ['7d', 'all'] }, ['all', '7d'])).toEqual({ mirroredTimeframes: ['all', '7d'], timeframeSubstitutions: {} });
    expect(mirrorColumns({ timeframes: [] }, ['all'])).toEqual({ mirroredTimeframes: [], timeframeSubstitutions: { all: null } });
  });

  it('says in the chart job state what a fetch stands for', () => {
    expect(timeframeRecord({ timeframe: '365d', requested: ['all'] })).toEqual({ mirrored: '365d', requested: ['all'], substituted: true, substitutedFor: ['all'] });
    expect(timeframeRecord({ timeframe: '90d', requested: ['90d', 'all'] })).toEqual({ mirrored: '90d', requested: ['90d', 'all'], substituted: true, substitutedFor: ['all'] });
    expect(timeframeRecord({ timeframe: '30d' })).toEqual({ mirrored: '30d', requested: ['30d'], substituted: false });
    // A state from before `requested` was recorded stood for its own timeframe.
    expect(sameRequest({ series: [] }, timeframeRecord({ timeframe: '30d', requested: ['30d'] }))).toBe(true);
    expect(sameRequest({ series: [] }, timeframeRecord({ timeframe: '365d', requested: ['all'] }))).toBe(false);
    expect(sameRequest({ requested: ['all', '90d'] }, timeframeRecord({ timeframe: '90d', requested: ['90d', 'all'] }))).toBe(true);
    expect(sameRequest(null, timeframeRecord({ timeframe: '90d', requested: ['90d', 'all'] }))).toBe(false);
  });

  it('marks a chart by the catalog asOf and its own markers; nothing to go by is no marker', () => {
    expect(chartMarker(new Date('2026-06-30T00:00:00Z'), { marker: null })).toContain('2026-06-30');
    expect(chartMarker(null, { marker: null })).toBeNull();
    expect(chartMarker(null, { marker: '{"rowCount":5}' })).not.toBeNull();
  });

  it('takes series keys from config.series and the rows, never fixed columns', () => {
    const rows = json(`[{"timestamp": "2026-06-29", "holderFcf": "1.5", "undeclared": "7", "note": "text", "burnUsd": null},
                        {"timestamp": "2026-06-30", "holderFcf": null, "undeclared": null, "note": "more"}]`);
    const s = seriesKeys({ title: 't', series: [{ key: 'holderFcf', label: 'Holder FCF', render: 'line' }, { key: 'burnUsd', label: 'Burns', render: 'bar' }, { nokey: 1 }] }, rows);
    expect(s.keys).toEqual(['holderFcf', 'burnUsd', 'undeclared']);
    expect(s.ignored).toEqual(['note']);
    expect(s.declared.get('burnUsd')).toMatchObject({ label: 'Burns', render: 'bar' });
  });

  it('reads a chart timeframe into points, series and the item without rows', () => {
    const raw = json(`{"id": "fees", "type": "combo", "currentTimeframe": "30d", "dataFrom": "2026-06-29", "dataThrough": "2026-06-30",
      "config": {"title": "Fees", "series": [{"key": "feesUsd", "label": "Fees", "render": "line"}]},
      "data": [{"timestamp": "2026-06-29", "feesUsd": "123456789012345678901234567890.000001", "otherUsd": "-2"},
               {"timestamp": "2026-06-30", "feesUsd": "bad"},
               {"feesUsd": "3"}]}`);
    const r = readChart(ctx, { slug: 'a', chartKey: 'fees', timeframe: '30d' }, gatewayChartItem.parse(raw), raw, null);
    expect(r.points.map((p) => [p.ts.toISOString().slice(0, 10), p.seriesKey, p.value, p.status])).toEqual([
      ['2026-06-29', 'feesUsd', '123456789012345678901234567890.000001', 'ok'],
      ['2026-06-29', 'otherUsd', '-2', 'ok'],
      ['2026-06-30', 'feesUsd', null, 'invalid'],
    ]);
    expect(r.points[2]!.payload).toBe('bad');
    expect(r.seriesRows.map((s) => [s.seriesKey, s.label, s.render, s.declared])).toEqual([
      ['feesUsd', 'Fees', 'line', true],
      ['otherUsd', null, null, false],
    ]);
    expect(r.timeframe).toMatchObject({ type: 'combo', currentTimeframe: '30d', title: 'Fees', rowCount: 3 });
    expect(r.timeframe.payload).not.toHaveProperty('data');
    expect(r.details).toMatchObject({ badRows: 1, invalidValues: 1 });
  });
});

describe('contract drift', () => {
  const doc = (paths: Record<string, unknown>, version = '1.0.0') => ({ openapi: '3.1.0', info: { version }, paths, components: {} });
  it('lists added, removed and changed paths, and other changed sections', () => {
    const before = fingerprint(doc({ '/v1/tokens': { get: {} }, '/v1/screener': { get: {} }, '/v1/old': {} }));
    const after = fingerprint(doc({ '/v1/tokens': { get: { summary: 'x' } }, '/v1/screener': { get: {} }, '/v1/new': {} }, '1.1.0'));
    expect(diffContract(before, after)).toEqual({ added: ['/v1/new'], removed: ['/v1/old'], changed: ['/v1/tokens'], sections: ['info'] });
    expect(after.version).toBe('1.1.0');
    expect(diffContract(after, after)).toEqual({ added: [], removed: [], changed: [], sections: [] });
  });
});

describe('walk and problems', () => {
  it('keeps code, instance and request id; only not-covered codes are outcomes', () => {
    const fields = { type: undefined, title: 'Not Found', detail: 'd', scope: undefined, extensions: {}, path: '/v1/tokens/x' };
    const notFound = new ProblemError({ ...fields, status: 404, code: 'token-not-found', instance: '/v1/tokens/x', requestId: 'r1' });
    expect(problemDetails(notFound)).toEqual({ code: 'token-not-found', status: 404, instance: '/v1/tokens/x', requestId: 'r1', detail: 'd', path: '/v1/tokens/x' });
    expect(isNotCovered(notFound)).toBe(true);
    expect(isNotCovered(new ProblemError({ ...fields, status: 400, code: 'invalid-parameter', instance: undefined, requestId: undefined }))).toBe(false);
    const server = new UpstreamServerError({ ...fields, status: 500, code: 'internal-error', instance: '/v1/screener', requestId: 'r2' });
    expect(problemDetails(server)).toMatchObject({ code: 'internal-error', requestId: 'r2' });
    expect(isNotCovered(server)).toBe(false);
    expect(problemDetails(new Error('x'))).toBeNull();
    // A missing route is no state of a token or chart: it fails, to be seen.
    expect(isNotCovered(new ProblemError({ ...fields, status: 404, code: 'not-found', instance: undefined, requestId: undefined }))).toBe(false);
  });

});
