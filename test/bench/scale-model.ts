// The scale-out model (docs/scale-out.md): what one walk costs per request and per row, fitted
// from the scale leg's walks (scale-leg.ts), and from those constants how long N workers take
// on this machine and what workers and warehouse cores an upstream needs. Pure: no IO, so its
// arithmetic is tested (scale-model.test.ts), and the doc's worked example is this code's output.

export type Backend = 'redis' | 'postgres';

/** One walk of the scale leg, as measured (test/bench/results/<time>.json, `scale.walks`). */
export interface ScaleWalk {
  backend: Backend;
  /** `tesync worker` processes. */
  processes: number;
  tokens: number;
  days: number;
  status: string;
  wallMs: number;
  requests: number;
  /** Requests of the bucket with the most: its queue takes longest at a worker's concurrency. */
  busiestBucketRequests: number;
  rows: number;
  /** Every worker's CPU over the walk. */
  workerCpuMs: number;
  /** The Postgres backends of the leg's database (the queues' too, on the Postgres backend). */
  postgresCpuMs: number;
  simCpuMs: number;
  /** The Redis server's (an upper bound: it may serve others); null on the Postgres backend. */
  queueServerCpuMs: number | null;
  responseBytes: number;
  databaseBytes: number;
  archiveBytes: number;
  peakSessions: number;
  /** CPU of processes not the walk's, as a share of all cores (machine.ts). */
  othersShare: number | null;
}

/** A cost that grows with requests and with rows: `perRequest` per request, `perRow` per row written. */
export interface Cost {
  perRequest: number;
  perRow: number;
}

/** The constants of one queue backend, fitted from its one-worker walks at two depths of history. */
export interface ScaleConstants {
  backend: Backend;
  /** Measured: requests of a walk per token (the upstream's shape, not the depth's). */
  requestsPerToken: number;
  /** Measured: the busiest bucket's share of a walk's requests. */
  busiestShare: number;
  /** Fitted: rows a first walk writes per token, `fixed` whatever the depth plus `perDay` per day of history. */
  rowsPerToken: { fixed: number; perDay: number };
  /** CPU ms. */
  workerCpuMs: Cost;
  postgresCpuMs: Cost;
  simCpuMs: Cost;
  /** Redis server CPU ms per request (not fitted per row: the queue sees jobs, not rows); null on Postgres. */
  queueServerCpuMsPerRequest: number | null;
  /** Bytes. */
  responseBytes: Cost;
  databaseBytes: Cost;
  /** Sessions on the warehouse one more worker adds (the widest walk against the narrowest). */
  sessionsPerWorker: number;
}

/** Per request and per row of one walk, as measured (no fit). */
export function walkRates(w: ScaleWalk) {
  const per = (x: number, n: number) => (n > 0 ? x / n : 0);
  return {
    requestsPerSec: per(w.requests * 1000, w.wallMs),
    rowsPerRequest: per(w.rows, w.requests),
    workerCpuMsPerRequest: per(w.workerCpuMs, w.requests),
    workerCpuUsPerRow: per(w.workerCpuMs * 1000, w.rows),
    postgresCpuMsPerRequest: per(w.postgresCpuMs, w.requests),
    postgresCpuUsPerRow: per(w.postgresCpuMs * 1000, w.rows),
    simCpuMsPerRequest: per(w.simCpuMs, w.requests),
    queueServerCpuMsPerRequest: w.queueServerCpuMs === null ? null : per(w.queueServerCpuMs, w.requests),
    responseBytesPerRequest: per(w.responseBytes, w.requests),
    databaseBytesPerRow: per(w.databaseBytes, w.rows),
  };
}

/**
 * `x = perRequest * requests + perRow * rows` through two walks (2 x 2, solved exactly). Noise
 * can make one term negative: it is then 0 and the other carries the whole deeper walk's cost.
 */
