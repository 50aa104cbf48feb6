// The bench's code path at a tiny scale: child processes, both warehouses (a Postgres database,
// and the embedded server in a folder of its own), each with a first sync, an unchanged
// re-sync and a re-sync after the simulator's revision epoch, three `tesync worker` processes doing one
// walk queued by `tesync enqueue --wait`, the write floor and the RSS series all run, and every
// figure comes out computed. Timing targets are the bench's business (npm run bench), not the
// test suite's.
//
// Each leg is a `runBench` of its own with the others off (as `npm run bench -- --no-...` runs
// one), in the order `npm run bench` runs them, set up by a hook of its own: a leg that fails or
// hangs is named by its block, gets a timeout sized to it, and does not take the others with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sumWrites } from './figures.ts';
import { formatTable, runBench, type BenchOptions, type BenchResult, type RunFigures } from './run.ts';
import { DEFAULT_SCENARIO, type Scenario } from './scenario.ts';
import { Redis } from 'ioredis';
import { patience } from '../helpers/patience.ts';
import { QUEUE_BACKENDS } from '../helpers/queue-backends.ts';
import { createTestDatabase, redisServerUrl, type TestDatabase } from '../helpers/services.ts';

const SCENARIO: Scenario = {
  ...DEFAULT_SCENARIO,
  tokens: 3,
  historyDays: 20,
  chartsPerToken: 2,
  latencyMs: [1, 5],
  budgets: { appPublic: { limit: 40, windowMs: 2000 }, appKey: { limit: 20, windowMs: 2000 }, gateway: { limit: 40, windowMs: 2000 } },
};

