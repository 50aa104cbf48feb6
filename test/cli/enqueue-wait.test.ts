// `tesync enqueue --wait` while no worker runs: it says so within seconds, where the workers
// should be (the Redis of REDIS_URL, or the queue schema of the warehouse's Postgres), instead
// of a blank screen until its timeout; off a terminal it says each thing once; and when no
// worker has taken the walk within --wait-timeout (or --timeout) it removes the walk from the
// queue, so that it does not start later when a worker comes, and exits 1 saying so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWaitNarrator, noWorkerLine, notTakenLine, queuedLine, runLine, type WaitObservation } from '../../src/cli/enqueue.ts';
import { emptyStats } from '../../src/ports/run-ledger.ts';
import { queueSchema } from '../../src/runners/bullmq/postgres-backend.ts';
import { describeRedis } from '../../src/runners/bullmq/redis-backend.ts';
import { describePostgresUrl } from '../../src/store/connection.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { backendEnv, openTestQueue, QUEUE_BACKENDS, removeQueueState, type QueuePlace } from '../helpers/queue-backends.ts';
import { freshWarehouse, type CaseOptions } from '../helpers/mirror-fixture.ts';
import { redisServerUrl, uniqueName } from '../helpers/services.ts';

describe('enqueue --wait: what it shows', () => {
  it('the run as it goes, and a walk still queued', () => {
    expect(runLine(undefined, false, 3_400)).toBe('queued, waiting for a worker… 3s');
    expect(runLine({ stats: { ...emptyStats(), planned: 129, done: 60, failed: 5, deduplicated: 0 } }, true, 65_000)).toBe('running: 65/129 done | 5 failed | 1m05s');
    expect(runLine({ stats: { ...emptyStats(), planned: 12, done: 2, deduplicated: 3 } }, true, 2_000)).toBe('running: 2/12 done | 3 left to another run | 2s');
    expect(runLine(undefined, true, 2_000)).toBe('running… 2s');
  });

  it('where the workers should be, when none took the run', () => {
    const redis = { kind: 'redis', where: 'Redis at redis:6379 (REDIS_URL)' } as const;
    const postgres = { kind: 'postgres', where: 'the schema bullmq_tesync of Postgres at db:5432/tesync' } as const;
    expect(noWorkerLine(5_000, 0, 'tesync', redis)).toBe(
      'no worker has started this run after 5 s: none listens on Redis at redis:6379 (REDIS_URL) under TE_QUEUE_PREFIX=tesync; is `tesync worker` running with the same REDIS_URL and TE_QUEUE_PREFIX?',
    );
    expect(noWorkerLine(5_000, undefined, 'tesync', redis)).toBe('no worker has started this run after 5 s: is `tesync worker` running with the same REDIS_URL and TE_QUEUE_PREFIX (tesync)?');
    expect(noWorkerLine(5_000, 0, 'tesync', postgres)).toBe(
      'no worker has started this run after 5 s: none listens on the schema bullmq_tesync of Postgres at db:5432/tesync under TE_QUEUE_PREFIX=tesync; is `tesync worker` running with the same DATABASE_URL (or TE_DATA_DIR) and TE_QUEUE_PREFIX, without REDIS_URL?',
    );
    expect(noWorkerLine(6_000, 2, 'tesync', postgres)).toBe('no worker has started this run after 6 s: 2 workers listen under TE_QUEUE_PREFIX=tesync, busy with other walks; it starts when one is free');
  });

  it('without --wait: no worker connected is said, not that workers will pick it up', () => {
    const redis = { kind: 'redis', where: 'Redis at redis:6379 (REDIS_URL)' } as const;
    expect(queuedLine('walk.R', 'R', 0, 'tesync', redis)).toBe(
      'Queued walk walk.R (run R); no worker is connected to Redis at redis:6379 (REDIS_URL) under TE_QUEUE_PREFIX=tesync: it starts when `tesync worker` runs with the same REDIS_URL and TE_QUEUE_PREFIX.',
    );
    expect(queuedLine('walk.R', 'R', 2, 'tesync', redis)).toBe('Queued walk walk.R (run R); 2 workers are connected and will pick it up.');
    expect(queuedLine('walk.R', 'R', 1, 'tesync', redis)).toBe('Queued walk walk.R (run R); 1 worker is connected and will pick it up.');
  });
});

