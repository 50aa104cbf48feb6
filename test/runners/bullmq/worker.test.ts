// `tesync worker` as it runs in production: three real processes on one queue backend (Redis,
// or the warehouse's own Postgres: each case runs on both) and one Postgres warehouse, a
// simulator, a walk queued for them. Each scenario gets its own database, queue prefix and
// simulator; the warehouse must come out equal to what the in-process runner writes from the
// same data. The cases about the shared budget run against a tight one; the cases that stop a
// worker hold one request of the walk unanswered, so that the worker sending it is surely busy
// and cannot finish that job by waiting. The first case queues its walk with `tesync enqueue
// --wait`, a real process, as an operator does; the others queue theirs as that command does,
// from this process (test/helpers/queue-walk.ts): what they look at is what the workers do.
import { sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, SimOptions, Simulator } from '../../../sim/index.ts';
import { expectAppMirror } from '../../helpers/app-mirror.ts';
import { startCli, type CliProcess } from '../../helpers/cli.ts';
import { expectGatewayMirror } from '../../helpers/gateway-mirror.ts';
import { patience } from '../../helpers/patience.ts';
import { freshSimAndWarehouse, useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName, type TestWarehouse } from '../../helpers/services.ts';
import { warehouseDigest } from '../../helpers/warehouse-compare.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';
import { queueWalk, runEnded, type RunEnd } from '../../helpers/queue-walk.ts';
import { backendEnv, openTestQueue, QUEUE_BACKENDS, removeQueueState, type QueueBackendKind, type QueuePlace } from '../../helpers/queue-backends.ts';

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
// Eight tokens: under TIGHT the walk needs several windows of every bucket. Few days and one
// chart each: the number of requests, not of rows, is what the cases are about.
const DATA: SimOptions = { tokens: 8, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] };
const TIGHT: SimOptions['rateLimits'] = { appPublic: { limit: 10, windowMs: 1000 }, appKey: { limit: 3, windowMs: 1000 }, gateway: { limit: 15, windowMs: 1000 } };
// No limit: a case that stops a worker would only wait for windows.
const UNLIMITED: SimOptions['rateLimits'] = {};
const GRACE_MS = 800;
// Longer than any case runs: a request held this long is never answered while a case watches it.
const HOLD_MS = 600_000;
// For the cases that stop a worker: its held request must still be waiting when the worker is
// stopped, so the request timeout here is only a hang guard. (Their budget has no limit: the
// slots a killed worker leaves leased hold nothing up.)
const STOPPABLE = { TE_REQUEST_TIMEOUT_MS: String(patience(15_000)) };
// A killed worker's budget leases last its request timeout and a little more: the survivors
// may wait that long for its slots, so the case that kills one keeps the timeout short.
const KILLABLE = { TE_REQUEST_TIMEOUT_MS: String(patience(3_000)) };
// The least margin of requestsInsideRetryAfter: a store round trip among three busy workers on an idle machine, with room.
const IDLE_STORE_MS = 250;

interface Scenario {
  sim: Simulator;
  tw: TestWarehouse;
  place: QueuePlace;
  prefix: string;
  env: Record<string, string>;
  workers: WorkerProcess[];
  /** `tesync enqueue --wait` processes: ended with the scenario if a failed case left one waiting. */
  walks: CliProcess[];
  /** Aborted with the scenario: a walk awaited from this process stops waiting. */
  over: AbortController;
}

interface WalkResult {
  outcome: RunOutcome;
  /** When the test queued it, on this machine's clock. */
  queuedAt: number;
  wallMs: number;
}

/** The run as `tesync enqueue --wait --json` prints it. */
type RunOutcome = RunEnd;

let redisUrl: string;
let reference: Awaited<ReturnType<typeof warehouseDigest>>;
const scenarios: Scenario[] = [];
// What the in-process runner writes from the same data, unlimited: the expected warehouse.
const expected = useSimAndWarehouse(DATA);

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  const run = await expected.sync(createTestLogger([appKey, gwKey], 'warn').logger, { appKey, gatewayKey: gwKey }, ['app', 'gateway']);
  expect(run.status).toBe('succeeded');
  reference = await warehouseDigest(expected.warehouse);
});

// A scenario's processes and queues; its simulator and warehouse go when its case ends.
afterEach(async () => {
  for (const s of scenarios.splice(0)) {
    s.over.abort();
    for (const w of s.walks) w.child.kill('SIGKILL');
    await Promise.all(s.walks.map((w) => w.exited));
    await killAll(s.workers);
    await removeQueueState(s.place);
  }
});

