// /api/v1/metrics: the metric catalog (slugs with units and kinds). Read first.
import { z } from 'zod';
import { metricCatalog, metricEntry } from '../../schema/upstream/app.ts';
import { metrics } from '../../schema/warehouse/app.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { defineJob, into } from '../../engine/kit/types.ts';

export const normalizeMetrics = (input: Stamp, items: unknown[], asOf: Date | null) => {
  const rows: (typeof metrics.$inferInsert)[] = [];
  let invalidItems = 0;
  for (const item of items) {
    const p = metricEntry.safeParse(item);
    if (!p.success) {
      invalidItems++;
      continue;
    }
    rows.push({ slug: p.data.slug, unit: p.data.unit ?? null, kind: p.data.kind ?? null, group: p.data.group ?? null, payload: item, ...rowMeta(input, { asOf }) });
  }
  return { rows, invalidItems };
};

export const appMetricsJob = defineJob({
  name: 'app.metrics',
  route: 'app.metrics',
  root: true,
  source: 'app',
  group: 'catalog',
  payload: z.object({}),
  resource: () => 'metrics',
  one: {
    schema: metricCatalog,
    read(input, f) {
      const { rows, invalidItems } = normalizeMetrics(input, f.data, f.meta.asOf);
      return {
        status: invalidItems ? 'partial' : 'ok',
        details: invalidItems ? { invalidItems } : null,
        writes: [into(metrics, rows, wholeSet(metrics, {}, invalidItems === 0))],
      };
    },
  },
});