const redis = { kind: 'redis', where: 'Redis at redis:6379 (REDIS_URL)' } as const;
const waiting = (over: Partial<NonNullable<WaitObservation['view']>> = {}): NonNullable<WaitObservation['view']> => ({ walk: 'waiting', workers: 0, stats: { ...emptyStats(), deduplicated: 0 }, ...over });
const running = (done: number, planned: number): NonNullable<WaitObservation['view']> => ({ walk: 'completed', workers: 1, stats: { ...emptyStats(), deduplicated: 0, planned, done } });

/** What a non-TTY wait prints, looking every 500 ms for `forMs` (what `see` says at each look). */
function narrate(forMs: number, see: (atMs: number) => Omit<WaitObservation, 'elapsedMs'>): string[] {
  const step = createWaitNarrator('tesync', redis);
  const printed: string[] = [];
  for (let at = 0; at <= forMs; at += 500) {
    const s = step({ elapsedMs: at, ...see(at) });
    printed.push(...s.notices.map((n) => `tesync: ${n}`));
    if (s.log !== undefined) printed.push(`tesync: run R: ${s.log}`);
  }
  return printed;
}

/** The lines said before, their clock aside (`waiting for a worker… 10s` and `… 20s` say one thing twice). */
const clockless = (line: string) => line.replace(/(…|\|) (\d+h)?(\d+m)?\d+s$/, '$1 <clock>');
const sameTwice = (lines: string[]) => lines.filter((l, i) => lines.findIndex((m) => clockless(m) === clockless(l)) !== i);

