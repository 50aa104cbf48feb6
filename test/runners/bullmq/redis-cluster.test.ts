// `tesync worker` on a Redis Cluster of the test's own (three primaries, three replicas, on free
// loopback ports: test/helpers/own-cluster.ts): two workers walk a simulator whose rate limits
// they must share, first on the machine's single Redis (the reference), then on the cluster,
// then on the cluster while the primary serving the prefix's slot is killed mid-walk. The
// cluster walks must write what the single-Redis walk wrote; the one across the failover must
// complete without overrunning any bucket's limit, leave no run `running`, lose no request and
// repeat none beyond the retry rules, and never meet a CROSSSLOT. `check`, `status` and
// `reset --queues` are run against the cluster on the way.
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RecordedRequest, type SimOptions, type Simulator } from '../../../sim/index.ts';
import { loadConfig } from '../../../src/lib/config.ts';
import { keySlot, primaries } from '../../../src/upstream/redis/client.ts';
import { openRedis } from '../../../src/upstream/redis/connect.ts';
import { FETCH_QUEUES } from '../../../src/runners/bullmq/queues.ts';
import { runCli } from '../../helpers/cli.ts';
import { startOwnCluster, type OwnCluster } from '../../helpers/own-cluster.ts';
import { patience } from '../../helpers/patience.ts';
import { queueWalk, runEnded, type RunEnd } from '../../helpers/queue-walk.ts';
import { canaryKey, createTestWarehouse, redisServerUrl, uniqueName, type TestWarehouse } from '../../helpers/services.ts';
import { warehouseDigest } from '../../helpers/warehouse-compare.ts';
import { deleteRedisKeys, killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
// The IETF fields state each window and its reset: the budget paces to them without probing
// into a 429, so any request over a limit is an overrun, not a probe.
const LIMITS: SimOptions['rateLimits'] = { appPublic: { limit: 8, windowMs: 1000 }, appKey: { limit: 3, windowMs: 1000 }, gateway: { limit: 8, windowMs: 1000 } };
const DATA: SimOptions = {
  tokens: 5,
  historyDays: 6,
  chartsPerToken: 1,
  appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
  gatewayKeys: [gwKey],
  rateLimits: LIMITS,
  rateLimitFields: 'ietf',
  latencyMs: [5, 40],
};

interface Walk {
  sim: Simulator;
  tw: TestWarehouse;
  prefix: string;
  env: Record<string, string>;
  workers: WorkerProcess[];
  outcome: RunEnd;
  digest: Awaited<ReturnType<typeof warehouseDigest>>;
}

let cluster: OwnCluster;
let redisUrl: string;
let reference: Walk;
const walks: Walk[] = [];

/**
 * Two `tesync worker` processes on `url` walk a simulator of their own into a warehouse of
 * their own; `during` runs while the walk does. The workers are left running for the case.
 */
async function walkOn(url: string, during?: (w: Walk) => Promise<void>): Promise<Walk> {
  const w = { sim: await startSimulator(DATA), tw: await createTestWarehouse(), prefix: uniqueName('tesync_cluster'), workers: [] } as unknown as Walk;
  walks.push(w);
  w.env = {
    DATABASE_URL: w.tw.databaseUrl,
    REDIS_URL: url,
    TE_QUEUE_PREFIX: w.prefix,
    TE_APP_URL: w.sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: w.sim.url,
    TE_GATEWAY_API_KEY: gwKey,
    TE_METRICS_PORT: '0',
    TE_REQUEST_TIMEOUT_MS: '5000',
    TE_WORKER_CONCURRENCY: '3',
    TE_WORKER_RATE_WAIT_MS: '500',
    // Longer than a failover (cluster-node-timeout 2 s, then the election): a job active while
    // its primary is replaced keeps its lock and is not taken for stalled.
    TE_WORKER_LOCK_MS: '15000',
    TE_WORKER_STALLED_INTERVAL_MS: '5000',
    ...SCHEDULES_OFF,
    LOG_LEVEL: 'info',
  };
  w.workers = [startWorker(w.env), startWorker(w.env)];
  await Promise.all(w.workers.map((x) => x.ready));
  const { runId } = await queueWalk(w.env);
  await during?.(w);
  try {
    w.outcome = await runEnded(w.tw.databaseUrl, runId, { nominalMs: 120_000 });
  } catch (err) {
    // What the workers said, and what the queues hold, tell a stuck walk's cause.
    console.error(`the queues: ${JSON.stringify(await jobCounts(`{${w.prefix}}`).catch((e: unknown) => String(e)))}`);
    for (const [i, x] of w.workers.entries()) {
      const lines = x.stderr().split('\n');
      const warned = lines.filter((l) => !/"level":(10|20|30),/.test(l));
      console.error(`worker ${i + 1}: its warnings and errors\n${warned.join('\n').slice(-20_000)}\nand its last lines\n${lines.slice(-15).join('\n')}`);
    }
    throw err;
  }
  console.info(`run ${runId}: ${w.outcome.status}; reading the warehouse`);
  w.digest = await warehouseDigest(w.tw.warehouse);
  return w;
}

/** The paths answered 2xx, each as often as it was. */
function answered(sim: Simulator): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of sim.requests) if (r.status >= 200 && r.status < 300) out.set(r.path, (out.get(r.path) ?? 0) + 1);
  return out;
}

