// /api/v1/metrics: the metric catalog (slugs with units and kinds). Read first.
import { z } from 'zod';
import { metricCatalog, metricEntry } from '../../schema/upstream/app.ts';
import { metrics } from '../../schema/warehouse/app.ts';
import { upsertRows } from '../../src/warehouse/upsert.ts';
import { commit, rowMeta } from '../shared/commit.ts';
import { fetchData } from '../shared/fetch.ts';
import { defineJob, type JobContext } from '../types.ts';

export const normalizeMetrics = (ctx: JobContext, items: unknown[], asOf: Date | null) => {
  const rows: (typeof metrics.$inferInsert)[] = [];
  let invalidItems = 0;
  for (const item of items) {
    const p = metricEntry.safeParse(item);
    if (!p.success) {
      invalidItems++;
      continue;
    }
    rows.push({ slug: p.data.slug, unit: p.data.unit ?? null, kind: p.data.kind ?? null, group: p.data.group ?? null, payload: item, ...rowMeta(ctx, { asOf }) });
  }
  return { rows, invalidItems };
};

export const appMetricsJob = defineJob({
  name: 'app.metrics',
  source: 'app',
  group: 'catalog',
  payload: z.object({}),
  resource: () => 'metrics',
  async handle(ctx) {
    const f = await fetchData(ctx, { route: 'app.metrics' }, metricCatalog);
    const { rows, invalidItems } = normalizeMetrics(ctx, f.data, f.meta.asOf);
    const status = invalidItems ? 'partial' : 'ok';
    const n = await commit(
      ctx,
      { source: 'app', resource: 'metrics', kind: 'catalog', status, asOf: f.meta.asOf, hash: f.response.sha256, details: invalidItems ? { invalidItems } : null },
      (tx) => upsertRows(tx, metrics, rows, { target: [metrics.slug] }),
    );
    return { status, rows: n, followUps: [{ name: 'app.tokens', payload: {} }] };
  },
});