describe('enqueue --wait off a terminal: each line once', () => {
  it('the clock aside, a line said twice is found', () => {
    expect(sameTwice(['tesync: run R: queued, waiting for a worker… 10s', 'tesync: run R: queued, waiting for a worker… 20s'])).toHaveLength(1);
    expect(sameTwice(['tesync: run R: running: 2/9 done | 10s', 'tesync: run R: running: 3/9 done | 20s', 'tesync: run R: running: 3/9 done | 1m30s'])).toEqual(['tesync: run R: running: 3/9 done | 1m30s']);
  });

  it('no worker: the notice once, not a line every 10 s repeating it', () => {
    const printed = narrate(35_000, () => ({ runStarted: false, view: waiting() }));
    expect(printed).toEqual([`tesync: ${noWorkerLine(5_000, 0, 'tesync', redis)}`]);
  });

  it('a worker comes: said once; the progress when it changed, at most every 10 s; a stuck count not again', () => {
    const printed = narrate(60_000, (at) => {
      if (at < 12_000) return { runStarted: false, view: waiting() };
      if (at < 13_000) return { runStarted: false, view: waiting({ walk: 'active', workers: 1 }) };
      // Stuck at 46/48 from 25 s on; a look that could not read the counts now and then.
      if (at % 7_000 === 0) return { runStarted: true, view: undefined };
      return { runStarted: true, view: running(Math.min(46, Math.floor((at - 13_000) / 250)), 48) };
    });
    expect(printed).toEqual([
      `tesync: ${noWorkerLine(5_000, 0, 'tesync', redis)}`,
      'tesync: a worker started the run after 12 s',
      'tesync: run R: running: 0/0 done | 12s',
      'tesync: run R: running: 36/48 done | 22s',
      'tesync: run R: running: 46/48 done | 32s',
    ]);
    expect(sameTwice(printed)).toEqual([]);
  });

  it('a walk seen taken, then waiting again (a look that failed, a retry of the walk job): never "no worker" twice', () => {
    const printed = narrate(30_000, (at) => {
      if (at < 6_000) return { runStarted: false, view: waiting() };
      if (at < 7_000) return { runStarted: false, view: waiting({ walk: 'active', workers: 1 }) };
      if (at < 9_000) return { runStarted: false, view: at % 1000 === 0 ? undefined : waiting({ walk: 'delayed', workers: 1 }) };
      return { runStarted: true, view: running(3, 10) };
    });
    expect(printed).toEqual([`tesync: ${noWorkerLine(5_000, 0, 'tesync', redis)}`, 'tesync: a worker started the run after 6 s', 'tesync: run R: running: 3/10 done | 10s']);
  });

  it('a walk refused before its run began: the failure says it, not that a worker started the run', () => {
    const printed = narrate(8_000, (at) => ({ runStarted: false, view: at < 7_000 ? waiting() : waiting({ walk: 'failed', workers: 1 }) }));
    expect(printed).toEqual([`tesync: ${noWorkerLine(5_000, 0, 'tesync', redis)}`]);
  });

  it('on a terminal the line is redrawn with its clock', () => {
    const step = createWaitNarrator('tesync', redis);
    expect(step({ elapsedMs: 3_400, runStarted: false, view: waiting() }).line).toBe('queued, waiting for a worker… 3s');
    expect(step({ elapsedMs: 65_000, runStarted: true, view: running(60, 129) }).line).toBe('running: 60/129 done | 1m05s');
    // A look that could not read the counts: the last counts seen, not a line that forgot them.
    expect(step({ elapsedMs: 66_000, runStarted: true, view: undefined }).line).toBe('running: 60/129 done | 1m06s');
    expect(createWaitNarrator('tesync', redis)({ elapsedMs: 4_000, runStarted: true, view: undefined }).line).toBe('running… 4s');
  });
});

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('enqueue --wait with no worker running', () => {
  let redisUrl: string;
  const places: QueuePlace[] = [];
  beforeAll(async () => {
    redisUrl = await redisServerUrl();
  });
  afterAll(async () => {
    for (const place of places) await removeQueueState(place);
  });

  /** A warehouse and a queue prefix of the case's own (`test`: its context, the cases being concurrent), and the environment of a command on them. */
  async function place(backend: QueuePlace['backend'], test: CaseOptions['test']): Promise<{ place: QueuePlace; env: Record<string, string> }> {
    const tw = await freshWarehouse({ test });
    const prefix = uniqueName('tesync_noworker');
    const p: QueuePlace = { backend, redisUrl, databaseUrl: tw.databaseUrl, prefix };
    places.push(p);
    return { place: p, env: { DATABASE_URL: tw.databaseUrl, ...backendEnv(p), TE_QUEUE_PREFIX: prefix, TE_GATEWAY_URL: 'http://127.0.0.1:9', TE_GATEWAY_API_KEY: 'gw_key_for_enqueue' } };
  }

  /** The walk queue as the workers would find it: the run's walk job, and how many jobs wait. */
  async function walkQueue(p: QueuePlace, runId: string): Promise<{ state: string; waiting: number }> {
    const q = openTestQueue(p, 'walk');
    try {
      const counts = await q.getJobCounts('waiting', 'delayed', 'prioritized', 'active');
      return { state: await q.getJobState(`walk.${runId}`), waiting: Object.values(counts).reduce((a, b) => a + b, 0) };
    } finally {
      await q.close();
    }
  }

  /** The run id in the line that gave up on the walk. */
  const givenUp = (stderr: string) => /no worker took the walk of run ([0-9a-f-]{36}) within/.exec(stderr)?.[1];

  it.concurrent.for(QUEUE_BACKENDS)('queues on %s: without --wait and no worker connected, it says so (exit 0, the walk queued)', { timeout: patience(40_000) }, async (backend, { expect, onTestFinished }) => {
    const { place: p, env } = await place(backend, { onTestFinished });
    const { code, stdout, stderr } = await runCli(['enqueue'], env, { timeoutMs: 40_000 });
    expect(code, stderr).toBe(0);
    const said = stdout.replace(/\n/g, ' ');
    expect(said).toMatch(/^Queued walk walk\.[0-9a-f-]{36} \(run [0-9a-f-]{36}\); no worker is connected to /);
    expect(said).toContain(`under TE_QUEUE_PREFIX=${p.prefix}: it starts when \`tesync worker\` runs with the same`);
    expect(said).not.toContain('will pick it up');
    expect(stdout.split('\n').filter((l) => l.length > 80)).toEqual([]);
    const runId = /\(run ([0-9a-f-]{36})\)/.exec(said)![1]!;
    expect(await walkQueue(p, runId)).toEqual({ state: 'waiting', waiting: 1 });
    const json = await runCli(['enqueue', '--json'], env, { timeoutMs: 40_000 });
    expect(JSON.parse(json.stdout)).toMatchObject({ workers: 0 });
  });

  // Both backends at once: each case is mostly waiting, for a worker that never comes.
  it.concurrent.for(QUEUE_BACKENDS)('queues on %s: --wait-timeout 3 and no worker: exit 1 saying so, the walk removed from the queue', { timeout: patience(40_000) }, async (backend, { expect, onTestFinished }) => {
    const { place: p, env } = await place(backend, { onTestFinished });
    const { code, stdout, stderr } = await runCli(['enqueue', '--wait', '--wait-timeout', '3'], env, { timeoutMs: 40_000 });
    expect(code, stderr).toBe(1);
    const runId = givenUp(stderr);
    expect(runId, stderr).toBeDefined();
    expect(stderr).toContain(`tesync: ${notTakenLine(runId!, 3, '--wait-timeout')}\n`);
    expect(notTakenLine('R', 3, '--wait-timeout')).toBe(
      'no worker took the walk of run R within 3 s (--wait-timeout): removed it from the queue, so it will not start later, when a worker comes; start `tesync worker` and enqueue it again',
    );
    expect(stdout).toBe('');
    // Nothing left for a worker that comes later: no walk job, nothing waiting.
    expect(await walkQueue(p, runId!)).toEqual({ state: 'unknown', waiting: 0 });
    // Said once, and nothing else (the JSON log lines aside).
    expect(stderr.trimEnd().split('\n').filter((l) => !l.startsWith('{'))).toHaveLength(1);
  });

  it.concurrent.for(QUEUE_BACKENDS)('queues on %s: Ctrl-C stops the wait only: exit 130, the walk still queued for the workers', { timeout: patience(40_000) }, async (backend, { expect, onTestFinished }) => {
    const { place: p, env } = await place(backend, { onTestFinished });
    const waiting = startCli(['enqueue', '--wait'], env, { timeoutMs: 40_000 });
    await waiting.waitFor(/no worker has started this run after/, 30_000);
    waiting.child.kill('SIGINT');
    const { code, stderr } = await waiting.exited;
    expect(code, stderr).toBe(130);
    const runId = /tesync: Ctrl-C: stopped waiting; the walk of run ([0-9a-f-]{36}) stays queued for the workers\n/.exec(stderr)?.[1];
    expect(runId, stderr).toBeDefined();
    expect(await walkQueue(p, runId!)).toEqual({ state: 'waiting', waiting: 1 });
  });

  it.concurrent.for(QUEUE_BACKENDS)('queues on %s: says within seconds that no worker has started the run, then gives up at its timeout', { timeout: patience(40_000) }, async (backend, { expect, onTestFinished }) => {
    const { place: p, env } = await place(backend, { onTestFinished });
    const { prefix, databaseUrl } = p;
    // 12 s: past the 10 s at which a line off a terminal used to repeat what the notice said.
    const { code, stdout, stderr } = await runCli(['enqueue', '--wait', '--timeout', '12'], env, { timeoutMs: 40_000 });
    expect(code, stderr).toBe(1);
    // Where the workers should be listening: this Redis, or this schema of this warehouse.
    const where =
      backend === 'redis'
        ? `Redis at ${describeRedis(redisUrl)} (REDIS_URL) under TE_QUEUE_PREFIX=${prefix}; is \`tesync worker\` running with the same REDIS_URL and TE_QUEUE_PREFIX?`
        : `the schema ${queueSchema(prefix)} of Postgres at ${describePostgresUrl(databaseUrl)} under TE_QUEUE_PREFIX=${prefix}; ` +
          'is `tesync worker` running with the same DATABASE_URL (or TE_DATA_DIR) and TE_QUEUE_PREFIX, without REDIS_URL?';
    // Said at the first look after 5 s of waiting (one every half second, later on a busy
    // machine), before the timeout's line (the order, not the wall clock: a busy machine's
    // start-up is no part of the wait, and its looks may come late).
    const said = new RegExp(`tesync: no worker has started this run after (\\d+) s: none listens on ${escapeRe(where)}\\n`).exec(stderr);
    expect(said, stderr).not.toBeNull();
    expect(Number(said![1]), "not before 5 s of the command's own waiting").toBeGreaterThanOrEqual(5);
    // --timeout came before --wait-timeout's 120 s: the walk nobody took is removed all the same.
    const runId = givenUp(stderr);
    expect(runId, stderr).toBeDefined();
    const timedOut = stderr.indexOf(`tesync: ${notTakenLine(runId!, 12, '--timeout')}\n`);
    expect(timedOut, stderr).toBeGreaterThan(-1);
    expect(said!.index).toBeLessThan(timedOut);
    expect(stdout).toBe('');
    expect(await walkQueue(p, runId!)).toEqual({ state: 'unknown', waiting: 0 });
    // Each line once (the JSON log lines aside): the notice, the timeout; no `queued, waiting
    // for a worker… 10s` saying the notice again.
    const lines = stderr.trimEnd().split('\n').filter((l) => !l.startsWith('{'));
    expect(lines, stderr).toHaveLength(2);
    expect(sameTwice(lines)).toEqual([]);
  });
});
