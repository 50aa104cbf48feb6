// The README's next step after the demo: `npx tesync worker --demo` keeps the demo's embedded
// warehouse fresh on the schedules, the bundled simulator as its upstream, nothing else
// installed or configured (no REDIS_URL, no DATABASE_URL: the queues are in the warehouse), and
// `tesync enqueue --wait` beside it walks now.
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { embeddedFolder, type TempFolder } from '../helpers/embedded.ts';
import { patience } from '../helpers/patience.ts';
import { killAll, startWorker, waitFor, type WorkerProcess } from '../helpers/workers.ts';

describe('tesync worker --demo after tesync demo', () => {
  let folder: TempFolder | undefined;
  const workers: WorkerProcess[] = [];
  afterAll(async () => {
    await killAll(workers);
    await folder?.cleanup();
  });

  it("runs the schedules against the bundled simulator on the demo's warehouse, and stops cleanly", async () => {
    folder = await embeddedFolder('tesync-worker-demo');
    const env = { TE_DATA_DIR: `${folder.dir}/.tesync`, LOG_LEVEL: 'warn' };
    const demo = await runCli(['demo', '--tokens', '3'], env, { timeoutMs: 150_000 });
    expect(demo.code, demo.stderr).toBe(0);
    const worker = startWorker({ ...env, LOG_LEVEL: 'info', TE_METRICS_PORT: '0', TE_SCHEDULE_SCREENER: '*/2 * * * * *', TE_SCHEDULE_CATALOG: 'off', TE_SCHEDULE_TOKEN_DATA: 'off', TE_SCHEDULE_BUNDLES: 'off' }, ['--demo']);
    workers.push(worker);
    await worker.ready;
    const warehouse = await openWarehouse({ dataDir: env.TE_DATA_DIR, maxConnections: 1 });
    try {
      const run = await waitFor(
        'a scheduled walk that succeeded',
        async () => (await warehouse.query<{ status: string; backend: string }>(sql`select status, options->>'queueBackend' as backend from sync.runs where trigger = 'schedule' and status = 'succeeded' limit 1`))[0],
        60_000,
        250,
      );
      expect(run).toEqual({ status: 'succeeded', backend: 'postgres' });
      // The demo's binding held: the simulator, whatever its port, is the one upstream.
      const bound = await warehouse.query<{ upstream: string }>(sql`select distinct upstream from sync.upstream_bindings`);
      expect(bound).toEqual([{ upstream: 'simulator' }]);
      // `tesync enqueue` configured with no upstream of its own: a walk of the workers' sources.
      // --timeout is the command's own give-up time, scaled like a hang guard: a slow machine waits.
      const enqueued = await runCli(['enqueue', '--wait', '--json', '--timeout', String(patience(90)), '--only', 'screener'], env, { timeoutMs: 100_000 });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const outcome = JSON.parse(enqueued.stdout) as { status: string; stats: { byGroup: Record<string, unknown> } };
      expect(outcome.status).toBe('succeeded');
      // Both sources: each walk reads their token lists itself (the screeners may be left to a
      // scheduled walk that queued them first: deduplicated, not in byGroup).
      expect(Object.keys(outcome.stats.byGroup)).toEqual(expect.arrayContaining(['app.tokens', 'gateway.tokens']));
    } finally {
      await warehouse.close();
    }
    worker.child.kill('SIGINT');
    expect((await worker.exited).code).toBe(0);
    expect(worker.lines().filter((l) => l.level >= 50)).toEqual([]);
  }, patience(200_000));
});
