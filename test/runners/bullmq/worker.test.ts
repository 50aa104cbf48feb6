// `tesync worker` as it runs in production: three real processes on one queue backend (Redis,
// or the warehouse's own Postgres: each case runs on both) and one Postgres warehouse, a
// simulator with a tight budget, a walk queued with `tesync enqueue --wait`. Each scenario gets
// its own database, queue prefix and simulator; the warehouse must come out equal to what the
// in-process runner writes from the same data.
import { sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../../sim/index.ts';
import { expectAppMirror } from '../../helpers/app-mirror.ts';
import { runCli } from '../../helpers/cli.ts';
import { expectGatewayMirror } from '../../helpers/gateway-mirror.ts';
import { canaryKey, createTestLogger, createTestWarehouse, redisServerUrl, uniqueName, type TestWarehouse } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';
import { warehouseDigest } from '../../helpers/warehouse-compare.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';
import { backendEnv, openTestQueue, QUEUE_BACKENDS, removeQueueState, type QueueBackendKind, type QueuePlace } from '../../helpers/queue-backends.ts';

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
const DATA: SimOptions = { tokens: 8, historyDays: 30, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] };
// Tight: the walk needs several windows of every bucket.
const TIGHT: SimOptions['rateLimits'] = { appPublic: { limit: 10, windowMs: 1000 }, appKey: { limit: 3, windowMs: 1000 }, gateway: { limit: 15, windowMs: 1000 } };
const GRACE_MS = 800;

interface Scenario {
  sim: Simulator;
  tw: TestWarehouse;
  place: QueuePlace;
  prefix: string;
  env: Record<string, string>;
  workers: WorkerProcess[];
}

interface RunOutcome {
  runId: string;
  status: string;
  durationMs: number;
  stats: { planned: number; done: number; failed: number; rows: number; deduplicated: number };
  requests: { total: number; byStatus: Record<string, number> };
}

let redisUrl: string;
let reference: Awaited<ReturnType<typeof warehouseDigest>>;
const scenarios: Scenario[] = [];

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  // What the in-process runner writes from the same data, unlimited: the expected warehouse.
  const sim = await startSimulator(DATA);
  const tw = await createTestWarehouse();
  try {
    const run = await syncOnce(sim, tw.warehouse, createTestLogger([appKey, gwKey], 'warn').logger, { appKey, gatewayKey: gwKey }, ['app', 'gateway']);
    expect(run.status).toBe('succeeded');
    reference = await warehouseDigest(tw.warehouse);
  } finally {
    await sim.close();
    await tw.cleanup();
  }
});

afterEach(async () => {
  for (const s of scenarios.splice(0)) {
    await killAll(s.workers);
    await s.sim.close();
    await removeQueueState(s.place);
    await s.tw.cleanup();
  }
});

async function scenario(backend: QueueBackendKind, sim: Partial<SimOptions> = {}, env: Record<string, string> = {}): Promise<Scenario> {
  const prefix = uniqueName('tesync_worker');
  const tw = await createTestWarehouse();
  const s: Scenario = {
    sim: await startSimulator({ ...DATA, rateLimits: TIGHT, latencyMs: [5, 40], ...sim }),
    tw,
    place: { backend, redisUrl, databaseUrl: tw.databaseUrl, prefix },
    prefix,
    env: {},
    workers: [],
  };
  scenarios.push(s);
  s.env = {
    DATABASE_URL: s.tw.databaseUrl,
    ...backendEnv(s.place),
    TE_QUEUE_PREFIX: s.prefix,
    TE_APP_URL: s.sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: s.sim.url,
    TE_GATEWAY_API_KEY: gwKey,
    TE_METRICS_PORT: '0',
    TE_REQUEST_TIMEOUT_MS: '3000',
    TE_WORKER_CONCURRENCY: '3',
    // Short bounds so that each path is taken within seconds: a job waits at most 0.5 s for
    // budget, a dead worker's lock lapses after 2 s, stalls are looked for every second.
    TE_WORKER_RATE_WAIT_MS: '500',
    TE_WORKER_LOCK_MS: '2000',
    TE_WORKER_STALLED_INTERVAL_MS: '1000',
    TE_WORKER_SHUTDOWN_GRACE_MS: String(GRACE_MS),
    ...SCHEDULES_OFF,
    LOG_LEVEL: 'info',
    ...env,
  };
  s.workers = [0, 1, 2].map(() => startWorker(s.env));
  await Promise.all(s.workers.map((w) => w.ready));
  return s;
}