/**
 * Requests over a bucket's limit, counted as the simulator counts them, at the instants its
 * budget counted them (`countedAt`, after the simulated latency: not in the order they
 * arrived): a window opens with the first request after the last one ended.
 */
function overLimit(requests: readonly RecordedRequest[]): string[] {
  const limits: Record<string, { limit: number; windowMs: number }> = { 'app-public': LIMITS!.appPublic!, 'app-key': LIMITS!.appKey!, gateway: LIMITS!.gateway! };
  const over: string[] = [];
  for (const [bucket, { limit, windowMs }] of Object.entries(limits)) {
    let start = -Infinity;
    let count = 0;
    const mine = requests.filter((x) => x.bucket === bucket && x.countedAt !== undefined).sort((a, b) => a.countedAt! - b.countedAt!);
    for (const r of mine) {
      if (r.countedAt! >= start + windowMs) [start, count] = [r.countedAt!, 0];
      if (++count > limit) {
        const window = mine.filter((x) => x.countedAt! >= start && x.countedAt! < start + windowMs).map((x) => `#${x.seq} +${x.countedAt! - start} ms ${x.status}`);
        over.push(`${bucket}: #${r.seq} ${r.path}, ${count} in the window from ${start}: ${window.join(', ')}`);
      }
    }
  }
  return over;
}

/** The cluster's keys under the prefix, every primary scanned. */
async function keysUnder(keyPrefix: string): Promise<string[]> {
  const target = loadConfig({ REDIS_URL: cluster.url }).redis!;
  const redis = openRedis(target);
  try {
    const keys: string[] = [];
    await redis.ping();
    for (const node of primaries(redis)) {
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'MATCH', `${keyPrefix}:*`, 'COUNT', 1000);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
    }
    return keys;
  } finally {
    redis.disconnect();
  }
}

/** Each fetch queue's jobs by state, on the cluster. */
async function jobCounts(keyPrefix: string): Promise<Record<string, Record<string, number>>> {
  const redis = openRedis(loadConfig({ REDIS_URL: cluster.url }).redis!);
  try {
    const out: Record<string, Record<string, number>> = {};
    for (const { name } of FETCH_QUEUES) {
      const q = new Queue(name, { connection: redis, prefix: keyPrefix });
      try {
        out[name] = await q.getJobCounts('active', 'waiting', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children');
      } finally {
        await q.close();
      }
    }
    return out;
  } finally {
    redis.disconnect();
  }
}

/** Fetch jobs' starts beyond their first (a retry, or a stalled job started again), on the cluster. */
async function restartsOfJobs(keyPrefix: string): Promise<number> {
  const redis = openRedis(loadConfig({ REDIS_URL: cluster.url }).redis!);
  try {
    let n = 0;
    for (const { name } of FETCH_QUEUES) {
      const q = new Queue(name, { connection: redis, prefix: keyPrefix });
      try {
        for (const j of await q.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])) n += Math.max(0, (j.attemptsStarted ?? 1) - 1);
      } finally {
        await q.close();
      }
    }
    return n;
  } finally {
    redis.disconnect();
  }
}