describe('npm run bench, tiny', () => {
  let db: TestDatabase;
  let redisUrl: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    redisUrl = await redisServerUrl();
  });
  afterAll(async () => db?.drop());

  /** `runBench` of the tiny scenario with only the legs `legs` turns on. */
  const bench = (legs: Partial<BenchOptions>) =>
    runBench({
      scenario: SCENARIO,
      databaseUrl: db.databaseUrl,
      redisUrl,
      postgres: false,
      workers: null,
      embeddedTokens: null,
      rssTokens: [],
      writeRows: 0,
      asOf: null,
      resultsDir: null,
      // The suite keeps the machine busy: no waiting for it to go quiet.
      settleMaxMs: 0,
      log: () => {},
      ...legs,
    });

  /** What every sync run computes, on either warehouse. */
  function expectSyncRun(run: RunFigures): void {
    expect(run.requestsNecessary.total).toBeGreaterThan(0);
    expect(run.floorMs).toBeGreaterThan(0);
    expect(run.full.status).toBe('succeeded');
    expect(run.full.requests).toBeGreaterThanOrEqual(run.requestsNecessary.total);
    for (const v of [run.full.madeOverNecessary, run.full.wallOverFloor, run.full.cpuMsPer1000Requests, run.resyncShare]) {
      expect(Number.isFinite(v)).toBe(true);
    }
    expect(run.full.rowsWritten).toBeGreaterThan(0);
    // Nothing changed upstream: the re-sync asks for a fraction and writes no row of a versioned table.
    expect(run.resync.requests).toBeLessThan(run.full.requests);
    expect(run.resync.status).toBe('succeeded');
    expect(run.resync.tableWrites).toEqual({});
    // The revision epoch: new days, revised values, a relisted token, a shrunk bundle. The
    // re-sync writes rows and closes versions, and no row it writes is its old version again.
    expect(run.revision.status).toBe('succeeded');
    expect(run.revision.requests).toBeGreaterThan(run.resync.requests);
    expect(Number.isFinite(run.revisionShare)).toBe(true);
    const revised = sumWrites(run.revision.tableWrites);
    expect(revised.written).toBeGreaterThan(0);
    expect(revised.versions).toBeGreaterThan(0);
    expect(revised.rewrittenUnchanged).toBe(0);
    for (const t of ['app.metric_history', 'app.screener_rows', 'app.value_drivers', 'gateway.screener_rows']) expect(run.revision.tableWrites[t]?.versions, t).toBeGreaterThan(0);
    expect(run.revision.tableWritesMs).toBeGreaterThanOrEqual(0);
    expect(run.full.rateLimits.total).toBeGreaterThanOrEqual(run.full.rateLimits.afterHeaders);
    expect(run.fullMaxRssMb).toBeGreaterThan(0);
    // /proc/stat is there on Linux (CI): the rest of the machine is accounted for.
    if (process.platform === 'linux') {
      expect(run.full.machine.othersShare).toBeGreaterThanOrEqual(0);
      expect(run.full.machine.othersShare).toBeLessThanOrEqual(1);
      expect(run.full.machine.stealShare).toBeGreaterThanOrEqual(0);
    }
    expect(run.full.machine.settledMs).toBe(0);
    expect(run.full.postgresCpuMs).not.toBeNull();
  }

  // Read by the workers leg: the same world as this one.
  let postgres: BenchResult | undefined;

  describe('the Postgres leg, the write path and the RSS series', () => {
    beforeAll(async () => {
      postgres = await bench({ postgres: true, writeRows: 500, rssTokens: [2, 3] });
    }, patience(60_000));

    it('computes every figure', () => {
      const result = postgres!;
      expect(result.runs.map((r) => r.target)).toEqual(['postgres']);
      expectSyncRun(result.runs[0]!);
      expect(result.runs[0]!.full.withServer).toBeNull();
      expect(result.write!.rows).toBeGreaterThan(0);
      expect(Number.isFinite(result.write!.upsertOverCopy)).toBe(true);
      expect(result.rss.map((r) => r.tokens)).toEqual([2, 3]);
      expect(Number.isFinite(result.rssGrowth)).toBe(true);
      expect(result.write!.tables.every((t) => t.historyTrigger)).toBe(true);
      expect(result.targets.length).toBeGreaterThan(5);
      const names = result.targets.map((t) => t.name);
      expect(names).toContain('unchanged re-sync rows written + versions closed (postgres, 3 tokens)');
      expect(names).toContain('revision re-sync: rows rewritten without a change (postgres, 3 tokens)');
      expect(names).toContain('upsert rows/s / raw COPY rows/s (postgres, history trigger on 4 of 4 tables)');
      const text = formatTable(result);
      expect(text).toContain('wall/floor');
      expect(text).toContain('revision re-sync (epoch 2)');
      expect(text).toMatch(/postgres 3\s+revision\s+succeeded/);
    });
  });

  // One backend at a time, in the order `npm run bench` takes them.
  describe.each(QUEUE_BACKENDS)('the workers leg, queues on %s', (backend) => {
    let result: BenchResult;
    beforeAll(async () => {
      result = await bench({ workers: 3, queueBackends: [backend] });
    }, patience(40_000));

    it('measures one walk of three workers sharing one budget, and leaves nothing in Redis', async () => {
      expect(result.workers.map((w) => w.queueBackend)).toEqual([backend]);
      for (const w of result.workers) await expectWorkerLeg(w);
    });

    async function expectWorkerLeg(w: BenchResult['workers'][number]): Promise<void> {
      expect(w.processes).toBe(3);
      expect(w.tokens).toBe(3);
      // The same world as the Postgres leg: the same necessary requests and floor.
      expect(postgres, 'the Postgres leg has no result: see its failure').toBeDefined();
      expect(w.requestsNecessary).toEqual(postgres!.runs[0]!.requestsNecessary);
      expect(w.floorMs).toBe(postgres!.runs[0]!.floorMs);
      expect(w.walk.status, JSON.stringify({ messages: w.messages, problems: w.problems })).toBe('succeeded');
      expect(w.walk.requests).toBeGreaterThanOrEqual(w.requestsNecessary.total);
      // Every request the workers logged reached the simulator. (Once, on a loaded machine, the
      // simulator answered 44 and the log held 42: what the workers said is in the message.)
      const said = JSON.stringify({ byStatus: w.walk.byStatus, simRequests: w.simRequests, messages: w.messages, problems: w.problems });
      expect(w.simRequests, said).toBeGreaterThanOrEqual(w.walk.requests);
      expect(w.walk.rowsWritten).toBeGreaterThan(0);
      expect(w.tableRows['app.metric_history']).toBeGreaterThan(0);
      expect(w.wallFrom).toBe('job added');
      expect(w.queuedMs).toBeGreaterThanOrEqual(0);
      expect(w.walk.wallMs).toBeGreaterThan(0);
      expect(w.enqueueCommandMs).toBeGreaterThan(0);
      for (const v of [w.walk.wallOverFloor, w.walk.madeOverNecessary, w.walk.cpuMsPer1000Requests, w.walk.simCpuMsPer1000Requests]) expect(Number.isFinite(v)).toBe(true);
      expect(w.walk.rateLimits.total).toBeGreaterThanOrEqual(w.walk.rateLimits.afterHeaders);
      expect(w.walk.postgresCpuMs).not.toBeNull();
      expect(w.workers).toHaveLength(3);
      for (const p of w.workers) {
        expect(p.exitCode).toBe(0);
        expect(p.peakRssMb).toBeGreaterThan(0);
        expect(p.processCpuMs).toBeGreaterThan(0);
      }
      expect(w.workers.reduce((a, p) => a + p.jobsDone, 0)).toBeGreaterThan(0);
      expect(w.messages['worker ready']).toBe(3);
      expect(result.targets.map((t) => t.name)).toContain(`walk wall time / floor (3 workers on ${w.queueBackend}, 3 tokens)`);
      expect(result.targets.map((t) => t.name)).toContain(`429s after the first budget headers (3 workers on ${w.queueBackend}, 3 tokens)`);
      expect(formatTable(result)).toContain(`workers x3 ${w.queueBackend} 3`);
      if (w.queueBackend !== 'redis') return;
      const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
      try {
        const left: string[] = [];
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${w.queuePrefix}:*`, 'COUNT', 1000);
          left.push(...keys);
          cursor = next;
        } while (cursor !== '0');
        expect(left).toEqual([]);
      } finally {
        await redis.quit();
      }
    }
  });

  describe('the embedded leg', () => {
    let result: BenchResult;
    beforeAll(async () => {
      result = await bench({ embeddedTokens: 2 });
    }, patience(40_000));

    it('computes every figure, the server counted beside tesync', () => {
      expect(result.runs.map((r) => r.target)).toEqual(['embedded']);
      expectSyncRun(result.runs[0]!);
      // The embedded server's processes were found and counted beside tesync's, in every sync.
      const embedded = result.runs[0]!;
      expect(result.machine.embeddedPostgres).toMatch(/^\d+\.\d+/);
      for (const p of [embedded.full, embedded.resync, embedded.revision]) {
        expect(p.withServer!.atPeak.serverProcesses).toBeGreaterThan(1);
        expect(p.withServer!.atPeak.serverMb).toBeGreaterThan(0);
        expect(p.withServer!.atPeak.tesyncMb).toBeGreaterThan(0);
        expect(p.withServer!.atPeak.totalMb).toBeCloseTo(p.withServer!.atPeak.tesyncMb + p.withServer!.atPeak.serverMb, 6);
      }
      expect(result.targets.map((t) => t.name)).toContain('peak RSS of tesync + its server, summed (embedded, 2 tokens, MB)');
      expect(formatTable(result)).toMatch(/embedded 2\s+revision\s+succeeded/);
    });
  });

  describe('the as-of leg', () => {
    let result: BenchResult;
    beforeAll(async () => {
      // One run of each read: the figures come out either way, and a quick read's 31 runs are
      // thousands of queries here.
      result = await bench({ asOf: { tokens: 6, seedTokens: 3, days: 40, runs: 1, quickRuns: 1 } });
    }, patience(40_000));

    it('builds a deep warehouse and reads every versioned table plain and as of three instants', () => {
      const a = result.asOf!;
      expect(a.depth.copies).toBe(2);
      expect(a.depth.tokens.app).toBeGreaterThan(3);
      // The daily-changing tables have a version a day, the others one a month.
      const screener = a.depth.rows['app.screener_rows']!;
      expect(screener.history).toBe(screener.current * 40);
      expect(a.depth.rows['app.metrics']!.history).toBe(a.depth.rows['app.metrics']!.current * 2);
      expect(a.tables).toHaveLength(26);
      for (const t of a.tables) {
        expect(t.whole.asOf.map((x) => x.label)).toEqual(['first year', 'middle', 'now']);
        for (const x of [...t.whole.asOf, ...t.oneKey.asOf]) expect(Number.isFinite(x.ratio), t.table).toBe(true);
      }
      // Now, every current row; before, what was known then.
      const tokens = a.tables.find((t) => t.table === 'app.tokens')!;
      expect(tokens.whole.asOf.map((x) => x.rows)).toEqual([tokens.current, tokens.current, tokens.current]);
      expect(a.backtests.map((b) => `${b.example}, ${b.instants}`)).toEqual([
        'backtest-no-look-ahead, last 30 days',
        'backtest-no-look-ahead, 30 over the years',
        'backtest-history, last 30 days',
        'backtest-history, 30 over the years',
      ]);
      for (const b of a.backtests) expect(b.rows, b.example).toBeGreaterThan(0);
      expect(a.fill.daysFromEmpty).toBeGreaterThan(30);
      for (const v of [a.fill.fromEmptyMs, a.fill.afterGapMs, a.fill.unchangedMs, a.atFromSubquery.literalMs, a.atFromSubquery.lateralMs, a.atFromSubquery.subSelectMs]) expect(v).toBeGreaterThan(0);
      expect(a.indexes).toHaveLength(26);
      const names = result.targets.map((t) => t.name);
      expect(names).toContain('as-of read / plain read, reads of 1 ms or more (whole tables, one token of the point tables), worst');
      expect(names).toContain('as-of read - plain read, reads under 1 ms, planned at each read, worst (ms)');
      expect(names).toContain('as-of read - plain read, one key under 1 ms, prepared statements, worst (ms)');
      expect(names).toContain('daily fill after an unchanged run (ms)');
      expect(formatTable(result)).toContain('as of first year');
    });

    it('exports the daily archives: every day, nothing new, then one new day alone', () => {
      const e = result.asOf!.export!;
      expect(e.archives.map((x) => x.table)).toEqual(['app.screener_daily', 'app.token_snapshots_daily', 'gateway.screener_daily']);
      // Every row, one file a day.
      expect(e.first.rows).toBe(e.archives.reduce((n, x) => n + x.rows, 0));
      expect(e.first.files).toBe(e.archives.reduce((n, x) => n + x.days, 0));
      expect(e.first.bytes).toBeGreaterThan(0);
      // The newest day came back with the fill: one file per archive, no other day rewritten.
      expect(e.newDay.files).toBe(3);
      expect(e.newDay.rewritten).toBe(0);
      expect(e.newDay.rows).toBeGreaterThan(0);
      for (const v of [e.first.ms, e.unchangedMs, e.newDay.ms, e.floors.copyMs, e.floors.parquetMs]) expect(v).toBeGreaterThan(0);
      const names = result.targets.map((t) => t.name);
      expect(names.some((n) => n.startsWith('export of the daily archives, every day'))).toBe(true);
      expect(names.some((n) => n.startsWith('export of one new day at'))).toBe(true);
      expect(formatTable(result)).toContain('one new day');
    });
  });
});