export function fitCost(a: { requests: number; rows: number; x: number }, b: { requests: number; rows: number; x: number }): Cost {
  const det = a.requests * b.rows - b.requests * a.rows;
  if (det === 0) return { perRequest: b.requests > 0 ? b.x / b.requests : 0, perRow: 0 };
  const perRequest = (a.x * b.rows - b.x * a.rows) / det;
  const perRow = (a.requests * b.x - b.requests * a.x) / det;
  const deep = b.rows >= a.rows ? b : a;
  if (perRow < 0) return { perRequest: deep.x / deep.requests, perRow: 0 };
  if (perRequest < 0) return { perRequest: 0, perRow: deep.x / deep.rows };
  return { perRequest, perRow };
}

/**
 * A backend's constants from its walks: the costs fitted through its one-worker walks at the
 * shallowest and the deepest history; sessions per worker from its fewest and most workers.
 */
export function fitConstants(walks: readonly ScaleWalk[], backend: Backend): ScaleConstants {
  const mine = walks.filter((w) => w.backend === backend && w.status === 'succeeded');
  const single = mine.filter((w) => w.processes === Math.min(...mine.map((x) => x.processes)));
  if (single.length < 2) throw new Error(`scale model: ${backend} needs one-worker walks at two depths, has ${single.length}`);
  const a = single.reduce((m, w) => (w.days < m.days ? w : m));
  const b = single.reduce((m, w) => (w.days > m.days ? w : m));
  if (a.days === b.days) throw new Error(`scale model: ${backend}'s one-worker walks are all at ${a.days} days`);
  const cost = (pick: (w: ScaleWalk) => number) => fitCost({ requests: a.requests, rows: a.rows, x: pick(a) }, { requests: b.requests, rows: b.rows, x: pick(b) });
  const perToken = (w: ScaleWalk) => w.rows / w.tokens;
  const perDay = (perToken(b) - perToken(a)) / (b.days - a.days);
  const atDepth = mine.filter((w) => w.days === b.days);
  const fewest = atDepth.reduce((m, w) => (w.processes < m.processes ? w : m));
  const most = atDepth.reduce((m, w) => (w.processes > m.processes ? w : m));
  return {
    backend,
    requestsPerToken: b.requests / b.tokens,
    busiestShare: b.busiestBucketRequests / b.requests,
    rowsPerToken: { fixed: Math.max(0, perToken(b) - perDay * b.days), perDay },
    workerCpuMs: cost((w) => w.workerCpuMs),
    postgresCpuMs: cost((w) => w.postgresCpuMs),
    simCpuMs: cost((w) => w.simCpuMs),
    queueServerCpuMsPerRequest: b.queueServerCpuMs === null ? null : b.queueServerCpuMs / b.requests,
    responseBytes: cost((w) => w.responseBytes),
    databaseBytes: cost((w) => w.databaseBytes),
    sessionsPerWorker: most.processes > fewest.processes ? (most.peakSessions - fewest.peakSessions) / (most.processes - fewest.processes) : fewest.peakSessions / fewest.processes,
  };
}

/** A cost at `rowsPerRequest` rows a request, per request. */
export const perRequestAt = (c: Cost, rowsPerRequest: number): number => c.perRequest + c.perRow * rowsPerRequest;

export type Bound = 'requests in flight' | 'worker CPU' | 'machine CPU' | 'budget';

/**
 * How long N workers take over one walk (`requests`, `rows`), as the largest of what bounds it:
 * - requests in flight: each worker runs `concurrency` jobs of a bucket at once, and a job lasts
 *   a round trip plus its own CPU and the warehouse's (Little's law), on the busiest bucket;
 * - worker CPU: a worker is one Node thread, at most one core;
 * - machine CPU: everything on this machine (workers, Postgres, the simulator, Redis) over the
 *   cores others leave free;
 * - budget: the upstream's allowed requests per second (none in the scale leg).
 */
