// Dataset -> wire. The dataset holds one canonical form; the configured forms decide how it
// is written: MetricValue object, bare number or numeric string; history rows as arrays or
// objects with one of four time encodings; all streams' history in one of six shapes; chart
// catalog key and link field names; an extra text column in app chart data.
import type { AppChartCatalogEntry, AppChartData, AppHistory, AppHistoryRow, AppMetricValue, AppScreenerRow, AppSnapshot, GatewayChartCatalogEntry, GatewayScreenerRow, HistoryMetricKey } from './dataset-types.ts';
import { dateToMs } from './calendar.ts';
import {
  APP_NUMBER_FORMS,
  CHART_KEY_FIELDS,
  GATEWAY_ROW_TOKENS,
  HISTORY_ALL_FORMS,
  HISTORY_ROW_FORMS,
  HISTORY_TIME_FORMS,
  linkFieldFor,
  pick,
  type FormState,
} from './forms.ts';
import { num, numOrNull } from './json.ts';
import { choose } from './random.ts';
import type { HistoryAllForm, HistoryRowForm, HistoryTimeForm } from './types.ts';

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

/** the rows a query selects from one stream: in the date range, then the latest `limit` */
function selectRows(doc: AppHistory, q: HistoryQuery): AppHistoryRow[] {
  const rows = doc.rows.filter((row) => (q.from === null || row.date >= q.from) && (q.to === null || row.date <= q.to));
  return q.limit !== null && rows.length > q.limit ? rows.slice(rows.length - q.limit) : rows;
}

/** the time column, then the requested metrics' columns, as copies */
function historyColumns(doc: AppHistory, q: HistoryQuery): Record<string, unknown>[] {
  const columns = [doc.columns[0] ?? { key: 'date', kind: 'time' }, ...q.metrics.map((k) => doc.columns.find((c) => c.key === k) ?? { key: k, kind: 'ratio' })];
  return columns.map((c) => ({ ...c }));
}

interface RowShape {
  rowForm: HistoryRowForm;
  timeForm: HistoryTimeForm;
}

/** row and time forms of one served document; `where` names it for 'mixed' */
function rowShape(r: RenderCtx, where: string): RowShape {
  return {
    rowForm: pick(r.forms.forms.historyRows, HISTORY_ROW_FORMS, r.seed, where),
    timeForm: pick(r.forms.forms.historyTime, HISTORY_TIME_FORMS, r.seed, where),
  };
}

/** a stream cell in a combined document: its column, and its member name in row objects */
interface Dimension {
  column: Record<string, unknown>;
  cellKey: string;
}

/** one row as served; a dimension puts the row's stream key right after the time */
function historyRow(row: AppHistoryRow, q: HistoryQuery, shape: RowShape, stream?: { dim: Dimension; key: string }): unknown {
  const time = timeCell(row.date, shape.timeForm);
  const values = q.metrics.map((k) => numOrNull(row.values[k]));
  if (shape.rowForm === 'arrays') return stream ? [time, stream.key, ...values] : [time, ...values];
  const obj: Record<string, unknown> = { date: time };
  if (stream) obj[stream.dim.cellKey] = stream.key;
  q.metrics.forEach((k, i) => (obj[k] = values[i]));
  return obj;
}

/** one stream's history as served: requested metrics, date range, latest `limit` rows */
export function renderHistory(doc: AppHistory, q: HistoryQuery, r: RenderCtx): Record<string, unknown> {
  const shape = rowShape(r, `history/${doc.token.slug}/${doc.stream}`);
  return {
    token: { ...doc.token },
    interval: doc.interval,
    stream: doc.stream,
    columns: historyColumns(doc, q),
    rows: selectRows(doc, q).map((row) => historyRow(row, q, shape)),
    freshness: { ...doc.freshness },
  };
}

const STREAM_DIMENSION: Dimension = { column: { key: 'stream', type: 'dimension', label: 'Stream' }, cellKey: 'stream' };
// nothing but its cells (stream keys where the other columns hold numbers) says what it is
const COMPONENT_DIMENSION: Dimension = { column: { key: 'component' }, cellKey: 'component' };

/** the head every combined form shares; the first stream's freshness stands for the token's */
function combinedHead(first: AppHistory): Record<string, unknown> {
  return { token: { ...first.token }, interval: first.interval, stream: 'all' };
}

