// Compares the app schema with what the simulator served: counts and every value, numbers
// compared as Postgres numeric text against the literal the simulator sent.
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { AppMetricValue, SimDataset } from '../../sim/dataset-types.ts';
import type { Warehouse } from '../../src/store/connection.ts';

type Row = Record<string, string | null>;

const q = (w: Warehouse, text: string) => w.query<Row>(sql.raw(text));

/** Postgres numeric keeps the literal's scale; the simulator sends canonical decimals. */
function same(a: string | null | undefined, b: string | null | undefined): boolean {
  return (a ?? null) === (b ?? null);
}

/**
 * `refused`: list items refused alone (a string Postgres cannot hold): the token's row in
 * app.tokens, or its screener row, is absent; everything else of it is compared.
 */
export async function expectAppMirror(
  w: Warehouse,
  data: SimDataset,
  opts: { bundles: 'ok' | 'skipped'; bareNumbers?: boolean; refused?: { tokens?: readonly string[]; screenerRows?: readonly string[] } },
): Promise<void> {
  const listed = data.appTokens();
  const refusedToken = new Set(opts.refused?.tokens ?? []);
  const refusedRow = new Set(opts.refused?.screenerRows ?? []);

  const metrics = await q(w, `select slug, unit, kind, "group" from app.metrics order by slug`);
  expect(metrics).toEqual([...data.appMetrics()].map((m) => ({ slug: m.slug, unit: m.unit, kind: m.kind, group: m.group })).sort((a, b) => (a.slug < b.slug ? -1 : 1)));

  const tokens = await q(w, `select slug, display_name, symbol, image_url, coverage_snapshot::text, coverage_charts::text, coverage_metric_history::text from app.tokens where delisted_at is null order by slug`);
  expect(tokens).toEqual(
    [...listed]
      .filter((t) => !refusedToken.has(t.slug))
      .map((t) => ({ slug: t.slug, display_name: t.displayName, symbol: t.symbol, image_url: t.imageUrl, coverage_snapshot: String(t.coverage.snapshot), coverage_charts: String(t.coverage.charts), coverage_metric_history: String(t.coverage.metricHistory) }))
      .sort((a, b) => (a.slug < b.slug ? -1 : 1)),
  );

  // Screener: named columns and every MetricValue cell.
  const screener = new Map((await q(w, `select token_slug, effective_market_cap::text as emc, effective_ratio::text as er, annualized_revenue::text as ar, multiple_30d::text as m30 from app.screener_rows`)).map((r) => [r.token_slug, r]));
  const cells = new Map((await q(w, `select token_slug || '|' || surface || '|' || path as k, value::text as v, status, reason, unit, kind, metric from app.metric_values`)).map((r) => [r.k!, r]));
  const expectCell = (slug: string, surface: string, path: string, mv: AppMetricValue) => {
    const got = cells.get(`${slug}|${surface}|${path}`);
    expect(got, `${slug} ${surface} ${path}`).toBeDefined();
    expect(same(got!.v, mv.value), `${slug} ${surface} ${path}: ${got!.v} vs ${mv.value}`).toBe(true);
    // A bare number or string carries no status or reason; a MetricValue does.
    if (!opts.bareNumbers) {
      expect(got!.status).toBe(mv.status);
      expect(got!.reason ?? undefined).toBe(mv.reason);
    }
    expect(got!.unit).toBe(mv.unit);
    expect(got!.metric).toBe(mv.metric);
  };
  for (const row of data.appScreenerRows()) {
    if (refusedRow.has(row.token.slug)) {
      expect(screener.has(row.token.slug), `refused screener row ${row.token.slug}`).toBe(false);
      continue;
    }
    const s = screener.get(row.token.slug);
    expect(s, row.token.slug).toBeDefined();
    expect([s!.emc, s!.er, s!.ar, s!.m30]).toEqual([row.effectiveMarketCap.value, row.effectiveRatio.value, row.annualizedRevenue.value, row.multiples['30d'].value]);
    expectCell(row.token.slug, 'screener', 'effectiveMarketCap', row.effectiveMarketCap);
    for (const [win, mv] of Object.entries(row.multiples)) expectCell(row.token.slug, 'screener', `multiples.${win}`, mv);
    for (const [win, mv] of Object.entries(row.revenues)) expectCell(row.token.slug, 'screener', `revenues.${win}`, mv);
    for (const st of row.streams) expectCell(row.token.slug, 'screener', `streams.${st.key}.annualizedRevenue`, st.annualizedRevenue);
  }

  // Snapshots, streams and their cells.
  const snaps = new Map(
    (
      await q(
        w,
        `select token_slug, effective_market_cap::text as emc, combined_revenue_annualized::text as cra, fdv_to_revenue::text as fdv, to_char(as_of at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as as_of, to_char(generated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as generated_at from app.token_snapshots`,
      )
    ).map((r) => [r.token_slug, r]),
  );
  const states = new Map(
    (
      await q(
        w,
        `select resource, to_char(as_of at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as as_of, details->>'generatedAt' as generated_at from sync.resource_state where source = 'app' and resource like 'token/%/snapshot'`,
      )
    ).map((r) => [r.resource!, r]),
  );
  const streams = new Map((await q(w, `select token_slug || '|' || stream_key as k, label, mix_percent_label, annualized_revenue::text as ar from app.token_streams`)).map((r) => [r.k!, r]));
  let snapshotCount = 0;
  for (const t of listed) {
    const snap = data.appSnapshot(t.slug);
    if (!snap) continue;
    snapshotCount++;
    const s = snaps.get(t.slug);
    expect([s?.emc, s?.cra, s?.fdv], t.slug).toEqual([snap.row.effectiveMarketCap.value, snap.combinedRevenue.annualized.value, snap.fundamentals.fdvToRevenue?.value ?? null]);
    // Data time is the envelope's meta.asOf; when upstream generated the snapshot is kept apart.
    // Both are volatile: the row keeps those that came with its values, the state the newest.
    const state = states.get(`token/${t.slug}/snapshot`);
    expect([state?.as_of, state?.generated_at], t.slug).toEqual([data.asOf, snap.freshness.generatedAt]);
    expect(s!.as_of! <= data.asOf && s!.generated_at! <= snap.freshness.generatedAt, t.slug).toBe(true);
    expectCell(t.slug, 'snapshot', 'row.effectiveMarketCap', snap.row.effectiveMarketCap);
    for (const [k, mv] of Object.entries(snap.fundamentals)) expectCell(t.slug, 'snapshot', `fundamentals.${k}`, mv);
    for (const st of snap.streams) {
      expect(streams.get(`${t.slug}|${st.key}`)).toEqual({ k: `${t.slug}|${st.key}`, label: st.label, mix_percent_label: st.mixPercentLabel, ar: st.annualizedRevenue.value });
      expectCell(t.slug, 'snapshot', `streams.${st.key}.annualizedRevenue`, st.annualizedRevenue);
    }
  }
  expect(snapshotCount).toBeGreaterThan(0);

  // History: every stream, metric and day, exactly.
  const history = new Map(
    (await q(w, `select token_slug || '|' || stream || '|' || metric || '|' || to_char(ts at time zone 'UTC', 'YYYY-MM-DD') as k, value::text as v from app.metric_history`)).map((r) => [r.k!, r.v]),
  );
  let points = 0;
  for (const t of listed) {
    for (const p of data.appHistoryPoints(t.slug) ?? []) {
      points++;
      const k = `${t.slug}|${p.stream}|${p.metric}|${p.date}`;
      expect(history.has(k), k).toBe(true);
      expect(history.get(k), k).toBe(p.value);
    }
  }
  expect(points).toBeGreaterThan(0);
  const [hc] = await q(w, `select count(*)::text as n from app.metric_history h left join app.tokens t on t.slug = h.token_slug where t.delisted_at is null`);
  expect(Number(hc!.n)).toBe(points);

  // Charts and every point.
  const chartPoints = new Map((await q(w, `select token_slug || '|' || chart_key || '|' || x || '|' || series as k, value::text as v from app.chart_points`)).map((r) => [r.k!, r.v]));
  let chartPointCount = 0;
  for (const t of listed) {
    for (const c of data.appCharts(t.slug) ?? []) {
      const cd = data.appChartData(t.slug, c.key)!;
      for (const row of cd.rows) {
        cd.columns.forEach((col, i) => {
          if (i === 0) return;
          chartPointCount++;
          const k = `${t.slug}|${c.key}|${row[0]}|${col.key}`;
          expect(chartPoints.has(k), k).toBe(true);
          expect(chartPoints.get(k), k).toBe(row[i] ?? null);
        });
      }
    }
  }
  expect(chartPointCount).toBeGreaterThan(0);
  // No other series: a label or dimension column of a chart is not one.
  const [cc] = await q(w, `select count(*)::text as n from app.chart_points p left join app.tokens t on t.slug = p.token_slug where t.delisted_at is null`);
  expect(Number(cc!.n)).toBe(chartPointCount);

  // Bundles.
  const bundles = new Map((await q(w, `select token_slug, status, summary from app.research_bundles`)).map((r) => [r.token_slug, r]));
  const drivers = await q(w, `select token_slug, driver_id, formula from app.value_drivers order by 1, 2`);
  for (const t of listed) {
    expect(bundles.get(t.slug)?.status, t.slug).toBe(opts.bundles);
    if (opts.bundles === 'ok') {
      const b = data.researchBundle(t.slug)!;
      expect(bundles.get(t.slug)?.summary).toBe(b.summary);
      const mine = drivers.filter((d) => d.token_slug === t.slug).map((d) => [d.driver_id, d.formula]);
      expect(mine).toEqual(b.valueDrivers.map((d) => [d.id, d.formula]).sort((a, b2) => (a[0]! < b2[0]! ? -1 : 1)));
    }
  }
}

/** Row counts of every app table, for "nothing was added" checks. */
export async function appCounts(w: Warehouse): Promise<Record<string, number>> {
  const tables = ['metrics', 'tokens', 'screener_rows', 'screener_daily', 'token_snapshots', 'token_snapshots_daily', 'metric_values', 'token_streams', 'metric_history', 'charts', 'chart_points', 'research_bundles', 'value_drivers', 'value_driver_edges', 'token_functions'];
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = Number((await q(w, `select count(*)::text as n from app.${t}`))[0]!.n);
  return out;
}

/** A digest of a table's content without the columns that say when it was fetched ('app.tokens', or an app table's bare name). */
export async function contentDigest(w: Warehouse, table: string): Promise<string> {
  const [schema, name] = table.includes('.') ? table.split('.') : ['app', table];
  const cols = await q(w, `select column_name from information_schema.columns where table_schema = '${schema}' and table_name = '${name}' and column_name not in ('fetched_at','run_id','first_seen_at','last_seen_at') order by ordinal_position`);
  const list = cols.map((c) => `"${c.column_name}"`).join(', ');
  const [r] = await q(w, `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as d from (select ${list} from ${schema}.${name}) t`);
  return r!.d!;
}