export function predictWall(
  c: ScaleConstants,
  walk: { requests: number; rows: number },
  processes: number,
  m: { latencyMs: number; concurrency: number; cores: number; othersCores: number; budgetPerSec?: number | null; simOnMachine?: boolean },
): { wallMs: number; bound: Bound; bounds: Record<Bound, number> } {
  const rpr = walk.requests > 0 ? walk.rows / walk.requests : 0;
  const w = perRequestAt(c.workerCpuMs, rpr);
  const p = perRequestAt(c.postgresCpuMs, rpr);
  const s = m.simOnMachine === false ? 0 : perRequestAt(c.simCpuMs, rpr);
  const q = c.queueServerCpuMsPerRequest ?? 0;
  const bounds: Record<Bound, number> = {
    'requests in flight': (walk.requests * c.busiestShare * (m.latencyMs + w + p)) / (processes * m.concurrency),
    'worker CPU': (walk.requests * w) / processes,
    'machine CPU': (walk.requests * (w + p + s + q)) / Math.max(0.1, m.cores - m.othersCores),
    budget: m.budgetPerSec ? (walk.requests * 1000) / m.budgetPerSec : 0,
  };
  const bound = (Object.keys(bounds) as Bound[]).reduce((x, y) => (bounds[y] > bounds[x] ? y : x));
  return { wallMs: bounds[bound], bound, bounds };
}

/** An upstream to mirror: its tokens, days of history, the requests a second its budget allows, its round trip. */
export interface Upstream {
  tokens: number;
  days: number;
  requestsPerSec: number;
  latencyMs: number;
}

/** How the deployment is run: TE_WORKER_CONCURRENCY, the share of a core planned busy, the warehouse's cores and connections. */
export interface Deployment {
  workerConcurrency: number;
  utilization: number;
  warehouseCores: number;
  maxConnections: number;
  /** Sessions kept for everything but the workers (sync, status, BI tools, replication). */
  reservedConnections: number;
}

export interface Plan {
  backend: Backend;
  requestsPerWalk: number;
  rowsPerWalk: number;
  rowsPerRequest: number;
  /** The walk at the budget's pace: its floor. */
  walkFloorS: number;
  workerCpuMsPerRequest: number;
  postgresCpuMsPerRequest: number;
  /** Workers for the CPU (a worker at most one core, planned at `utilization`). */
  workersForCpu: number;
  /** Workers for the requests in flight on the busiest bucket (Little's law at `workerConcurrency` each). */
  workersForInFlight: number;
  workers: number;
  /** Warehouse cores the walk keeps busy at the budget's pace, planned at `utilization`. */
  warehouseCores: number;
  /** Requests a second at which the deployment's warehouse cores are used up. */
  warehouseLimitPerSec: number;
  /** Requests a second at which the queue's own server is used up: Redis is one thread; on Postgres the queue is in the warehouse figure. */
  queueLimitPerSec: number | null;
  /** Sessions the workers hold on the warehouse. */
  sessions: number;
  /** Workers the connections allow beside what is reserved. */
  connectionLimitWorkers: number;
  responseMbPerSec: number;
  /** What a first walk adds to the database (tables, indexes, archive). */
  databaseGbPerFirstWalk: number;
}