/** every stream in one document, the stream key as a cell; rows by date, then stream order */
function columnHistory(first: AppHistory, docs: readonly AppHistory[], q: HistoryQuery, r: RenderCtx, dim: Dimension): unknown {
  const shape = rowShape(r, `history/${first.token.slug}/all`);
  const [time, ...metrics] = historyColumns(first, q);
  const tagged = docs.flatMap((d) => selectRows(d, q).map((row) => ({ row, key: d.stream })));
  // a stable sort: the streams of one day keep the token's stream order
  tagged.sort((a, b) => (a.row.date < b.row.date ? -1 : a.row.date > b.row.date ? 1 : 0));
  return {
    ...combinedHead(first),
    columns: [time, { ...dim.column }, ...metrics],
    rows: tagged.map(({ row, key }) => historyRow(row, q, shape, { dim, key })),
    freshness: { ...first.freshness },
  };
}

/** every stream's rows in one document, one stream after another, nothing telling them apart */
function ambiguousHistory(first: AppHistory, docs: readonly AppHistory[], q: HistoryQuery, r: RenderCtx): unknown {
  const shape = rowShape(r, `history/${first.token.slug}/all`);
  return {
    ...combinedHead(first),
    columns: historyColumns(first, q),
    rows: docs.flatMap((d) => selectRows(d, q).map((row) => historyRow(row, q, shape))),
    freshness: { ...first.freshness },
  };
}

/** the form of one token's `stream=all` answer: the configured one, or per token when 'mixed' */
function historyAllForm(slug: string, r: RenderCtx): HistoryAllForm {
  return pick(r.forms.forms.historyAll, HISTORY_ALL_FORMS, r.seed, `history-all/${slug}`);
}

/** every stream's history (`stream=all`) in the configured form; docs in the token's stream order */
export function renderHistoryAll(docs: readonly AppHistory[], q: HistoryQuery, r: RenderCtx): unknown {
  const first = docs[0];
  // no stream, nothing to shape: an empty list in every form
  if (!first) return [];
  const form = historyAllForm(first.token.slug, r);
  // One MetricHistory states one interval and one columns[]: streams that differ (SimOptions.
  // historyStreams 'distinct') cannot share one, and are served as a list instead.
  const oneTable = docs.every((d) => sameMeta(d, first));
  switch (form === 'column' || form === 'columnUntyped' ? (oneTable ? form : 'list') : form) {
    case 'list':
      return docs.map((d) => renderHistory(d, q, r));
    case 'column':
      return columnHistory(first, docs, q, r, STREAM_DIMENSION);
    case 'columnUntyped':
      return columnHistory(first, docs, q, r, COMPONENT_DIMENSION);
    case 'nested':
      // the interval the head states for all is not said again by the streams that share it
      return { ...combinedHead(first), streams: docs.map((d) => withoutSharedInterval(renderHistory(d, q, r), first.interval)) };
    case 'keyed':
      // the key names the stream, so the document itself does not
      return Object.fromEntries(docs.map((d) => [d.stream, withoutStream(renderHistory(d, q, r))]));
    case 'ambiguous':
      return ambiguousHistory(first, docs, q, r);
  }
}

function sameMeta(a: AppHistory, b: AppHistory): boolean {
  return a.interval === b.interval && JSON.stringify(a.columns) === JSON.stringify(b.columns);
}

function withoutSharedInterval(doc: Record<string, unknown>, shared: string): Record<string, unknown> {
  if (doc.interval !== shared) return doc;
  const { interval: _interval, ...rest } = doc;
  return rest;
}

function withoutStream(doc: Record<string, unknown>): Record<string, unknown> {
  const { stream: _stream, ...rest } = doc;
  return rest;
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

const NOTE_COLUMN = { key: 'note', type: 'label', label: 'Note' } as const;
// words, never numeric-looking, so a reader must tell the column apart by its type or cells
const NOTES = ['estimated', 'reported'] as const;

/** app chart data; with chartLabels, a text 'note' column after the data (wire only) */
export function renderAppChartData(slug: string, key: string, d: AppChartData, r: RenderCtx): unknown {
  const labels = r.forms.forms.chartLabels;
  const where = `chart-note/${slug}/${key}`;
  const columns: Record<string, unknown>[] = d.columns.map((c) => ({ ...c }));
  if (labels) columns.push({ ...NOTE_COLUMN });
  return {
    title: d.title,
    section: d.section,
    x: d.x,
    y: [...d.y],
    columns,
    rows: d.rows.map(([date, ...values], i) => {
      const row: unknown[] = [date, ...values.map(numOrNull)];
      if (labels) row.push(choose(NOTES, r.seed, where, date ?? i));
      return row;
    }),
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
