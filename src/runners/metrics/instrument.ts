// Decorators that count what passes through the budget and the request recorder.
import type { RateBudget } from '../../upstream/budget/budget.ts';
import { STOPPED_REQUEST, tellingRequests } from '../../ports/recorder.ts';
import type { RequestRecorder } from '../../ports/recorder.ts';
import type { WorkerMetrics } from './metrics.ts';

export function countingBudget(inner: RateBudget, m: WorkerMetrics): RateBudget {
  return {
    async acquire(bucket, opts) {
      const r = await inner.acquire(bucket, opts);
      if (r.waitedMs > 0) {
        m.rateWaits.inc({ bucket });
        m.rateWaitSeconds.inc({ bucket }, r.waitedMs / 1000);
      }
      return r;
    },
    observe: (bucket, obs) => inner.observe(bucket, obs),
    snapshot: () => inner.snapshot(),
  };
}

export function countingRecorder(inner: RequestRecorder, m: WorkerMetrics): RequestRecorder {
  return tellingRequests(inner, (r) => {
    const status = r.httpStatus !== null ? String(r.httpStatus) : r.error?.startsWith(STOPPED_REQUEST) ? 'stopped' : 'network';
    m.requests.inc({ source: r.source, bucket: r.bucket, status });
  });
}