/** The deployment an upstream needs on one backend, from that backend's constants (docs/scale-out.md). */
export function plan(c: ScaleConstants, u: Upstream, d: Deployment): Plan {
  const requestsPerWalk = u.tokens * c.requestsPerToken;
  const rowsPerWalk = u.tokens * (c.rowsPerToken.fixed + c.rowsPerToken.perDay * u.days);
  const rowsPerRequest = rowsPerWalk / requestsPerWalk;
  const w = perRequestAt(c.workerCpuMs, rowsPerRequest);
  const p = perRequestAt(c.postgresCpuMs, rowsPerRequest);
  const workersForCpu = Math.ceil((u.requestsPerSec * w) / 1000 / d.utilization);
  const workersForInFlight = Math.ceil((u.requestsPerSec * c.busiestShare * (u.latencyMs + w + p)) / 1000 / d.workerConcurrency);
  const workers = Math.max(1, workersForCpu, workersForInFlight);
  return {
    backend: c.backend,
    requestsPerWalk,
    rowsPerWalk,
    rowsPerRequest,
    walkFloorS: requestsPerWalk / u.requestsPerSec,
    workerCpuMsPerRequest: w,
    postgresCpuMsPerRequest: p,
    workersForCpu,
    workersForInFlight,
    workers,
    warehouseCores: (u.requestsPerSec * p) / 1000 / d.utilization,
    warehouseLimitPerSec: (d.warehouseCores * d.utilization * 1000) / p,
    queueLimitPerSec: c.queueServerCpuMsPerRequest ? (d.utilization * 1000) / c.queueServerCpuMsPerRequest : null,
    sessions: workers * c.sessionsPerWorker,
    connectionLimitWorkers: Math.floor((d.maxConnections - d.reservedConnections) / c.sessionsPerWorker),
    responseMbPerSec: (u.requestsPerSec * perRequestAt(c.responseBytes, rowsPerRequest)) / 2 ** 20,
    databaseGbPerFirstWalk: (requestsPerWalk * perRequestAt(c.databaseBytes, rowsPerRequest)) / 2 ** 30,
  };
}

/** The warehouse CPU a request spends on the Postgres backend's queue: its per-request cost above Redis'. */
export function queueShareMs(redis: ScaleConstants, postgres: ScaleConstants): number {
  return postgres.postgresCpuMs.perRequest - redis.postgresCpuMs.perRequest;
}

/** The upstreams of docs/scale-out.md's worked example: the bench's default, the issue's 10x budget at 5,000 tokens, and ten times that again. */
export const DOC_UPSTREAMS: readonly { label: string; upstream: Upstream }[] = [
  { label: '500 tokens, 3 years, 20 req/s', upstream: { tokens: 500, days: 1095, requestsPerSec: 20, latencyMs: 100 } },
  { label: '5,000 tokens, 3 years, 200 req/s', upstream: { tokens: 5000, days: 1095, requestsPerSec: 200, latencyMs: 100 } },
  { label: '5,000 tokens, 3 years, 2,000 req/s', upstream: { tokens: 5000, days: 1095, requestsPerSec: 2000, latencyMs: 100 } },
];

/** The deployment of the worked example: tesync's defaults, cores planned 70 % busy, a warehouse of 2 cores and 100 connections, 20 of them kept for others. */
export const DOC_DEPLOYMENT: Deployment = { workerConcurrency: 4, utilization: 0.7, warehouseCores: 2, maxConnections: 100, reservedConnections: 20 };

/** The worked example's table (docs/scale-out.md), one row per upstream and backend. */
export function planTable(constants: readonly ScaleConstants[], upstreams = DOC_UPSTREAMS, d = DOC_DEPLOYMENT): string[] {
  const n = (v: number, digits = 0) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const lines = [
    '| upstream | backend | requests / walk | rows / walk | walk at the budget | worker CPU ms / req | workers (CPU, in flight) | warehouse cores | warehouse full at | queue full at | warehouse sessions (workers the connections allow) | responses MB/s | a first walk adds |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { label, upstream } of upstreams) {
    for (const c of constants) {
      const p = plan(c, upstream, d);
      lines.push(
        `| ${label} | ${c.backend} | ${n(p.requestsPerWalk)} | ${n(p.rowsPerWalk / 1e6, 1)} M | ${n(p.walkFloorS / 60, 1)} min | ${n(p.workerCpuMsPerRequest, 1)} | **${p.workers}** (${p.workersForCpu}, ${p.workersForInFlight}) | **${n(p.warehouseCores, 1)}** | ${n(p.warehouseLimitPerSec)} req/s | ${p.queueLimitPerSec === null ? 'in the warehouse' : `${n(p.queueLimitPerSec)} req/s`} | ${n(p.sessions)} (${p.connectionLimitWorkers}) | ${n(p.responseMbPerSec, 1)} | ${n(p.databaseGbPerFirstWalk, 1)} GB |`,
      );
    }
  }
  return lines;
}
