// Dataset -> wire. The dataset holds one canonical form; the configured forms decide how it
// is written: MetricValue object, bare number or numeric string; history rows as arrays or
// objects with one of four time encodings; chart catalog key and link field names.
import type { AppChartCatalogEntry, AppChartData, AppHistory, AppMetricValue, AppScreenerRow, AppSnapshot, GatewayChartCatalogEntry, GatewayScreenerRow, HistoryMetricKey } from './dataset-types.ts';
import { dateToMs } from './calendar.ts';
import {
  APP_NUMBER_FORMS,
  CHART_KEY_FIELDS,
  GATEWAY_ROW_TOKENS,
  HISTORY_ROW_FORMS,
  HISTORY_TIME_FORMS,
  linkFieldFor,
  pick,
  type FormState,
} from './forms.ts';
import { num, numOrNull } from './json.ts';
import type { HistoryTimeForm } from './types.ts';

export interface RenderCtx {
  seed: number;
  forms: FormState;
}

export function renderMetric(mv: AppMetricValue, r: RenderCtx, where: string): unknown {
  const form = pick(r.forms.forms.appNumber, APP_NUMBER_FORMS, r.seed, where);
  if (form === 'number') return numOrNull(mv.value);
  if (form === 'string') return mv.value;
  const out: Record<string, unknown> = { metric: mv.metric, value: numOrNull(mv.value), unit: mv.unit, kind: mv.kind };
  if (mv.asOf !== undefined) out.asOf = mv.asOf;
  out.freshness = mv.freshness;
  out.status = mv.status;
  if (mv.reason !== undefined) out.reason = mv.reason;
  if (mv.source !== undefined) out.source = { ...mv.source };
  return mv.extras ? { ...out, ...mv.extras } : out;
}

function renderWindows(m: Record<string, AppMetricValue>, r: RenderCtx, where: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(m).map(([w, v]) => [w, renderMetric(v, r, `${where}.${w}`)]));
}

export function renderScreenerRow(row: AppScreenerRow, r: RenderCtx): unknown {
  const at = `screener/${row.token.slug}`;
  return {
    token: { ...row.token },
    effectiveMarketCap: renderMetric(row.effectiveMarketCap, r, `${at}/effectiveMarketCap`),
    effectiveRatio: renderMetric(row.effectiveRatio, r, `${at}/effectiveRatio`),
    annualizedRevenue: renderMetric(row.annualizedRevenue, r, `${at}/annualizedRevenue`),
    multiples: renderWindows(row.multiples, r, `${at}/multiples`),
    revenues: renderWindows(row.revenues, r, `${at}/revenues`),
    streams: row.streams.map((s) => ({ key: s.key, label: s.label, annualizedRevenue: renderMetric(s.annualizedRevenue, r, `${at}/streams.${s.key}`) })),
    freshness: row.freshness,
  };
}

export function renderSnapshot(s: AppSnapshot, r: RenderCtx): unknown {
  const at = `snapshot/${s.token.slug}`;
  return {
    token: { ...s.token },
    row: {
      effectiveMarketCap: renderMetric(s.row.effectiveMarketCap, r, `${at}/row.effectiveMarketCap`),
      annualizedRevenue: renderMetric(s.row.annualizedRevenue, r, `${at}/row.annualizedRevenue`),
      multiples: renderWindows(s.row.multiples, r, `${at}/row.multiples`),
    },
    sections: { ...s.sections },
    combinedRevenue: { annualized: renderMetric(s.combinedRevenue.annualized, r, `${at}/combinedRevenue.annualized`) },
    fundamentals: renderWindows(s.fundamentals, r, `${at}/fundamentals`),
    streams: s.streams.map((st) => ({
      key: st.key,
      label: st.label,
      mixPercentLabel: st.mixPercentLabel,
      annualizedRevenue: renderMetric(st.annualizedRevenue, r, `${at}/streams.${st.key}`),
    })),
    freshness: { ...s.freshness, warnings: [...s.freshness.warnings] },
  };
}

export interface HistoryQuery {
  metrics: HistoryMetricKey[];
  from: string | null;
  to: string | null;
  limit: number | null;
}

function timeCell(date: string, form: HistoryTimeForm): unknown {
  switch (form) {
    case 'date':
      return date;
    case 'timestamp':
      return `${date}T00:00:00Z`;
    case 'epochSeconds':
      return num(String(dateToMs(date) / 1000));
    case 'epochMillis':
      return num(String(dateToMs(date)));
  }
}