async function enqueueAndWait(s: Scenario): Promise<{ outcome: RunOutcome; wallMs: number }> {
  const started = Date.now();
  const r = await runCli(['enqueue', '--wait', '--timeout', '60', '--json'], s.env, { timeoutMs: 70_000 });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return { outcome: JSON.parse(r.stdout) as RunOutcome, wallMs: Date.now() - started };
}

/** The run is complete, the warehouse mirrors the simulator, and holds exactly what the in-process runner writes (no row twice). */
async function expectCompleteMirror(s: Scenario, outcome: RunOutcome): Promise<void> {
  expect(outcome.status).toBe('succeeded');
  expect(outcome.stats.failed).toBe(0);
  expect(outcome.stats.done).toBe(outcome.stats.planned);
  await expectAppMirror(s.tw.warehouse, s.sim.data, { bundles: 'ok' });
  await expectGatewayMirror(s.tw.warehouse, s.sim.data);
  expect(await warehouseDigest(s.tw.warehouse)).toEqual(reference);
  const runs = await s.tw.warehouse.query<{ trigger: string; status: string }>(sql`select trigger, status from sync.runs`);
  expect(runs).toEqual([{ trigger: 'manual', status: 'succeeded' }]);
}

function openQueue(s: Scenario, name: string) {
  return openTestQueue(s.place, name);
}

async function jobsIn(s: Scenario, queueName: string) {
  const queue = openQueue(s, queueName);
  try {
    return await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed']);
  } finally {
    await queue.close();
  }
}

async function jobsNamed(s: Scenario, queueName: string, jobName: string) {
  return (await jobsIn(s, queueName)).filter((j) => j.name === jobName);
}

/** Waits until the named job's request is stalling at the simulator; returns the worker running it. */
async function workerRunning(s: Scenario, queueName: string, jobName: string, path: string, stallMs: number): Promise<WorkerProcess> {
  const queue = openQueue(s, queueName);
  try {
    return await waitFor(
      `${jobName} to be in flight`,
      async () => {
        if (!s.sim.requests.some((r) => r.path.startsWith(path) && Date.now() - r.at < stallMs - 500)) return undefined;
        const active = await queue.getJobs(['active']);
        const job = active.find((j) => j.name === jobName && j.processedBy);
        return job ? s.workers.find((w) => job.processedBy!.endsWith(`.${w.pid}`)) : undefined;
      },
      30_000,
      25,
    );
  } finally {
    await queue.close();
  }
}

/** Requests that reached the simulator while a Retry-After the workers had received (a 429's, or any status's: `status`) was running. */
async function requestsInsideRetryAfter(s: Scenario, status = 429): Promise<{ limited: number; inside: number }> {
  const blocks = await s.tw.warehouse.query<{ bucket: string; from_ms: string; until_ms: string }>(
    sql`select bucket, (extract(epoch from started_at) * 1000 + duration_ms)::bigint::text as from_ms,
               (extract(epoch from started_at) * 1000 + retry_after_ms)::bigint::text as until_ms
        from sync.requests where http_status = ${status} and retry_after_ms is not null`,
  );
  // Every worker knows of the block one store round trip after the 429's headers arrived; a
  // request that reaches the simulator more than 250 ms after its whole answer (a generous
  // bound for a loaded machine's event loops) was sent after the block was known. The block
  // runs from the headers, somewhere inside the request's duration: it surely holds until
  // its start plus the Retry-After, and a request sent just after it may fall before its
  // answer's end plus the Retry-After.
  const inside = s.sim.requests.filter((r) => blocks.some((b) => b.bucket === r.bucket && r.at > Number(b.from_ms) + 250 && r.at < Number(b.until_ms)));
  return { limited: blocks.length, inside: inside.length };
}

