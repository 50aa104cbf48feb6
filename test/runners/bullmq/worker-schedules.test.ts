// Job schedulers: registered by every worker at start, exactly one per id however many
// workers start, crash or restart; a scheduled walk is a run with trigger `schedule` that
// covers only its schedule's groups. Each case runs on both queue backends (Redis, or the
// warehouse's own Postgres), each backend with a simulator and a warehouse of its own.
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../../sim/index.ts';
import { runCli } from '../../helpers/cli.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { patience } from '../../helpers/patience.ts';
import { jobSchedulers, openTestQueue, QUEUE_BACKENDS, removeQueueState, workerEnvFor, type QueuePlace } from '../../helpers/queue-backends.ts';
import { redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { killAll, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';

let redisUrl: string;

beforeAll(async () => {
  redisUrl = await redisServerUrl();
});

describe.each(QUEUE_BACKENDS)('worker schedules, queues on %s', (backend) => {
  // The cases read sync.runs and the simulator's requests whole: a pair of each backend's own.
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
  const places: QueuePlace[] = [];
  const workers: WorkerProcess[] = [];

  // Before the fixture's teardown: no worker is left writing to the warehouse it drops.
  afterAll(async () => {
    await killAll(workers);
    for (const p of places) await removeQueueState(p);
  });

  function newPlace(): QueuePlace {
    const place = { backend, redisUrl, databaseUrl: fx.databaseUrl, prefix: uniqueName('tesync_sched') };
    places.push(place);
    return place;
  }

  const envFor = (place: QueuePlace, extra: Record<string, string>) => workerEnvFor(place, fx.sim.url, extra);

  function spawnWorker(env: Record<string, string>, args: string[] = [], level = 'info'): WorkerProcess {
    const w = startWorker({ ...env, LOG_LEVEL: level }, args);
    workers.push(w);
    return w;
  }

  /** Scheduler ids, and how many next runs (delayed walk jobs) each has queued. */
  async function schedulerState(place: QueuePlace) {
    const schedulers = await jobSchedulers(place);
    const q = openTestQueue(place, 'walk');
    try {
      const delayed = await q.getJobs(['delayed', 'waiting']);
      const next: Record<string, number> = {};
      for (const j of delayed) if (j.repeatJobKey) next[j.repeatJobKey] = (next[j.repeatJobKey] ?? 0) + 1;
      return { schedulers, next };
    } finally {
      await q.close();
    }
  }

  /** A scheduled run of the prefix's workers, recorded (not `running`), that started after `after`. */
  async function scheduledRun(place: QueuePlace, after = new Date(0)) {
    const [row] = await fx.warehouse.query<{ status: string; options: { schedule: string; queueBackend: string }; stats: { done: number; failed: number; byGroup: Record<string, unknown> } }>(
      sql`select status, options, stats from sync.runs
          where trigger = 'schedule' and status <> 'running' and options->>'queuePrefix' = ${place.prefix} and started_at > ${after.toISOString()}::timestamptz
          order by started_at limit 1`,
    );
    return row;
  }

  it('ten worker starts (in pairs, half of them crashing) leave exactly one scheduler per id', async () => {
    const place = newPlace();
    // Patterns that cannot come due during the test: only registration is under test here.
    const env = envFor(place, {
      TE_SCHEDULE_CATALOG: '0 0 1 1 *',
      TE_SCHEDULE_SCREENER: '5 0 1 1 *',
      TE_SCHEDULE_TOKEN_DATA: '10 0 1 1 *',
      TE_SCHEDULE_BUNDLES: '15 0 1 1 *',
    });
    for (let round = 0; round < 5; round++) {
      const pair = [spawnWorker(env), spawnWorker(env)];
      await Promise.all(pair.map((w) => w.ready));
      // A crash loop (SIGKILL) and orderly restarts (SIGTERM), alternately.
      for (const w of pair) w.child.kill(round % 2 === 0 ? 'SIGKILL' : 'SIGTERM');
      const exits = await Promise.all(pair.map((w) => w.exited));
      if (round % 2 === 1) expect(exits.map((e) => e.code)).toEqual([0, 0]);
    }
    const after = await schedulerState(place);
    expect(after.schedulers).toEqual([
      { id: 'bundles', pattern: '15 0 1 1 *' },
      { id: 'catalog', pattern: '0 0 1 1 *' },
      { id: 'screener', pattern: '5 0 1 1 *' },
      { id: 'token-data', pattern: '10 0 1 1 *' },
    ]);
    expect(after.next).toEqual({ bundles: 1, catalog: 1, screener: 1, 'token-data': 1 });

    // A changed pattern replaces its scheduler; a schedule switched off is removed.
    const changed = spawnWorker({ ...env, TE_SCHEDULE_SCREENER: '30 0 1 1 *', TE_SCHEDULE_BUNDLES: 'off' });
    await changed.ready;
    changed.child.kill('SIGTERM');
    expect((await changed.exited).code).toBe(0);
    const final = await schedulerState(place);
    expect(final.schedulers).toEqual([
      { id: 'catalog', pattern: '0 0 1 1 *' },
      { id: 'screener', pattern: '30 0 1 1 *' },
      { id: 'token-data', pattern: '10 0 1 1 *' },
    ]);
    expect(final.next).toEqual({ catalog: 1, screener: 1, 'token-data': 1 });
    // Eleven worker starts, two at a time: each takes seconds of CPU, more beside other test files.
  }, patience(120_000));

  it(`a scheduled walk is a run with trigger schedule, covering only its groups${backend === 'redis' ? '; schedules survive a Redis reconnect' : ''}`, async () => {
    const place = newPlace();
    fx.sim.resetRequests();
    const w = spawnWorker(envFor(place, { TE_SCHEDULE_SCREENER: '*/2 * * * * *', TE_SCHEDULE_CATALOG: 'off', TE_SCHEDULE_TOKEN_DATA: 'off', TE_SCHEDULE_BUNDLES: 'off' }));
    await w.ready;
    const run = await waitFor('a scheduled run to finish', () => scheduledRun(place), 20_000);

    // Redis only: Redis drops every connection of the worker; it reconnects, and the schedule
    // goes on. (A Postgres that restarts keeps its tables, schedulers included: nothing to
    // register again.)
    if (backend === 'redis') {
      const killedAt = new Date();
      const redis = new Redis(redisUrl);
      try {
        const clients = (await redis.client('LIST')) as string;
        const ids = clients
          .split('\n')
          .filter((l) => l.includes(` name=${place.prefix}:`))
          .map((l) => /^id=(\d+)/.exec(l)![1]!);
        expect(ids.length).toBeGreaterThanOrEqual(5);
        for (const id of ids) await redis.client('KILL', 'ID', id);
      } finally {
        await redis.quit();
      }
      const later = await waitFor('a scheduled run after the reconnect', () => scheduledRun(place, killedAt), 20_000);
      expect(later.status).toBe('succeeded');
    }

    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    expect(run.status).toBe('succeeded');
    expect(run.options.schedule).toBe('screener');
    expect(run.options.queueBackend).toBe(backend);
    expect(run.stats.failed).toBe(0);
    expect(Object.keys(run.stats.byGroup).sort()).toEqual(['app.catalog', 'app.screener', 'app.tokens']);
    const paths = new Set(fx.sim.requests.map((r) => r.path.split('?')[0]));
    expect([...paths].sort()).toEqual(['/api/v1/metrics', '/api/v1/screener', '/api/v1/tokens']);
  });

  it('a scheduled walk longer than its period is not started again while it runs: ticks are skipped, runs never overlap', async () => {
    const place = newPlace();
    // Slow answers: a token-data walk takes seconds, its schedule ticks every second.
    const slow = await startSimulator({ tokens: 4, historyDays: 5, chartsPerToken: 1, latencyMs: [300, 500] });
    try {
      // Another upstream than the earlier workers' on this warehouse: rebound on purpose. At
      // debug level it logs every job it starts, with its run.
      const w = spawnWorker(
        {
          ...envFor(place, { TE_SCHEDULE_TOKEN_DATA: '* * * * * *', TE_SCHEDULE_CATALOG: 'off', TE_SCHEDULE_SCREENER: 'off', TE_SCHEDULE_BUNDLES: 'off' }),
          TE_APP_URL: slow.url,
        },
        ['--force'],
        'debug',
      );
      await w.ready;
      await waitFor('a tick skipped while the walk runs', () => w.lines().find((l) => l.msg.startsWith('scheduled walk skipped')), 30_000);
      // A walk of the schedule asked for now is not skipped: it starts its own run.
      const asked = await runCli(['enqueue', '--schedule', 'token-data', '--json'], { ...envFor(place, {}), TE_APP_URL: slow.url });
      expect(asked.code, asked.stderr).toBe(0);
      const { runId: manualRun } = JSON.parse(asked.stdout) as { runId: string };
      await waitFor('the asked-for walk started', async () => (await fx.warehouse.query<{ id: string }>(sql`select id from sync.runs where id = ${manualRun} and trigger = 'manual'`))[0], 30_000);
      w.child.kill('SIGTERM');
      expect((await w.exited).code).toBe(0);
      const runs = await fx.warehouse.query<{ id: string }>(
        sql`select id from sync.runs
            where options->>'schedule' = 'token-data' and options->>'queuePrefix' = ${place.prefix} and trigger = 'schedule' order by started_at`,
      );
      expect(runs.length).toBeGreaterThanOrEqual(1);
      // One walk of the schedule at a time: a run opens only once the one before it has no work
      // left, so every job of a run starts before the next run does, in the worker's own log.
      // (Its record closes a little later, by its finish job: that is no work.)
      const lines = w.lines();
      for (let i = 1; i < runs.length; i++) {
        const opened = lines.findIndex((l) => l.msg === 'run started' && l.runId === runs[i]!.id);
        const lastJob = lines.findLastIndex((l) => l.msg === 'job started' && l.runId === runs[i - 1]!.id);
        expect(opened, `run ${i} logged its start`).toBeGreaterThanOrEqual(0);
        expect(lastJob, `a job of run ${i - 1} started after run ${i} did`).toBeLessThan(opened);
      }
      const skipped = w.lines().filter((l) => l.msg.startsWith('scheduled walk skipped'));
      expect(skipped.length).toBeGreaterThanOrEqual(1);
      expect(runs.map((r) => r.id)).toContain(skipped[0]!.previousRun);
    } finally {
      await slow.close();
    }
  });
});
