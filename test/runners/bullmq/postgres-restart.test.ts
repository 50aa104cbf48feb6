// The warehouse's Postgres restarted for real under `tesync worker` mid-walk, on both queue
// backends: on Redis the warehouse alone goes away for a moment; on the Postgres backend the
// queues, the shared budget and the run ledger go with it. The worker lives through it, the walk
// in flight ends (succeeded, partial or failed: recorded, never left `running`), and the next
// walk completes the mirror. The server restarted is the test's own (the embedded server in a
// temporary folder on a free port, restarted with its pg_ctl), never the machine's: one for the
// file, a database of its own for each backend's case, restarted in each.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../sim/index.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { expectAppMirror } from '../../helpers/app-mirror.ts';
import { recordFigure } from '../../helpers/fault-figures.ts';
import { startOwnPostgres, type OwnPostgres } from '../../helpers/own-servers.ts';
import { patience } from '../../helpers/patience.ts';
import { backendEnv, QUEUE_BACKENDS, removeQueueState } from '../../helpers/queue-backends.ts';
import { createDatabaseOn, redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';
import { queueWalk, runEnded } from '../../helpers/queue-walk.ts';

let sim: Simulator;
let pg: OwnPostgres;
let redisUrl: string;
beforeAll(async () => {
  // Slow enough answers that the walk lasts seconds, whatever the machine's load. The cases only
  // read its data: one serves both.
  [sim, pg, redisUrl] = await Promise.all([
    startSimulator({ tokens: 4, historyDays: 10, chartsPerToken: 1, seed: 331, latencyMs: [80, 160] }),
    startOwnPostgres('tesync-worker-pg-restart'),
    redisServerUrl(),
  ]);
});
afterAll(async () => {
  await sim?.close();
  await pg?.cleanup();
});

describe.each(QUEUE_BACKENDS)('Postgres restarted under tesync worker, queues on %s', (backend) => {
  let databaseUrl = '';
  let w: Warehouse;
  const prefix = uniqueName('tesync_pg_restart');
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    databaseUrl = await createDatabaseOn(pg.url, prefix);
    w = await openWarehouse({ databaseUrl, dataDir: '', maxConnections: 2 });
  });
  afterAll(async () => {
    await killAll(workers);
    await removeQueueState({ backend, redisUrl, databaseUrl, prefix });
    await w?.close();
  });

  it('the worker lives through it; the walk in flight is recorded, not left running; the next walk completes', async () => {
    const env = {
      DATABASE_URL: databaseUrl,
      ...backendEnv({ backend, redisUrl }),
      TE_QUEUE_PREFIX: prefix,
      TE_APP_URL: sim.url,
      TE_METRICS_PORT: '0',
      TE_WORKER_LOCK_MS: '3000',
      TE_WORKER_STALLED_INTERVAL_MS: '1000',
      ...SCHEDULES_OFF,
      LOG_LEVEL: 'info',
    };
    const worker = startWorker(env);
    workers.push(worker);
    const { metricsPort } = await worker.ready;

    // Walks queued as `tesync enqueue` queues them, from this process: the case is about the worker.
    const { runId } = await queueWalk(env);
    // Restart once the walk is writing: the first resources have their state.
    await waitFor(
      'the walk writing',
      async () => ((await w.query<{ n: number }>(sql`select count(*)::int as n from sync.resource_state`))[0]!.n >= 3 ? true : undefined),
      30_000,
      50,
    );
    const [before] = await w.query<{ status: string }>(sql`select status from sync.runs where id = ${runId}`);
    // The restart must land under the running walk, or this test proves nothing.
    expect(before?.status).toBe('running');
    const pidBefore = await pg.pid();
    const t0 = Date.now();
    await pg.restart();
    const restartMs = Date.now() - t0;
    expect(await pg.pid()).not.toBe(pidBefore);

    const first = await waitFor(
      'the walk in flight to end',
      async () => (await w.query<{ status: string }>(sql`select status from sync.runs where id = ${runId} and status <> 'running'`).catch(() => []))[0],
      90_000,
      250,
    );
    expect(first.status).toMatch(/^(succeeded|partial|failed)$/);
    const firstEndedMs = Date.now() - t0;

    const outcome = await runEnded(databaseUrl, (await queueWalk(env)).runId, { nominalMs: 90_000 });
    expect(outcome.status).toBe('succeeded');
    await expectAppMirror(w, sim.data, { bundles: 'skipped' });
    const [open] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.runs where status = 'running'`);
    expect(open!.n).toBe(0);

    // Still the same process, healthy.
    expect(worker.child.exitCode).toBeNull();
    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect(health.status).toBe(200);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    console.info(`${backend}: restart ${restartMs} ms; walk in flight ${first.status} ${firstEndedMs} ms after it; next walk ${outcome.status} in ${Date.now() - t0 - firstEndedMs} ms`);
    recordFigure(`process.postgresRestartWorker.${backend}`, { walkInFlight: first.status, nextWalk: outcome.status, workerErrors: worker.lines().filter((l) => l.level >= 50).length });
  }, patience(180_000));
});
