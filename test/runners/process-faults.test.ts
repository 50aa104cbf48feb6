// Process and service faults, for real: `tesync sync` killed with SIGKILL at seeded random
// points and run again; Postgres restarted under a running sync (a Postgres of the test's own,
// never the machine's). The warehouse must end equal to the simulator's data, with no
// duplicates and no half-written resource.
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { expectAppMirror } from '../helpers/app-mirror.ts';
import { BIN, childEnv } from '../helpers/cli.ts';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-servers.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';
import { patience } from '../helpers/patience.ts';
import { syncOnce } from '../helpers/sync.ts';
import { recordFigure } from '../helpers/fault-figures.ts';
import { Rng } from '../../sim/random.ts';

const KILL_RUNS = 20;

/** The kill points are random but the same on every run of the suite. */
function seeded(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

/** Every key of every app table is unique, and every resource marked done has its rows. */
async function expectConsistent(w: Warehouse): Promise<void> {
  const dupes = await w.query<{ n: number }>(sql`
    select (select count(*) - count(distinct (token_slug, stream, metric, ts)) from app.metric_history)
         + (select count(*) - count(distinct (token_slug, chart_key, x, series)) from app.chart_points)
         + (select count(*) - count(distinct slug) from app.tokens) as n`);
  expect(Number(dupes[0]!.n)).toBe(0);
  // Rows and state are committed together: a history marked ok always has its points.
  const orphans = await w.query<{ resource: string }>(sql`
    select s.resource from sync.resource_state s
    where s.source = 'app' and s.kind = 'history' and s.status = 'ok'
      and not exists (select 1 from app.metric_history h where 'token/' || h.token_slug || '/history' = s.resource)`);
  expect(orphans).toEqual([]);
}

describe('sync killed with SIGKILL at random points', () => {
  // Latency spreads a walk over a couple of seconds so the kills land all along it.
  const fx = useSimAndWarehouse({ tokens: 5, historyDays: 40, chartsPerToken: 2, seed: 202, latencyMs: [20, 80] });

  it(`${KILL_RUNS} killed runs, then one more run: the complete mirror, nothing duplicated or half-written`, async () => {
    const random = seeded(20261121);
    const env = childEnv({ TE_APP_URL: fx.sim.url, DATABASE_URL: fx.databaseUrl, LOG_LEVEL: 'warn', TE_CONCURRENCY: '4' });
    // How long a walk takes here, from its first request to its end: the kills are drawn
    // inside it, counted from the walk's own first request, so that a start-up slowed by the
    // machine's load moves the kill with it. Measured on the walk the killed runs make (--full,
    // at their concurrency, over a warehouse already filled), in this process: the walk is the
    // same code, and a process's start-up is no part of it.
    let walkMs = 0;
    for (let i = 0; i < 2; i++) {
      fx.sim.resetRequests();
      const r = await syncOnce(fx.sim, fx.warehouse, createTestLogger().logger, { env: { TE_CONCURRENCY: '4' } }, ['app'], { full: true });
      expect(r.status).toBe('succeeded');
      walkMs = Date.now() - fx.sim.requests[0]!.at;
    }
    const killedAt: number[] = [];
    let finishedBeforeKill = 0;
    // Until KILL_RUNS runs were really killed mid-walk (a run may finish before its kill point).
    for (let i = 0; killedAt.length < KILL_RUNS && i < KILL_RUNS * 3; i++) {
      fx.sim.resetRequests();
      // Most runs fetch everything (--full) so the kills land inside big writes; every
      // fourth is an ordinary incremental run.
      const child = spawn(process.execPath, [BIN, 'sync', ...(i % 4 === 3 ? [] : ['--full'])], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      let done = false;
      void exited.then(() => (done = true));
      // The walk has started once the simulator sees its first request.
      while (!done && fx.sim.requests.length === 0) await delay(5);
      const killAfter = Math.round(random() * Math.max(50, walkMs * 0.9));
      const outcome = done ? ('exited' as const) : await Promise.race([exited.then(() => 'exited' as const), delay(killAfter).then(() => 'timer' as const)]);
      if (outcome === 'timer') {
        child.kill('SIGKILL');
        killedAt.push(killAfter);
      } else {
        finishedBeforeKill++;
        // Walks vary with the machine's load: draw later kills inside the shortest walk seen.
        if (fx.sim.requests.length > 0) walkMs = Math.min(walkMs, Date.now() - fx.sim.requests[0]!.at);
        // A run that ends on its own must have ended well.
        expect(await exited, stderr).toBe(0);
      }
      await exited;
    }
    expect(killedAt.length).toBe(KILL_RUNS);
    const w = fx.warehouse;
    await expectConsistent(w);
    const run = await syncOnce(fx.sim, w, createTestLogger().logger, {}, ['app']);
    expect(run.status).toBe('succeeded');
    await expectAppMirror(w, fx.sim.data, { bundles: 'skipped' });
    await expectConsistent(w);
    // The killed runs were closed by the next run, not left `running` for ever.
    const [open] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.runs where status = 'running'`);
    expect(open!.n).toBe(0);
    const [abandoned] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.runs where error like 'abandoned:%'`);
    expect(abandoned!.n).toBeGreaterThan(0);
    recordFigure('process.sigkill', { runs: KILL_RUNS, walkMs, killed: killedAt.length, finishedBeforeKill, killPointsMs: killedAt, rowsLost: 0, abandonedRunsClosed: abandoned!.n });
  }, patience(240_000));
});

// The server restarted is the test's own: the embedded warehouse's Postgres in a temporary
// folder on a free port, restarted with its pg_ctl; the machine's Postgres is never touched.
describe('Postgres restarted mid-sync', () => {
  let sim: Simulator;
  let pg: OwnPostgres;
  beforeAll(async () => {
    // Slow enough answers that the walk lasts seconds, whatever the machine's load.
    sim = await startSimulator({ tokens: 8, historyDays: 40, chartsPerToken: 2, seed: 303, latencyMs: [150, 300] });
    pg = await startOwnPostgres('tesync-pg-restart');
  });
  afterAll(async () => {
    await sim?.close();
    await pg?.cleanup();
  });

  it('the run retries and completes or ends partial; the next run completes', async () => {
    const w = await openWarehouse({ databaseUrl: await pg.migratedDatabase(), dataDir: '' });
    // A case that stalls says at which step, with the first sync's last log lines.
    const firstLog = createTestLogger([], 'info');
    let at = 'starting the first sync';
    const watchdog = setInterval(() => console.error(`postgres-restart case still at "${at}"; the first sync's last lines:\n${firstLog.lines().slice(-12).join('\n')}`), patience(30_000));
    try {
      await w.migrate();
      let settled = false;
      const running = syncOnce(sim, w, firstLog.logger, {}, ['app']).finally(() => (settled = true));
      // Restart once the walk is writing: the first resources have their state.
      while (!settled) {
        const [written] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.resource_state`);
        if (written!.n >= 3) break;
        await delay(50);
      }
      // The restart must land under the running sync, or this test proves nothing.
      expect(settled).toBe(false);
      const pidBefore = await pg.pid();
      at = 'restarting Postgres';
      await pg.restart();
      expect(await pg.pid()).not.toBe(pidBefore);
      at = 'waiting for the first sync';
      let first: Awaited<typeof running> | undefined;
      let firstError: unknown;
      try {
        first = await running;
      } catch (err) {
        // Finishing the run row itself may fail while the server is down: that is the
        // "could not complete" exit; the data written so far is consistent either way.
        firstError = err;
      }
      expect(first?.status ?? 'failed').toMatch(/succeeded|partial|failed/);
      at = 'the second sync';
      const second = await syncOnce(sim, w, createTestLogger().logger, {}, ['app']);
      expect(second.status, JSON.stringify(second.stats.failures)).toBe('succeeded');
      at = 'comparing the mirror';
      await expectAppMirror(w, sim.data, { bundles: 'skipped' });
      await expectConsistent(w);
      recordFigure('process.postgresRestart', { firstRun: first?.status ?? `error: ${String(firstError).slice(0, 80)}`, secondRun: second.status, failuresInFirst: first?.stats.failed ?? null });
    } finally {
      clearInterval(watchdog);
      await w.close();
    }
  }, patience(120_000));
});