async function scenario(backend: QueueBackendKind, sim: Partial<SimOptions> = {}, env: Record<string, string> = {}): Promise<Scenario> {
  const prefix = uniqueName('tesync_worker');
  const { sim: started, tw } = await freshSimAndWarehouse({ ...DATA, rateLimits: TIGHT, latencyMs: [5, 40], ...sim });
  const s: Scenario = {
    sim: started,
    tw,
    place: { backend, redisUrl, databaseUrl: tw.databaseUrl, prefix },
    prefix,
    env: {},
    workers: [],
    walks: [],
    over: new AbortController(),
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

/**
 * Queues a walk and returns at once, while the case does what it does during the walk. The
 * walk's failure (one of its checks here) reaches the case when the case awaits it; a rejection
 * is handled from the start, so that a case failing before it awaits its walk leaves nothing
 * unhandled for vitest to blame on another file.
 *
 * `byCli`: queued and awaited by `tesync enqueue --wait --json`, a real process, which must exit
 * 0 having printed the run's outcome and nothing on stderr. Otherwise queued as that command
 * queues it and awaited as it awaits it (sync.runs), from this process.
 */
function startWalk(s: Scenario, { byCli = false } = {}): Promise<WalkResult> {
  const queuedAt = Date.now();
  const result = byCli ? walkByCli(s, queuedAt) : walkFromHere(s, queuedAt);
  result.catch(() => {});
  return result;
}

function walkByCli(s: Scenario, queuedAt: number): Promise<WalkResult> {
  // --timeout is in seconds: a hang guard, as long as the process's own.
  const walk = startCli(['enqueue', '--wait', '--timeout', String(patience(60)), '--json'], s.env, { timeoutMs: 70_000 });
  s.walks.push(walk);
  return walk.exited.then((r) => {
    // It prints its outcome on stdout; any line on stderr is one this test does not expect.
    expect(
      r.stderr.split('\n').filter((l) => l.trim() !== ''),
      'lines tesync enqueue --wait printed on stderr',
    ).toEqual([]);
    expect(r.code, r.stdout).toBe(0);
    return { outcome: JSON.parse(r.stdout) as RunOutcome, queuedAt, wallMs: Date.now() - queuedAt };
  });
}

async function walkFromHere(s: Scenario, queuedAt: number): Promise<WalkResult> {
  const { runId } = await queueWalk(s.env);
  const outcome = await runEnded(s.tw.databaseUrl, runId, { nominalMs: 60_000, signal: s.over.signal });
  return { outcome, queuedAt, wallMs: Date.now() - queuedAt };
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

/** Holds the first request to `path` at the simulator (HOLD_MS): the job sending it stays busy until its worker gives up on it. */
function holdFirst(s: Scenario, path: string): void {
  s.sim.script(path, [{ status: 200, delayMs: HOLD_MS }]);
}

/** Waits until the held request to `path` is in flight (arrived, unanswered); returns it and the worker whose job `jobName` sent it. */
async function heldBy(s: Scenario, queueName: string, jobName: string, path: string): Promise<{ worker: WorkerProcess; request: RecordedRequest }> {
  const queue = openQueue(s, queueName);
  try {
    return await waitFor(
      `${jobName}'s held request to be in flight`,
      async () => {
        const request = s.sim.requests.find((r) => r.path.startsWith(path));
        if (request?.status !== 0) return undefined;
        const active = await queue.getJobs(['active']);
        const job = active.find((j) => j.name === jobName && j.processedBy);
        const worker = job && s.workers.find((w) => job.processedBy!.endsWith(`.${w.pid}`));
        return worker && { worker, request };
      },
      30_000,
      25,
    );
  } finally {
    await queue.close();
  }
}

interface RetryAfterView {
  /** Answers of the status that carried a Retry-After, as tesync recorded them. */
  limited: number;
  /** Requests that reached the simulator inside a Retry-After, started by a worker once it was known. */
  inside: string[];
  /** When the first of those answers was received, on the warehouse's clock. */
  firstKnownMs: number;
  marginMs: number;
  /** When tesync started a request the simulator saw (its arrival, if tesync did not record it). */
  startOf(r: RecordedRequest): number;
}

/**
 * Requests that reached the simulator while a Retry-After the workers had received (a 429's, or
 * any status's: `status`) was running, judged by when tesync started each (sync.requests, found
 * by the simulator's X-Request-Id), not by when it arrived: a request started before the block
 * was known may arrive late on a busy machine.
 *
 * The block runs from the answer's headers, somewhere inside that request: it surely holds until
 * the request's start plus the Retry-After, and it is known to its worker by the answer's end.
 * A worker may start a request a little after that on a grant the shared store made before it
 * heard of the block: the answer's worker tells the store while the answer arrives, the other
 * acts on its grant a moment after the store made it, and each places its times on the
 * warehouse's clock by a round trip of its own. Each of those lags is a hop through a busy event
 * loop and a local round trip, as is the time from a request's start to its arrival at the
 * simulator: the margin is twice the longest such time this run saw, on top of IDLE_STORE_MS. A
 * slower machine widens it, so it checks less of the window but cannot fail the case.
 */
async function requestsInsideRetryAfter(s: Scenario, status = 429): Promise<RetryAfterView> {
  const rows = await s.tw.warehouse.query<{ request_id: string | null; bucket: string; start_ms: number; duration_ms: number; http_status: number | null; retry_after_ms: number | null }>(
    sql`select request_id, bucket, (extract(epoch from started_at) * 1000)::float8 as start_ms, duration_ms, http_status, retry_after_ms from sync.requests`,
  );
  const startBySeq = new Map<number, number>();
  for (const r of rows) {
    const seq = /^sim-\d+-(\d+)$/.exec(r.request_id ?? '')?.[1];
    if (seq !== undefined) startBySeq.set(Number(seq), Number(r.start_ms));
  }
  const startOf = (r: RecordedRequest) => startBySeq.get(r.seq) ?? r.at;
  const slowestMs = Math.max(0, ...s.sim.requests.filter((r) => startBySeq.has(r.seq)).map((r) => Math.abs(r.at - startOf(r))));
  const marginMs = IDLE_STORE_MS + 2 * slowestMs;
  const blocks = rows
    .filter((b) => b.http_status === status && b.retry_after_ms !== null)
    .map((b) => ({ bucket: b.bucket, knownMs: Number(b.start_ms) + b.duration_ms, untilMs: Number(b.start_ms) + b.retry_after_ms! }));
  const inside = s.sim.requests
    .filter((r) => blocks.some((b) => b.bucket === r.bucket && startOf(r) > b.knownMs + marginMs && r.at < b.untilMs))
    .map((r) => `#${r.seq} ${r.path} (${r.status})`);
  return { limited: blocks.length, inside, firstKnownMs: Math.min(...blocks.map((b) => b.knownMs)), marginMs, startOf };
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
  it('three workers complete a full walk within one shared budget; /healthz and /metrics tell the truth; then a token list refused (its envelope names a key twice): the workers plan its children from the stored list, the walk ends partial', async () => {
    const s = await scenario(backend);
    // A 429 with a 2 s Retry-After in the middle of the walk: every worker must hold off
    // the bucket, and jobs that would wait longer than 0.5 s go back to their queue.
    const slug = s.sim.data.appTokens().find((t) => t.coverage.charts)!.slug;
    s.sim.script(`/api/v1/tokens/${slug}/charts`, [{ status: 429, retryAfter: '2' }]);

    const { outcome, queuedAt, wallMs } = await startWalk(s, { byCli: true });
    await expectCompleteMirror(s, outcome);

    const tooMany = s.sim.requests.filter((r) => r.status === 429).length;
    const { limited, inside, marginMs } = await requestsInsideRetryAfter(s);
    expect(limited).toBeGreaterThanOrEqual(1);
    expect(inside).toEqual([]);
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
    // The last success the gauge reports is this walk's: after it was queued, before now.
    const lastTokens = metricSum(texts[0]!, 'tesync_resource_last_success_timestamp_seconds', { source: 'app', group: 'tokens' });
    expect(lastTokens * 1000).toBeGreaterThanOrEqual(queuedAt);
    expect(lastTokens * 1000).toBeLessThanOrEqual(Date.now());
    const health = await fetch(`http://127.0.0.1:${(await s.workers[1]!.ready).metricsPort}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', [backend === 'redis' ? 'redis' : 'queues']: 'ok', postgres: 'ok' });

    console.info(
      `3 workers on ${backend}: walk of ${outcome.stats.done} resources, ${s.sim.requests.length} requests in ${(wallMs / 1000).toFixed(1)} s ` +
        `(run ${(outcome.durationMs / 1000).toFixed(1)} s); 429s: ${tooMany} (1 scripted); requests inside a Retry-After window: ${inside.length} (margin ${Math.round(marginMs)} ms)`,
    );

    // The next walk of the same workers, on the mirror this one left, with no limit: its token
    // list refused.
    await refusedListWalk(s);

    for (const w of s.workers) w.child.kill('SIGTERM');
    for (const w of s.workers) expect((await w.exited).code).toBe(0);
  });

  it('an outage announced by 503 + Retry-After mid-walk: no worker sends to the bucket inside it, the walk completes, no attempt spent', async () => {
    // One attempt per request: a 503 that spent one would fail its resource, and the run.
    const s = await scenario(backend, { outage: { bucket: 'gateway', seconds: 3, after: 15 } }, { TE_MAX_ATTEMPTS: '1' });
    const { outcome, wallMs } = await startWalk(s);
    await expectCompleteMirror(s, outcome);
    const [w] = s.sim.outages;
    expect(w).toMatchObject({ bucket: 'gateway', seconds: 3 });
    const { limited, inside, firstKnownMs, marginMs, startOf } = await requestsInsideRetryAfter(s, 503);
    expect(limited).toBeGreaterThanOrEqual(1);
    expect(inside).toEqual([]);
    // The simulator agrees: what arrived inside the outage, by its own clock, was on the way
    // before the workers heard of it (started before the first 503 was received, by the margin).
    const late = s.sim.requests.filter((r) => r.bucket === 'gateway' && r.at >= w!.startedAt && r.at < w!.endsAt && startOf(r) > firstKnownMs + marginMs);
    expect(late.map((r) => `#${r.seq} ${r.path} (${r.status})`)).toEqual([]);
    const gatewayJobs = await jobsIn(s, 'fetch-gateway');
    expect(gatewayJobs.every((j) => j.attemptsMade <= 1)).toBe(true);
    console.info(
      `outage on ${backend}: walk of ${outcome.stats.done} resources in ${(wallMs / 1000).toFixed(1)} s across 3 workers; 503s answered: ${limited}; ` +
        `requests inside the window: ${inside.length} (margin ${Math.round(marginMs)} ms)`,
    );
  });

  /**
   * A walk after a complete one, whose token list is refused whole (its `meta` names
   * `servedAt` twice: nothing of it can be told apart, unlike a NUL in one item, which refuses
   * that item alone): the workers plan its children from the stored list, the walk ends partial.
   */
  async function refusedListWalk(s: Scenario): Promise<void> {
    s.sim.setRateLimits(UNLIMITED);
    s.sim.setForms({ duplicatedKeys: { 'app.tokens': 'servedAt' } });
    s.sim.resetRequests();
    const { outcome } = await startWalk(s);
    expect(outcome.status).toBe('partial');
    expect(outcome.stats.failed).toBe(1);
    const [state] = await s.tw.warehouse.query<{ status: string; last_error: string }>(sql`select status, last_error from sync.resource_state where source = 'app' and resource = 'tokens'`);
    expect(state!.status).toBe('invalid');
    expect(state!.last_error).toMatch(/"servedAt" appears twice.*planned from the list of /);
    // Every listed token's snapshot was asked again (no marker vouched for it), under the refused list.
    const snapshots = s.sim.data.appTokens().filter((t) => t.coverage.snapshot).map((t) => `/api/v1/tokens/${t.slug}`);
    expect(snapshots.length).toBeGreaterThan(0);
    for (const path of snapshots) expect(s.sim.requests.some((r) => r.path === path && r.status === 200), path).toBe(true);
    await expectAppMirror(s.tw.warehouse, s.sim.data, { bundles: 'ok' });
    await expectGatewayMirror(s.tw.warehouse, s.sim.data);
  }

  it('a worker killed with SIGKILL mid-walk: its jobs are taken over, nothing missing, nothing twice', async () => {
    // The screener's first request is held: the worker that sends it is surely busy when it dies.
    const s = await scenario(backend, { rateLimits: UNLIMITED }, KILLABLE);
    holdFirst(s, '/api/v1/screener');
    const walk = startWalk(s);
    const { worker: victim } = await heldBy(s, 'fetch-app-public', 'app.screener', '/api/v1/screener');
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

  it('SIGTERM: the worker leaves by its grace period, handing back what it cannot finish, and exits 0; the others complete its jobs', async () => {
    // The contract's first request is held: the worker that sends it can end that job only by
    // its grace period running out. At debug level it logs every job it starts.
    // Its job lock outlives a loaded machine's late renewals: the job leaves by its hand-back, not by a lapsed lock.
    const s = await scenario(backend, { rateLimits: UNLIMITED }, { ...STOPPABLE, LOG_LEVEL: 'debug', TE_WORKER_LOCK_MS: String(patience(2_000)) });
    holdFirst(s, '/openapi-product.json');
    const walk = startWalk(s);
    const { worker: victim, request: held } = await heldBy(s, 'fetch-gateway', 'gateway.openapi', '/openapi-product.json');
    const signalled = Date.now();
    victim.child.kill('SIGTERM');
    const exit = await victim.exited;
    expect(exit.code).toBe(0);
    // It left with its request unanswered: it did not wait for that job.
    expect(held.status).toBe(0);
    // In its own order: the signal, the grace period running out, the held job handed back, the
    // end; and no job started once the grace was over.
    const lines = victim.lines();
    const signalAt = lines.findIndex((l) => l.msg === 'shutting down: finishing active jobs');
    const graceAt = lines.findIndex((l) => l.msg === 'grace period over: aborting active jobs and handing them back');
    expect(signalAt).toBeGreaterThanOrEqual(0);
    expect(graceAt).toBeGreaterThan(signalAt);
    const afterGrace = lines.slice(graceAt + 1);
    const handedBack = afterGrace.filter((l) => l.msg === 'shutting down: job handed back to the queue');
    expect(handedBack.map((l) => l.job)).toContain('gateway.openapi');
    expect(afterGrace.filter((l) => l.msg === 'job started').map((l) => `${String(l.job)} ${String(l.resource)}`)).toEqual([]);
    expect(afterGrace.map((l) => l.msg)).toContain('worker stopped');
    // Its shutdown warned of nothing but the grace period running out.
    const warnings = lines.slice(signalAt).filter((l) => l.level >= 40 && l !== lines[graceAt]);
    expect(warnings.map((l) => JSON.stringify(l))).toEqual([]);

    const { outcome } = await walk;
    await expectCompleteMirror(s, outcome);
    // The held job was done by another worker; the victim's request is recorded as stopped by
    // its shutdown (not answered, not timed out).
    const contract = await jobsNamed(s, 'fetch-gateway', 'gateway.openapi');
    expect(contract).toHaveLength(1);
    expect(s.workers.filter((w) => w !== victim).some((w) => contract[0]!.processedBy?.endsWith(`.${w.pid}`))).toBe(true);
    const sent = await s.tw.warehouse.query<{ http_status: number | null; error: string | null }>(
      sql`select http_status, error from sync.requests where path like '/openapi-product.json%' order by started_at`,
    );
    expect(sent[0]).toMatchObject({ http_status: null, error: expect.stringMatching(/^stopped: /) });
    expect(sent.at(-1)).toMatchObject({ http_status: 200 });
    console.info(`SIGTERM on ${backend}: exit 0 after ${exit.at - signalled} ms (grace ${GRACE_MS} ms), ${handedBack.length} job(s) handed back and completed by the others`);
  });

  it('SIGTERM twice (a stop, and the npx launcher passing it on): the second ends the grace at once, no job left locked', async () => {
    // A grace longer than the case: only the second signal can end the held job. The issue: a
    // worker stopped through npx died of a second SIGTERM mid-walk, its job locked until stalled.
    const s = await scenario(backend, { rateLimits: UNLIMITED }, { ...STOPPABLE, TE_WORKER_SHUTDOWN_GRACE_MS: String(patience(600_000)), TE_WORKER_LOCK_MS: String(patience(2_000)) });
    holdFirst(s, '/openapi-product.json');
    const walk = startWalk(s);
    const { worker: victim } = await heldBy(s, 'fetch-gateway', 'gateway.openapi', '/openapi-product.json');
    victim.child.kill('SIGTERM');
    await waitFor('the first signal taken', async () => victim.lines().some((l) => l.msg === 'shutting down: finishing active jobs') || undefined, 30_000, 25);
    victim.child.kill('SIGTERM');
    const exit = await victim.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    const msgs = victim.lines().map((l) => l.msg);
    expect(msgs).toContain('SIGTERM again: handing the active jobs back to the queue now');
    expect(victim.lines().filter((l) => l.msg === 'shutting down: job handed back to the queue').map((l) => l.job)).toContain('gateway.openapi');
    expect(msgs.at(-1)).toBe('worker stopped');
    const { outcome } = await walk;
    await expectCompleteMirror(s, outcome);
    // Handed back, not taken over: no worker found a job of the victim's stalled.
    for (const w of s.workers) expect(w.lines().filter((l) => /stalled/.test(l.msg)).map((l) => l.msg)).toEqual([]);
  });
});