beforeAll(async () => {
  [cluster, redisUrl] = await Promise.all([startOwnCluster({ nodeTimeoutMs: 2000 }), redisServerUrl()]);
  reference = await walkOn(redisUrl);
  console.info(`reference: ${reference.sim.requests.length} requests, run ${(reference.outcome.durationMs / 1000).toFixed(1)} s`);
  await killAll(reference.workers);
  expect(reference.outcome.status).toBe('succeeded');
}, patience(240_000));

// The cluster goes whatever else fails to close: its six servers must not outlive the file.
afterAll(async () => {
  try {
    for (const w of walks.splice(0)) {
      await killAll(w.workers).catch(() => undefined);
      await w.sim.close().catch(() => undefined);
      await w.tw.cleanup().catch(() => undefined);
    }
    if (reference) await deleteRedisKeys(redisUrl, reference.prefix).catch(() => 0);
  } finally {
    await cluster?.cleanup();
  }
});

describe('tesync worker on a Redis Cluster', () => {
  it('two workers walk as they do on one Redis: the same rows; check and status say where the keys are; reset --queues empties every primary', async () => {
    const w = await walkOn(cluster.url);
    console.info(`cluster: ${w.sim.requests.length} requests, run ${(w.outcome.durationMs / 1000).toFixed(1)} s`);
    expect(w.outcome.status).toBe('succeeded');
    expect(w.digest).toEqual(reference.digest);
    expect(overLimit(w.sim.requests)).toEqual([]);
    for (const x of w.workers) expect(x.stderr()).not.toContain('CROSSSLOT');

    // Every key of the prefix in the one slot of its hash tag, as the cluster counts slots.
    const keyPrefix = `{${w.prefix}}`;
    const keys = await keysUnder(keyPrefix);
    expect(keys.length).toBeGreaterThan(0);
    const slot = keySlot(`${keyPrefix}:walk`);
    expect(Number(await cluster.cli(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', `${keyPrefix}:walk`))).toBe(slot);
    expect(new Set(keys.map(keySlot))).toEqual(new Set([slot]));
    const owner = await cluster.ownerOf(slot);

    const env = { ...w.env };
    const [check, status] = await Promise.all([runCli(['check', '--json'], env), runCli(['status', '--json'], env)]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    const place = `Redis Cluster at ${cluster.nodes.map((n) => n.key).join(',')}: 3 primaries, state ok; keys under "${keyPrefix}:" in slot ${slot}, on ${owner} (replica 127.0.0.1:`;
    expect((JSON.parse(check.stdout) as { checks: { variable: string; status: string; message: string }[] }).checks.find((c) => c.variable === 'REDIS_URL')).toMatchObject({ status: 'ok', message: expect.stringContaining(place) });
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { queues: unknown }).queues).toMatchObject({ cluster: true, keyPrefix, state: 'ok', primaries: 3, slot, primary: owner });

    await killAll(w.workers);
    const reset = await runCli(['reset', '--queues'], env);
    expect(reset.code, reset.stdout + reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(new RegExp(`^Removed \\d+ Redis keys under "\\{${w.prefix}\\}:" at 127\\.0\\.0\\.1:`));
    expect(await keysUnder(keyPrefix)).toEqual([]);
  }, patience(180_000));

  // Each step is logged with its time: a case that stalls says where (`npm run test:failover`
  // runs this file alone).
  it('the primary serving the prefix killed mid-walk: a replica takes over, the workers carry on, the walk completes within every limit, nothing lost or repeated beyond the retry rules, and the next walk is taken', async () => {
    const t0 = Date.now();
    const step = (what: string) => console.info(`failover case, ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
    let killed = '';
    let promoted = '';
    const expected = [...answered(reference.sim).values()].reduce((a, b) => a + b, 0);
    const w = await walkOn(cluster.url, async (walk) => {
      // A third of the walk's requests answered: the workers are busy, the budget is in use.
      await waitFor('a third of the walk', () => (walk.sim.requests.filter((r) => r.status === 200).length >= expected / 3 ? true : undefined), 60_000, 20);
      step('a third of the walk answered');
      const slot = keySlot(`{${walk.prefix}}:walk`);
      killed = await cluster.ownerOf(slot);
      await cluster.kill(Number(killed.split(':')[1]));
      step(`${killed} killed at ${Date.now()}`);
      promoted = await cluster.settled(slot);
      step(`${promoted} promoted`);
    });
    step('the run ended, the warehouse read');
    expect(promoted).not.toBe(killed);
    expect(w.outcome.status, JSON.stringify(w.outcome.stats.failures)).toBe('succeeded');
    expect(w.digest).toEqual(reference.digest);

    // No bucket over its limit in any of the simulator's windows: none refused either.
    expect(w.sim.requests.filter((r) => r.countedAt === undefined).map((r) => r.seq)).toEqual([]);
    expect(overLimit(w.sim.requests)).toEqual([]);
    expect(w.sim.requests.filter((r) => r.status === 429)).toEqual([]);
    // No request lost: every path the reference walk had answered was answered here. None
    // made twice beyond the retry rules: a path answered twice only for a job started again.
    const here = answered(w.sim);
    expect([...here.keys()].sort()).toEqual([...answered(reference.sim).keys()].sort());
    const repeats = [...here.values()].reduce((a, n) => a + n - 1, 0);
    expect(repeats).toBeLessThanOrEqual(await restartsOfJobs(`{${w.prefix}}`));
    step('requests compared');

    // A walk queued after the failover is taken and ends: every queue still has a consumer
    // that takes jobs (a consumer the failover left blocked is replaced: consumer-watch.ts).
    const again = await queueWalk(w.env);
    const second = await runEnded(w.tw.databaseUrl, again.runId, { nominalMs: 120_000 });
    expect(second.status, JSON.stringify(second.stats.failures)).toBe('succeeded');
    step(`a walk queued after the failover ended in ${(second.durationMs / 1000).toFixed(1)} s`);

    const [running] = await w.tw.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.runs where status = 'running'`);
    expect(running!.n).toBe(0);
    for (const x of w.workers) expect(x.stderr()).not.toContain('CROSSSLOT');
    // Both workers are connected again, and leave as asked.
    for (const x of w.workers) {
      const health = await fetch(`http://127.0.0.1:${(await x.ready).metricsPort}/healthz`, { signal: AbortSignal.timeout(patience(10_000)) });
      expect(await health.json()).toEqual({ status: 'ok', redis: 'ok', postgres: 'ok' });
    }
    step('health read');
    for (const x of w.workers) x.child.kill('SIGTERM');
    for (const x of w.workers) {
      const exit = await Promise.race([x.exited, delay(patience(30_000), undefined, { ref: false })]);
      if (exit === undefined) {
        const state = processState(x.pid);
        if (process.env.TESYNC_TEST_REPORT) x.child.kill('SIGUSR2');
        throw new Error(`worker ${x.pid} has not exited 30 s after SIGTERM (${state}); its last lines:\n${x.stderr().split('\n').slice(-15).join('\n')}`);
      }
      expect(exit.code, x.stderr().slice(-2000)).toBe(0);
    }
    // A consumer whose blocking connection the failover wedged cannot close (consumer-watch.ts): dropped, said in a line.
    const perWorker = (text: string) => w.workers.map((x) => x.stderr().split('\n').filter((l) => l.includes(text)).length).join(', ');
    console.info(`failover: ${killed} killed, ${promoted} promoted; ${w.sim.requests.length} requests, ${repeats} repeated; run ${(w.outcome.durationMs / 1000).toFixed(1)} s; consumers replaced per worker: ${perWorker('replaced by a new one')}; dropped at close: ${perWorker('queue consumers still closing')}`);
  }, patience(300_000));
});

/** A process's state and CPU ticks, and its threads': what a hung worker is doing. */
function processState(pid: number): string {
  try {
    const stat = (p: string) => readFileSync(p, 'utf8').split(') ')[1]!.split(' ');
    const threads = readdirSync(`/proc/${pid}/task`).map((t) => {
      const f = stat(`/proc/${pid}/task/${t}/stat`);
      return `${t}:${f[0]} u${f[11]} s${f[12]} ${readFileSync(`/proc/${pid}/task/${t}/wchan`, 'utf8')}`;
    });
    return `threads ${threads.join(', ')}`;
  } catch (err) {
    return `not readable: ${String(err)}`;
  }
}