/** one stream's history as served: requested metrics, date range, latest `limit` rows */
export function renderHistory(doc: AppHistory, q: HistoryQuery, r: RenderCtx): unknown {
  const where = `history/${doc.token.slug}/${doc.stream}`;
  const rowForm = pick(r.forms.forms.historyRows, HISTORY_ROW_FORMS, r.seed, where);
  const timeForm = pick(r.forms.forms.historyTime, HISTORY_TIME_FORMS, r.seed, where);
  let rows = doc.rows.filter((row) => (q.from === null || row.date >= q.from) && (q.to === null || row.date <= q.to));
  if (q.limit !== null && rows.length > q.limit) rows = rows.slice(rows.length - q.limit);
  const columns = [doc.columns[0] ?? { key: 'date', kind: 'time' }, ...q.metrics.map((k) => doc.columns.find((c) => c.key === k) ?? { key: k, kind: 'ratio' })];
  return {
    token: { ...doc.token },
    interval: doc.interval,
    stream: doc.stream,
    columns: columns.map((c) => ({ ...c })),
    rows: rows.map((row) => {
      const time = timeCell(row.date, timeForm);
      if (rowForm === 'arrays') return [time, ...q.metrics.map((k) => numOrNull(row.values[k]))];
      const obj: Record<string, unknown> = { date: time };
      for (const k of q.metrics) obj[k] = numOrNull(row.values[k]);
      return obj;
    }),
    freshness: { ...doc.freshness },
  };
}

/** sets the key and link fields of a catalog item per the forms (and hostile links) */
function catalogItem(api: 'app' | 'gateway', slug: string, key: string, dataPath: string, index: number, rest: Record<string, unknown>, r: RenderCtx): Record<string, unknown> {
  const where = `catalog/${api}/${slug}/${key}`;
  const keyField = pick(r.forms.forms.chartKeyField, CHART_KEY_FIELDS, r.seed, where);
  const linkField = linkFieldFor(r.forms, api, r.seed, where);
  let link = dataPath;
  if (r.forms.forms.hostileLinks && index === 0) link = `http://evil.invalid${dataPath}`;
  if (r.forms.forms.hostileLinks && index === 1) link = `/v1/internal/tokens/${slug}/charts/${key}`;
  const out: Record<string, unknown> = { [keyField]: key, ...rest };
  if (linkField === 'links.data') out.links = { data: link };
  else out[linkField] = link;
  return out;
}

export function renderAppChartCatalog(slug: string, entries: readonly AppChartCatalogEntry[], r: RenderCtx): unknown[] {
  return entries.map((e, i) => catalogItem('app', slug, e.key, e.dataPath, i, { title: e.title, section: e.section, freshness: e.freshness, rowCount: e.rowCount }, r));
}

export function renderAppChartData(d: AppChartData): unknown {
  return {
    title: d.title,
    section: d.section,
    x: d.x,
    y: [...d.y],
    columns: d.columns.map((c) => ({ ...c })),
    rows: d.rows.map(([date, ...values]) => [date, ...values.map(numOrNull)]),
    source: { ...d.source },
    freshness: d.freshness,
    renderer: { ...d.renderer, series: d.renderer.series.map((s) => ({ ...s })) },
    gaps: d.gaps.map((g) => ({ ...g })),
  };
}

export function renderGatewayChartCatalog(slug: string, entries: readonly GatewayChartCatalogEntry[], r: RenderCtx): unknown[] {
  return entries.map((e, i) => catalogItem('gateway', slug, e.key, e.dataPath, i, { title: e.title, timeframes: [...e.timeframes] }, r));
}

/** a gateway screener row naming its token by slug, token.slug, or only by symbol */
export function renderGatewayRow(row: GatewayScreenerRow, r: RenderCtx): unknown {
  const form = pick(r.forms.forms.gatewayRowToken, GATEWAY_ROW_TOKENS, r.seed, `gw-row/${row.slug}`);
  const { slug, symbol, name, ...fields } = row;
  const naming = form === 'slug' ? { slug, symbol, name } : form === 'token.slug' ? { token: { slug, symbol, name } } : { symbol, name };
  return { ...naming, ...fields };
}
