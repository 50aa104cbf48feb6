// Pure: every MetricValue and numeric cell of an app screener row or snapshot, with the
// path where it sits. Each lands in app.metric_values; the named ones also in columns.
import { isLosslessNumber } from 'lossless-json';
import { readDecimal, readText, readTime, isRecord, DECIMAL_RE } from '../../schema/upstream/values.ts';
import { CellTally } from './cell-tally.ts';

export interface MetricCell {
  path: string;
  metric: string | null;
  value: string | null;
  unit: string | null;
  kind: string | null;
  /** ok, upstream's status (missing, stale, ...), or invalid when the value is unreadable. */
  status: string;
  freshness: string | null;
  reason: string | null;
  asOf: Date | null;
  /** The cell as sent. */
  payload: unknown;
}

// Fields that name or describe things; never numeric cells, even when they look numeric.
const NOT_NUMERIC = new Set([
  'token', 'slug', 'displayName', 'symbol', 'label', 'mixPercentLabel', 'key', 'freshness', 'sections', 'source',
  'status', 'reason', 'asOf', 'generatedAt', 'warnings', 'id', 'imageUrl', 'interval', 'name', 'title', 'section',
]);

/** A MetricValue: an object with a `value` member and at least one of its descriptors. */
export function isMetricValue(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && 'value' in v && ('metric' in v || 'unit' in v || 'kind' in v);
}

export function collectMetricCells(root: Record<string, unknown>, roots?: readonly string[]): MetricCell[] {
  const out: MetricCell[] = [];
  const keys = roots ?? Object.keys(root);
  for (const k of keys) {
    if (NOT_NUMERIC.has(k) && !roots) continue;
    if (k in root) walk(root[k], k, out);
  }
  return out;
}

function walk(node: unknown, path: string, out: MetricCell[]): void {
  if (node === undefined) return;
  if (node === null) {
    // A numeric field sent as a bare null: a cell without a value.
    out.push({ ...bare(null, path), status: 'missing' });
    return;
  }
  if (isMetricValue(node)) {
    out.push(fromMetricValue(node, path));
    return;
  }
  if (isLosslessNumber(node) || (typeof node === 'string' && DECIMAL_RE.test(node.trim()))) {
    out.push(bare(node, path));
    return;
  }
  if (Array.isArray(node)) {
    node.forEach((item, i) => {
      // Stable paths for streams and the like: their key, not their position.
      const seg = isRecord(item) && typeof item.key === 'string' ? item.key : String(i);
      walk(item, `${path}.${seg}`, out);
    });
    return;
  }
  if (isRecord(node)) {
    for (const [k, v] of Object.entries(node)) if (!NOT_NUMERIC.has(k)) walk(v, `${path}.${k}`, out);
  }
}

function fromMetricValue(mv: Record<string, unknown>, path: string): MetricCell {
  const d = readDecimal(mv.value);
  const upstreamStatus = readText(mv.status);
  return {
    path,
    metric: readText(mv.metric) ?? null,
    value: d.ok ? d.value : null,
    unit: readText(mv.unit) ?? null,
    kind: readText(mv.kind) ?? null,
    status: d.ok ? (upstreamStatus ?? (d.value === null ? 'missing' : 'ok')) : 'invalid',
    freshness: readText(mv.freshness) ?? null,
    reason: readText(mv.reason) ?? null,
    asOf: readTime(mv.asOf),
    payload: mv,
  };
}

function bare(v: unknown, path: string): MetricCell {
  const d = readDecimal(v);
  return {
    path,
    metric: null,
    value: d.ok ? d.value : null,
    unit: null,
    kind: null,
    status: d.ok ? 'ok' : 'invalid',
    freshness: null,
    reason: null,
    asOf: null,
    payload: v,
  };
}

/** The value at a path, for the named columns. */
export function cellValue(cells: readonly MetricCell[], path: string): string | null {
  return cells.find((c) => c.path === path)?.value ?? null;
}

/** Reads a numeric field in any accepted form (bare, string, MetricValue). */
export function fieldValue(v: unknown): { value: string | null; valid: boolean } {
  const d = readDecimal(isMetricValue(v) ? v.value : v);
  return d.ok ? { value: d.value, valid: true } : { value: null, valid: false };
}

/** The metric catalog: slug → unit and kind. */
export type MetricCatalog = ReadonlyMap<string, { unit: string | null; kind: string | null }>;

/**
 * The catalog slug a cell's path stands for: `row.multiples.30d` → `multiple.30d`,
 * `streams.fees.annualizedRevenue` → `stream.annualizedRevenue`, `effectiveMarketCap` as is.
 */
export function metricSlugOf(path: string): string {
  const p = path.replace(/^row\./, '');
  const win = /^(multiples|revenues)\.([^.]+)$/.exec(p);
  if (win) return `${win[1] === 'multiples' ? 'multiple' : 'revenue'}.${win[2]}`;
  const stream = /^streams\.[^.]+\.([^.]+)$/.exec(p);
  if (stream) return `stream.${stream[1]}`;
  return p;
}

/** Fills metric, unit and kind of cells that came without them (bare numbers and strings) from the catalog. */
export function enrichFromCatalog(cells: MetricCell[], catalog: MetricCatalog): MetricCell[] {
  return cells.map((c) => {
    if (c.metric !== null && c.unit !== null && c.kind !== null) return c;
    const slug = c.metric ?? metricSlugOf(c.path);
    const entry = catalog.get(slug);
    if (!entry) return c;
    return { ...c, metric: slug, unit: c.unit ?? entry.unit, kind: c.kind ?? entry.kind };
  });
}

/** How a surface's cells were read, for the write path: an unreadable one makes it `partial`. */
export function tallyCells(cells: readonly MetricCell[]): CellTally {
  const tally = new CellTally();
  for (const c of cells) tally.cell(c.status !== 'invalid');
  return tally;
}
