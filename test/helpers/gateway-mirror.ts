// Compares the gateway schema with what the simulator served; decimals compared as
// numeric text with the literal sent.
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { Period, SimDataset, Timeframe } from '../../sim/dataset-types.ts';
import type { Warehouse } from '../../src/store/connection.ts';

type Row = Record<string, string | null>;
export const q = (w: Warehouse, text: string) => w.query<Row>(sql.raw(text));
export const count = async (w: Warehouse, text: string) => Number((await q(w, `select count(*)::text as n from ${text}`))[0]!.n);

export const byKey = <T>(rows: T[], k: (r: T) => string) => new Map(rows.map((r) => [k(r), r]));
const day = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD')`;
export const json = (v: string | null | undefined) => (v === null || v === undefined ? null : JSON.parse(v));

/** Days per timeframe, for the truth of which timeframe a chart is mirrored at (independent of src/resources/gateway/timeframes.ts). */
const SPAN: Record<Timeframe, number> = { '7d': 7, '30d': 30, '90d': 90, '180d': 180, '365d': 365, '1y': 365, all: Infinity };
const ORDER: Timeframe[] = ['7d', '30d', '90d', '180d', '365d', '1y', 'all'];

/**
 * What a chart listing `listed` should be mirrored at for the configured timeframes: each one
 * it lists, and for one it does not list the longest it lists (365d before 1y).
 */
export function expectedTimeframes(listed: readonly Timeframe[], configured: readonly Timeframe[]): { mirrored: Timeframe[]; substitutions: Record<string, Timeframe | null>; requested: Map<Timeframe, Timeframe[]> } {
  const longest = [...ORDER].filter((t) => listed.includes(t)).reduce<Timeframe | null>((a, t) => (a === null || SPAN[t] > SPAN[a] ? t : a), null);
  const substitutions: Record<string, Timeframe | null> = {};
  const requested = new Map<Timeframe, Timeframe[]>();
  for (const c of configured) {
    const tf = listed.includes(c) ? c : longest;
    if (tf !== c) substitutions[c] = tf;
    if (tf === null) continue;
    requested.set(tf, [...(requested.get(tf) ?? []), c]);
  }
  return { mirrored: [...requested.keys()], substitutions, requested };
}