function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

describe.each(QUEUE_BACKENDS)('tesync worker, queues on %s', (backend) => {
  it('three workers complete a full walk within one shared budget; /healthz and /metrics tell the truth', async () => {
    const s = await scenario(backend);
    // A 429 with a 2 s Retry-After in the middle of the walk: every worker must hold off
    // the bucket, and jobs that would wait longer than 0.5 s go back to their queue.
    const slug = s.sim.data.appTokens().find((t) => t.coverage.charts)!.slug;
    s.sim.script(`/api/v1/tokens/${slug}/charts`, [{ status: 429, retryAfter: '2' }]);

    const { outcome, wallMs } = await enqueueAndWait(s);
    await expectCompleteMirror(s, outcome);

    const tooMany = s.sim.requests.filter((r) => r.status === 429).length;
    const { limited, inside } = await requestsInsideRetryAfter(s);
    expect(limited).toBeGreaterThanOrEqual(1);
    expect(inside).toBe(0);
    expect(tooMany).toBeLessThanOrEqual(4); // the scripted one, and at most a few probes
    // Jobs sent back to their queue by the long Retry-After started again without using an attempt.
    const appJobs = await jobsIn(s, 'fetch-app-public');
    expect(appJobs.every((j) => j.attemptsMade <= 1)).toBe(true);
    expect(appJobs.filter((j) => j.attemptsStarted > 1).length).toBeGreaterThanOrEqual(1);
    // Every worker took part.
    for (const w of s.workers) expect(w.lines().filter((l) => l.msg === 'job done').length).toBeGreaterThan(0);

    // Real figures: each worker's counters add up to the run, the shared gauges agree.
    const texts = await Promise.all(s.workers.map(async (w) => (await fetch(`http://127.0.0.1:${(await w.ready).metricsPort}/metrics`)).text()));
    const sum = (name: string, labels?: Record<string, string>) => texts.reduce((a, t) => a + metricSum(t, name, labels), 0);
    expect(sum('tesync_jobs_processed_total')).toBe(outcome.stats.done);
    expect(sum('tesync_rows_written_total')).toBe(outcome.stats.rows);
    expect(sum('tesync_upstream_requests_total')).toBe(s.sim.requests.length);
    expect(sum('tesync_upstream_requests_total', { status: '429' })).toBe(tooMany);
    expect(sum('tesync_queue_rate_limited_total', { queue: 'fetch-app-public' })).toBeGreaterThanOrEqual(1);
    expect(sum('tesync_rate_limit_waits_total')).toBeGreaterThan(0);
    // Queue gauges come from the queue backend: every worker reports the same, and they match the counters.
    expect(metricSum(texts[0]!, 'tesync_queue_jobs', { queue: 'fetch-app-public', state: 'completed' })).toBe(
      sum('tesync_jobs_processed_total', { source: 'app' }) - sum('tesync_jobs_processed_total', { group: 'bundle' }),
    );
    expect(metricSum(texts[2]!, 'tesync_queue_jobs', { queue: 'fetch-app-key', state: 'completed' })).toBe(sum('tesync_jobs_processed_total', { group: 'bundle' }));
    const lastTokens = metricSum(texts[0]!, 'tesync_resource_last_success_timestamp_seconds', { source: 'app', group: 'tokens' });
    expect(Math.abs(lastTokens - Date.now() / 1000)).toBeLessThan(120);
    const health = await fetch(`http://127.0.0.1:${(await s.workers[1]!.ready).metricsPort}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', [backend === 'redis' ? 'redis' : 'queues']: 'ok', postgres: 'ok' });

    console.info(
      `3 workers on ${backend}: walk of ${outcome.stats.done} resources, ${s.sim.requests.length} requests in ${(wallMs / 1000).toFixed(1)} s ` +
        `(run ${(outcome.durationMs / 1000).toFixed(1)} s); 429s: ${tooMany} (1 scripted); requests inside a Retry-After window: ${inside}`,
    );

    for (const w of s.workers) w.child.kill('SIGTERM');
    for (const w of s.workers) expect((await w.exited).code).toBe(0);
  });

  it('an outage announced by 503 + Retry-After mid-walk: no worker sends to the bucket inside it, the walk completes, no attempt spent', async () => {
    // One attempt per request: a 503 that spent one would fail its resource, and the run.
    const s = await scenario(backend, { outage: { bucket: 'gateway', seconds: 3, after: 15 } }, { TE_MAX_ATTEMPTS: '1' });
    const { outcome, wallMs } = await enqueueAndWait(s);
    await expectCompleteMirror(s, outcome);
    const [w] = s.sim.outages;
    expect(w).toMatchObject({ bucket: 'gateway', seconds: 3 });
    const { limited, inside } = await requestsInsideRetryAfter(s, 503);
    expect(limited).toBeGreaterThanOrEqual(1);
    expect(inside).toBe(0);
    // The simulator agrees: only what was on the way as the outage began arrived inside it.
    expect(s.sim.requests.filter((r) => r.bucket === 'gateway' && r.at > w!.startedAt + 250 && r.at < w!.endsAt)).toEqual([]);
    const gatewayJobs = await jobsIn(s, 'fetch-gateway');
    expect(gatewayJobs.every((j) => j.attemptsMade <= 1)).toBe(true);
    console.info(`outage on ${backend}: walk of ${outcome.stats.done} resources in ${(wallMs / 1000).toFixed(1)} s across 3 workers; 503s answered: ${limited}; requests inside the window: ${inside}`);
  });

  it('a worker killed with SIGKILL mid-walk: its jobs are taken over, nothing missing, nothing twice', async () => {
    // The screener answers slowly, so the worker that takes it is surely busy when it dies.
    const s = await scenario(backend, { faults: { stallMs: 1500, pathFilter: '/api/v1/screener' } });
    const walk = enqueueAndWait(s);
    const victim = await workerRunning(s, 'fetch-app-public', 'app.screener', '/api/v1/screener', 1500);
    victim.child.kill('SIGKILL');
    const { outcome, wallMs } = await walk;
    expect((await victim.exited).signal).toBe('SIGKILL');
    await expectCompleteMirror(s, outcome);
    const survivors = s.workers.filter((w) => w !== victim);
    const stalled = survivors.flatMap((w) => w.lines().filter((l) => l.msg.startsWith('stalled job')));
    expect(stalled.length).toBeGreaterThanOrEqual(1);
    // The screener the victim was fetching was fetched again, and done, by a survivor.
    expect(s.sim.requests.filter((r) => r.path.startsWith('/api/v1/screener')).length).toBeGreaterThanOrEqual(2);
    const screener = await jobsNamed(s, 'fetch-app-public', 'app.screener');
    expect(screener).toHaveLength(1);
    expect(survivors.some((w) => screener[0]!.processedBy?.endsWith(`.${w.pid}`))).toBe(true);
    console.info(`SIGKILL on ${backend}: walk completed in ${(wallMs / 1000).toFixed(1)} s; ${stalled.length} stalled job(s) taken over`);
  });

  it('SIGTERM: the worker exits 0 within its grace period, and its jobs are completed by the others', async () => {
    // The contract is slow to send: the worker holding it cannot finish within the grace period.
    const s = await scenario(backend, { faults: { stallMs: 2000, pathFilter: '/openapi-product.json' } });
    const walk = enqueueAndWait(s);
    const victim = await workerRunning(s, 'fetch-gateway', 'gateway.openapi', '/openapi-product.json', 2000);
    const signalled = Date.now();
    victim.child.kill('SIGTERM');
    const exit = await victim.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - signalled).toBeLessThan(GRACE_MS + 2000);
    const handedBack = victim.lines().filter((l) => l.msg === 'shutting down: job handed back to the queue').length;
    expect(handedBack).toBeGreaterThanOrEqual(1);
    const { outcome } = await walk;
    await expectCompleteMirror(s, outcome);
    console.info(`SIGTERM on ${backend}: exit 0 after ${exit.at - signalled} ms (grace ${GRACE_MS} ms), ${handedBack} job(s) handed back and completed by the others`);
  });
});
