// Pure: every MetricValue and numeric cell of an app screener row or snapshot, with the
// path where it sits. Each lands in app.metric_values; the named ones also in columns.
import { isLosslessNumber } from 'lossless-json';
import { readDecimal, readText, readTime, isRecord, DECIMAL_RE } from '../../schema/upstream/values.ts';

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
  if (node === null || node === undefined) return;
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
