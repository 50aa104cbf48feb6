// What a worker exposes to Prometheus. Counters are this process's; gauges read at scrape
// time (queue counts from Redis, last successes from the warehouse) are the same on every
// worker, so dashboards should take max() over instances for those.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Labels of tesync_jobs_processed_total: a failed job also says why, as data (see jobLabels). */
export type JobLabel = 'source' | 'group' | 'status' | 'type' | 'code' | 'http_status';

export interface WorkerMetrics {
  registry: Registry;
  jobs: Counter<JobLabel>;
  jobSeconds: Histogram<'source' | 'group'>;
  rows: Counter<'source' | 'group'>;
  requests: Counter<'source' | 'bucket' | 'status'>;
  rateWaits: Counter<'bucket'>;
  rateWaitSeconds: Counter<'bucket'>;
  queuePauses: Counter<'queue'>;
  handedBack: Counter<'queue'>;
}

export interface ScrapeSources {
  /** Job counts per queue and state. */
  queueCounts(): Promise<{ queue: string; counts: Record<string, number> }[]>;
  /** Latest success per source and resource group, epoch seconds. */
  lastSuccess(): Promise<{ source: string; group: string; seconds: number }[]>;
  /** Remaining budget per bucket where known. */
  budgets(): { bucket: string; remaining: number | undefined }[];
  /** Per source and group: what its lists promise and what the warehouse holds (analytics.coverage). */
  coverage?(): Promise<{ source: string; group: string; expected: number; covered: number }[]>;
}

export function createMetrics(sources: ScrapeSources): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  new Gauge({
    name: 'tesync_queue_jobs',
    help: 'Jobs per queue and state (waiting, active, delayed, completed, failed, ...), shared by every worker.',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      this.reset();
      for (const { queue, counts } of await sources.queueCounts()) for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
    },
  });
  new Gauge({
    name: 'tesync_resource_last_success_timestamp_seconds',
    help: 'Latest successful fetch per source and resource group (sync.resource_state).',
    labelNames: ['source', 'group'],
    registers,
    async collect() {
      this.reset();
      for (const r of await sources.lastSuccess()) this.set({ source: r.source, group: r.group }, r.seconds);
    },
  });
  // One read of the coverage serves the three gauges of one scrape.
  let coverageRead: Promise<{ source: string; group: string; expected: number; covered: number }[]> | undefined;
  const coverage = () => (coverageRead ??= (sources.coverage?.() ?? Promise.resolve([])).finally(() => setImmediate(() => (coverageRead = undefined))));
  const coverageGauge = (name: string, help: string, value: (c: { expected: number; covered: number }) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['source', 'group'],
      registers,
      async collect() {
        this.reset();
        for (const c of await coverage()) this.set({ source: c.source, group: c.group }, value(c));
      },
    });
  coverageGauge('tesync_coverage_expected_resources', 'Resources the lists promise per source and group (analytics.coverage.expected).', (c) => c.expected);
  coverageGauge('tesync_coverage_held_resources', 'Of those, the resources the warehouse holds (analytics.coverage.covered).', (c) => c.covered);
  coverageGauge('tesync_coverage_ratio', 'Held per promised resource, 0 to 1 (1 when nothing is promised): below 1, a listed token, chart or period has no data.', (c) => (c.expected === 0 ? 1 : c.covered / c.expected));
  new Gauge({
    name: 'tesync_rate_budget_remaining',
    help: 'Requests left in the current upstream window per bucket, as last seen by this worker.',
    labelNames: ['bucket'],
    registers,
    collect() {
      this.reset();
      for (const b of sources.budgets()) if (b.remaining !== undefined) this.set({ bucket: b.bucket }, b.remaining);
    },
  });
  return {
    registry,
    jobs: new Counter({
      name: 'tesync_jobs_processed_total',
      help: 'Fetch jobs settled by this worker, by resulting status; for a failure also its error class (type), upstream problem code and HTTP status.',
      labelNames: ['source', 'group', 'status', 'type', 'code', 'http_status'],
      registers,
    }),
    jobSeconds: new Histogram({
      name: 'tesync_job_duration_seconds',
      help: 'Fetch job duration, rate-limit waits included.',
      labelNames: ['source', 'group'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    rows: new Counter({ name: 'tesync_rows_written_total', help: 'Warehouse rows written by this worker.', labelNames: ['source', 'group'], registers }),
    requests: new Counter({ name: 'tesync_upstream_requests_total', help: 'Upstream request attempts by HTTP status (`network`: no response).', labelNames: ['source', 'bucket', 'status'], registers }),
    rateWaits: new Counter({ name: 'tesync_rate_limit_waits_total', help: 'Requests that waited for rate budget before going out.', labelNames: ['bucket'], registers }),
    rateWaitSeconds: new Counter({ name: 'tesync_rate_limit_wait_seconds_total', help: 'Time requests spent waiting for rate budget.', labelNames: ['bucket'], registers }),
    queuePauses: new Counter({ name: 'tesync_queue_rate_limited_total', help: 'Times a bucket queue was paused for a long Retry-After or reset (job handed back, no attempt used).', labelNames: ['queue'], registers }),
    handedBack: new Counter({ name: 'tesync_jobs_handed_back_total', help: 'Jobs returned to their queue unfinished at shutdown.', labelNames: ['queue'], registers }),
  };
}

/** What a failed job's labels are read from: judgeFailure's record (src/lib/failure.ts). */
export interface FailureLabels {
  type?: string | undefined;
  code?: string | undefined;
  httpStatus?: number | undefined;
}

// Label values stay few: a class name, upstream's problem code, an HTTP status. Anything
// that does not look like one (an upstream inventing codes by the thousand) is `other`.
const CLASS_NAME = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
const PROBLEM_CODE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * Pure: the labels of one settled job. A success has source, group and status; a failure
 * adds `type`, and `code` / `http_status` when upstream answered with a problem.
 */
export function jobLabels(job: { source: string; group: string }, status: string, failure?: FailureLabels): Partial<Record<JobLabel, string>> {
  const labels: Partial<Record<JobLabel, string>> = { source: job.source, group: job.group, status };
  if (!failure) return labels;
  if (failure.type !== undefined) labels.type = CLASS_NAME.test(failure.type) ? failure.type : 'other';
  if (failure.code !== undefined) labels.code = PROBLEM_CODE.test(failure.code) ? failure.code : 'other';
  if (failure.httpStatus !== undefined) labels.http_status = Number.isInteger(failure.httpStatus) && failure.httpStatus >= 100 && failure.httpStatus <= 599 ? String(failure.httpStatus) : 'other';
  return labels;
}