/** Every gateway table against what the simulator served; decimals compared as numeric text with the literal sent. */
/** `refused`: list items refused alone (a string Postgres cannot hold): their token or screener rows are absent, the rest compared. */
export async function expectGatewayMirror(
  w: Warehouse,
  data: SimDataset,
  opts: { accumulated?: boolean; periods?: readonly Period[]; timeframes?: readonly Timeframe[]; refused?: { tokens?: readonly string[]; screenerRows?: readonly string[] } } = {},
): Promise<Record<string, number>> {
  const tokens = data.gatewayTokens();
  const refusedToken = new Set(opts.refused?.tokens ?? []);
  const refusedRow = new Set(opts.refused?.screenerRows ?? []);
  const slugs = tokens.map((t) => t.slug);
  const listed = `(${slugs.map((s) => `'${s}'`).join(',')})`;

  expect(await q(w, `select slug, symbol, name, href from gateway.tokens where delisted_at is null order by slug`)).toEqual(
    [...tokens]
      .filter((t) => !refusedToken.has(t.slug))
      .sort((a, b) => (a.slug < b.slug ? -1 : 1))
      .map((t) => ({ slug: t.slug, symbol: t.symbol, name: t.name, href: t.href })),
  );

  // Screener rows, their windows and streams, today's archive.
  const cols = `token_slug, symbol, name, price_usd::text, mcap::text, eff_mcap::text, eff_ratio::text, rev_annualized::text, mult_annualized::text, fcf_momentum::text, data_freshness, status`;
  const rows = byKey(await q(w, `select ${cols} from gateway.screener_rows where token_slug in ${listed}`), (r) => r.token_slug!);
  const daily = byKey(await q(w, `select ${cols} from gateway.screener_daily where snapshot_date = (now() at time zone 'UTC')::date and token_slug in ${listed}`), (r) => r.token_slug!);
  const windows = byKey(await q(w, `select token_slug || '|' || "window" as k, rev::text, mult::text, status from gateway.screener_windows`), (r) => r.k!);
  const streams = byKey(await q(w, `select token_slug || '|' || stream_key as k, label, rev::text, share_pct::text from gateway.screener_streams`), (r) => r.k!);
  expect(rows.size).toBe(data.gatewayScreenerRows().filter((r) => !refusedRow.has(r.slug)).length);
  for (const r of data.gatewayScreenerRows()) {
    if (refusedRow.has(r.slug)) {
      expect(rows.has(r.slug), `refused screener row ${r.slug}`).toBe(false);
      continue;
    }
    const want = {
      token_slug: r.slug, symbol: r.symbol, name: r.name, price_usd: r.priceUsd, mcap: r.mcap, eff_mcap: r.effMcap, eff_ratio: r.effRatio,
      rev_annualized: r.revAnnualized, mult_annualized: r.multAnnualized, fcf_momentum: r.fcfMomentum, data_freshness: r.dataFreshness, status: 'ok',
    };
    expect(rows.get(r.slug), r.slug).toEqual(want);
    // The day's archive holds the tokens listed: a refused token has no row of its own there.
    expect(daily.get(r.slug), r.slug).toEqual(refusedToken.has(r.slug) ? undefined : want);
    for (const [win, v] of Object.entries(r.windows)) expect(windows.get(`${r.slug}|${win}`), `${r.slug} ${win}`).toEqual({ k: `${r.slug}|${win}`, rev: v.rev, mult: v.mult, status: 'ok' });
    for (const s of r.streams) expect(streams.get(`${r.slug}|${s.key}`)).toEqual({ k: `${r.slug}|${s.key}`, label: s.label, rev: s.rev, share_pct: s.sharePct });
  }
  expect(await count(w, 'gateway.screener_unmatched')).toBe(0);

  const insights = await q(w, `select id, type, title, token_slug, value::text, "window", to_char(generated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as generated_at from gateway.screener_insights order by id`);
  const wanted = [...data.gatewayInsights()]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((i) => ({ id: i.id, type: i.type, title: i.title, token_slug: i.tokenSlug, value: i.value, window: i.window, generated_at: i.generatedAt }));
  const withoutTime = ({ generated_at: _, ...rest }: Record<string, unknown>) => rest;
  expect(insights.map(withoutTime)).toEqual(wanted.map(withoutTime));
  // A volatile column: the generatedAt that came with the insight's current values, never a later one.
  insights.forEach((r, i) => expect(r.generated_at! <= wanted[i]!.generated_at, r.id!).toBe(true));

  // Pages, with the unshown sub-shapes as jsonb, and sections.
  const pages = byKey(
    await q(w, `select token_slug, token_id::text, symbol, name, chain, protocol_type, price_usd::text, combined_annualized::text, combined_all_time::text, combined_delta_pct::text, combined_delta_abs::text,
      kpis::text, revenue_functions::text, fundamentals::text, methodology::text, verification::text, chart_defs::text, status from gateway.token_pages`),
    (r) => r.token_slug!,
  );
  const sections = byKey(await q(w, `select token_slug || '|' || section as k, supported::text, state, reason, as_of from gateway.token_sections`), (r) => r.k!);
  for (const slug of slugs) {
    const page = data.gatewayPage(slug)!;
    const got = pages.get(slug)!;
    expect(got, slug).toMatchObject({
      token_id: String(page.meta.tokenId), symbol: page.meta.symbol, name: page.meta.name, chain: page.meta.chain, protocol_type: page.meta.protocolType,
      price_usd: page.meta.priceUsd, combined_annualized: page.combinedRevenue.annualized, combined_all_time: page.combinedRevenue.allTime,
      combined_delta_pct: page.combinedRevenue.deltaPct, combined_delta_abs: page.combinedRevenue.deltaAbs, status: 'ok',
    });
    expect([json(got.kpis), json(got.revenue_functions), json(got.fundamentals), json(got.methodology), json(got.verification), json(got.chart_defs)]).toEqual(
      JSON.parse(JSON.stringify([page.kpis, page.revenueFunctions, page.fundamentals, page.methodology, page.verification, page.chartDefs])),
    );
    for (const [name, s] of Object.entries(page.sections)) {
      const gs = sections.get(`${slug}|${name}`)!;
      expect([gs.supported, gs.state, gs.reason], `${slug} ${name}`).toEqual([String(s.supported), s.state, s.reason]);
      // A volatile column: the asOf that came with the section's current values, never a later one.
      const asOf = gs.as_of ? new Date(gs.as_of).toISOString() : null;
      if (s.asOf === null) expect(asOf, `${slug} ${name}`).toBeNull();
      else expect(asOf !== null && asOf <= new Date(s.asOf).toISOString(), `${slug} ${name}: ${asOf} vs ${s.asOf}`).toBe(true);
    }
  }

  // History per period: every series and day, or "not materialized" on record.
  const trend = byKey(await q(w, `select token_slug || '|' || period || '|' || series_key || '|' || ${day('ts')} as k, value::text as v from gateway.trend_points`), (r) => r.k!);
  const states = byKey(await q(w, `select resource, status, details::text from sync.resource_state where source = 'gateway'`), (r) => r.resource!);
  let trendPoints = 0;
  let notMaterialized = 0;
  for (const slug of slugs) {
    for (const period of opts.periods ?? ['365d']) {
      const t = data.gatewayTrend(slug, period);
      const st = states.get(`token/${slug}/history/${period}`);
      if (t === null) {
        notMaterialized++;
        expect(st?.status, `${slug} ${period}`).toBe('not_materialized');
        continue;
      }
      // Fetched (`ok`), or skipped while the catalog's marker vouches for it (`unchanged`).
      expect(['ok', 'unchanged'], `${slug} ${period}`).toContain(st?.status);
      for (const s of t.series) {
        t.times.forEach((time, i) => {
          trendPoints++;
          const k = `${slug}|${period}|${s.key}|${time}`;
          expect(trend.has(k), k).toBe(true);
          expect(trend.get(k)!.v, k).toBe(s.values[i] ?? null);
        });
      }
    }
  }
  expect(notMaterialized).toBeGreaterThan(0);

  // Charts: catalog, series from config, and every point of every mirrored timeframe (the
  // configured ones a chart lists, the longest it lists for those it does not).
  const charts = byKey(
    await q(w, `select token_slug || '|' || chart_key as k, title, array_to_json(timeframes)::text as tf, array_to_json(mirrored_timeframes)::text as mirrored, timeframe_substitutions::text as subs, data_path from gateway.charts`),
    (r) => r.k!,
  );
  const chartStates = byKey(await q(w, `select resource, details::text from sync.resource_state where source = 'gateway' and kind = 'chart'`), (r) => r.resource!);
  const series = byKey(await q(w, `select token_slug || '|' || chart_key || '|' || series_key as k, label, render, declared::text from gateway.chart_series`), (r) => r.k!);
  const tfs = byKey(await q(w, `select token_slug || '|' || chart_key || '|' || timeframe as k, type, current_timeframe, ${day('data_from')} as f, ${day('data_through')} as t, row_count::text from gateway.chart_timeframes`), (r) => r.k!);
  const points = byKey(await q(w, `select token_slug || '|' || chart_key || '|' || timeframe || '|' || ${day('ts')} || '|' || series_key as k, value::text as v from gateway.chart_points`), (r) => r.k!);
  let chartPoints = 0;
  let chartCount = 0;
  let seriesCount = 0;
  let timeframeCount = 0;
  for (const slug of slugs) {
    for (const c of data.gatewayCharts(slug) ?? []) {
      chartCount++;
      const want = expectedTimeframes(c.timeframes, opts.timeframes ?? ['all']);
      const got = charts.get(`${slug}|${c.key}`)!;
      expect({ ...got, subs: json(got.subs) }).toEqual({
        k: `${slug}|${c.key}`, title: c.title, tf: JSON.stringify(c.timeframes), mirrored: JSON.stringify(want.mirrored), subs: want.substitutions, data_path: c.dataPath,
      });
      for (const tf of want.mirrored) {
        const item = data.gatewayChartData(slug, c.key, tf)!;
        timeframeCount++;
        // The fetch's state says which configured timeframes it stands for.
        const details = json(chartStates.get(`token/${slug}/chart/${c.key}/${tf}`)?.details);
        const substitutedFor = want.requested.get(tf)!.filter((r) => r !== tf);
        expect(details, `${slug} ${c.key} ${tf}`).toMatchObject({ mirrored: tf, requested: want.requested.get(tf), substituted: substitutedFor.length > 0 });
        if (substitutedFor.length > 0) expect(details.substitutedFor).toEqual(substitutedFor);
        expect(tfs.get(`${slug}|${c.key}|${tf}`)).toEqual({ k: `${slug}|${c.key}|${tf}`, type: item.type, current_timeframe: item.currentTimeframe, f: item.dataFrom, t: item.dataThrough, row_count: String(item.data.length) });
        for (const s of item.config.series) {
          expect(series.get(`${slug}|${c.key}|${s.key}`)).toEqual({ k: `${slug}|${c.key}|${s.key}`, label: s.label, render: s.render, declared: 'true' });
        }
        for (const row of item.data) {
          for (const s of item.config.series) {
            chartPoints++;
            const k = `${slug}|${c.key}|${tf}|${row.timestamp}|${s.key}`;
            expect(points.has(k), k).toBe(true);
            expect(points.get(k)!.v, k).toBe(row[s.key] ?? null);
          }
        }
      }
      // Series are learned from chart data: only charts mirrored at some timeframe have them.
      if (want.mirrored.length > 0) seriesCount += data.gatewayChartData(slug, c.key, want.mirrored[0]!)!.config.series.length;
    }
  }
  expect(chartPoints).toBeGreaterThan(0);
  const only = (t: string) => `${t} where token_slug in ${listed}`;
  const counts = {
    tokens: tokens.length,
    screener_rows: rows.size,
    screener_windows: await count(w, only('gateway.screener_windows')),
    insights: insights.length,
    token_pages: await count(w, only('gateway.token_pages')),
    token_sections: await count(w, only('gateway.token_sections')),
    trend_points: await count(w, only('gateway.trend_points')),
    charts: await count(w, only('gateway.charts')),
    chart_series: await count(w, only('gateway.chart_series')),
    chart_timeframes: await count(w, only('gateway.chart_timeframes')),
    chart_points: await count(w, only('gateway.chart_points')),
  };
  expect(counts).toMatchObject({ screener_windows: rows.size * 5, token_pages: slugs.length, charts: chartCount, chart_series: seriesCount, chart_timeframes: timeframeCount });
  // Points that slid out of a period or timeframe since an earlier sync are kept (never deleted).
  if (opts.accumulated) {
    expect(counts.trend_points).toBeGreaterThanOrEqual(trendPoints);
    expect(counts.chart_points).toBeGreaterThanOrEqual(chartPoints);
  } else {
    expect([counts.trend_points, counts.chart_points]).toEqual([trendPoints, chartPoints]);
  }
  return counts;
}

export const GATEWAY_TABLES = ['tokens', 'screener_rows', 'screener_daily', 'screener_windows', 'screener_streams', 'screener_unmatched', 'screener_insights', 'token_pages', 'token_sections', 'trend_points', 'charts', 'chart_series', 'chart_timeframes', 'chart_points'];

export async function gatewayCounts(w: Warehouse): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of GATEWAY_TABLES) out[t] = await count(w, `gateway.${t}`);
  return out;
}
