// `npm run bench`: the cost of a sync against its floors, measured in one run.
//
//   npm run bench                      500 tokens, 3 years daily, 5 charts, the as-of leg (about 35 minutes)
//   npm run bench -- --quick           a smoke-sized run (about two minutes)
//   npm run bench -- --tokens 50 --days 365 --no-rss --no-embedded
//   npm run bench -- --node-flags=--max-old-space-size=192   (runtime settings compared)
//   npm run bench -- --tokens 50 --no-postgres --no-embedded --no-rss   (the workers leg alone)
//   npm run bench -- --no-postgres --no-embedded --no-rss --no-workers   (the as-of leg alone)
//   npm run bench -- --no-postgres --no-embedded --no-rss --no-workers --no-as-of --no-write   (the replay leg alone)
//   npm run bench -- --scale           the scale leg alone: 1, 2 and 4 workers on each queue backend, no budget (about 4 minutes)
//   npm run bench -- --scale --scale-tokens 100 --scale-days 180 --scale-depth-days 30 --scale-workers 1,2,4 --queues both
//
// Every sync runs in a child process (its CPU time and peak RSS are its own), against the
// simulator in another child process (its CPU is reported apart). With the embedded warehouse,
// the Postgres server tesync starts is sampled from here too (process-memory.ts). The
// distributed leg runs `tesync worker` processes and `tesync enqueue --wait` as a user does
// (worker-leg.ts). The as-of leg reads a warehouse of years of daily versions, plain and as of
// past instants (as-of-leg.ts), then exports its daily archives as Parquet (export-leg.ts;
// --no-export: not). The scale leg (--scale, alone) walks one world by 1, 2 and 4 workers on each
// queue backend with no budget, fits the cost per request and per row, and sets the speedups
// against the model (scale-leg.ts, scale-model.ts, docs/scale-out.md). The replay leg replays a
// first sync of 100 tokens from its archive, against the sync's own time (replay-leg.ts; --no-replay: not). Figures go to stdout as a table and to test/bench/results/<time>.json. See
// docs/performance.md for the method.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { SimData } from '../../sim/data.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { measureWriteFloor, type WriteFloor } from './copy-floor.ts';
import { budgetFloorMs, ratio, requestsNecessary, rssGrowth, sumWrites, total, type PerBucket, type TableWrites } from './figures.ts';
import { machineDuring, readCpuTimes, settle, type MachineDuring } from './machine.ts';
import { compiledScript } from '../helpers/compiled-bin.ts';
import { embeddedFolder } from '../helpers/embedded.ts';
import { deleteRedisKeys } from '../helpers/workers.ts';
import { QUEUE_BACKENDS, type QueueBackendKind } from '../helpers/queue-backends.ts';
import { watchMemory, type MemoryPeak } from './process-memory.ts';
import type { BudgetPolicy } from '../../src/upstream/budget/budget.ts';
import { DEFAULT_SCENARIO, simOptions, type Scenario } from './scenario.ts';
import type { SimReply, SimRequest } from './sim-process.ts';
import type { PhaseResult, SyncJob, SyncJobResult, Target } from './sync-process.ts';
import { runWorkerLeg, type WorkerLegResult } from './worker-leg.ts';
import { runAsOfLeg, type AsOfLegResult } from './as-of-leg.ts';
import { replayLine, runReplayLeg, type ReplayLegResult } from './replay-leg.ts';
import { EXPORT_LIMITS, type ExportLegResult } from './export-leg.ts';
import type { TableReads } from './as-of-reads.ts';
import { runScaleLeg, scaleLines, type ScaleLegResult, type ScaleOptions } from './scale-leg.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface BenchOptions {
  scenario: Scenario;
  databaseUrl: string;
  /** The Postgres leg (first sync, re-sync, revision re-sync, write path); false: skipped (and with it the write path). */
  postgres?: boolean;
  /** `tesync worker` processes of the distributed leg (the scenario's tokens, one walk); null: no such leg. */
  workers: number | null;
  /** TE_WORKER_CONCURRENCY of the distributed leg; absent: tesync's default. */
  workerConcurrency?: number;
  /** Redis of the distributed leg on Redis: its queues and budget go under a fresh key prefix, removed afterwards. */
  redisUrl: string;
  /** The queue backends the distributed leg runs on, one walk each (default both). */
  queueBackends?: readonly QueueBackendKind[];
  /** Tokens of the embedded-warehouse run (same scenario otherwise); null: no such run. */
  embeddedTokens: number | null;
  /** Token counts of the peak-RSS series (a count equal to the main run reuses it). */
  rssTokens: number[];
  /** Rows written again for the upsert-versus-COPY figure; 0: skipped. */
  writeRows: number;
  /** Where the JSON goes; null: not written. */
  resultsDir: string | null;
  /** Rate budget policy overrides for every sync (to compare with the defaults). */
  budgetPolicy?: Partial<BudgetPolicy>;
  /** Extra Node flags for the sync processes (e.g. a heap cap), to compare runtime settings. */
  nodeFlags?: string[];
  /** Longest wait for a quiet machine before each measured sync; 0: no wait. */
  settleMaxMs: number;
  /**
   * The as-of leg: a first sync of `seedTokens` tokens with `days` days of history, deepened to
   * `tokens` tokens and `days` daily versions; null: no such leg. `quickRuns`: runs of a read
   * under 5 ms (default as-of-reads.ts QUICK_RUNS); the smoke test takes fewer, as it checks
   * that the figures come out, not what they are.
   */
  asOf: { tokens: number; seedTokens: number; days: number; runs: number; quickRuns?: number; exportLeg?: boolean } | null;
  /**
   * The replay leg: a first sync of `tokens` tokens with nothing to wait for, replayed from its
   * archive into another database (`check`: then compared with it); absent or null: no such leg.
   */
  replay?: { tokens: number; check: boolean } | null;
  /** The scale leg (scale-leg.ts): one walk per worker count and queue backend, no budget; absent or null: no such leg. */
  scale?: ScaleOptions | null;
  log: (line: string) => void;
}

export interface RunFigures {
  target: Target['kind'];
  tokens: number;
  requestsNecessary: PerBucket & { total: number };
  floorMs: number;
  floorByBucketMs: PerBucket;
  full: PhaseFigures;
  /** The same sync again, nothing changed upstream. */
  resync: PhaseFigures;
  /** The same sync again after the simulator moved to its revision epoch (2). */
  revision: PhaseFigures;
  /** Re-sync requests as a share of the full sync's. */
  resyncShare: number | null;
  /** Revision re-sync requests as a share of the full sync's. */
  revisionShare: number | null;
  /** Peak RSS of the first sync's process (process.resourceUsage().maxRSS). */
  fullMaxRssMb: number;
  baselineRssMb: number;
  /** openWarehouse in the first sync's process (embedded: initdb and the server's start). */
  fullOpenMs: number;
}

export interface PhaseFigures extends PhaseResult {
  /** Requests made / requests necessary (for the re-sync: / the full sync's necessary). */
  madeOverNecessary: number | null;
  wallOverFloor: number | null;
  cpuMsPer1000Requests: number | null;
  simCpuMs: number;
  simCpuMsPer1000Requests: number | null;
  /** tesync CPU per row written, in microseconds. */
  cpuUsPerRow: number | null;
  rowsPerSec: number;
  /** What the rest of the machine did meanwhile (test/bench/machine.ts). */
  machine: MachineDuring;
  /**
   * Embedded: tesync's process and the server's processes, sampled over the sync process's
   * whole life (start-up, the server's start, migration, the phase, closing); null otherwise.
   */
  withServer: MemoryPeak | null;
}

/** The distributed leg: `tesync worker` processes sharing one queue backend and budget, one walk. */
export interface WorkersRunFigures extends Omit<WorkerLegResult, 'phase' | 'simCpuMs' | 'machine'> {
  target: 'workers';
  /** Where the queues, the budget and the run ledger were: Redis, or the warehouse's Postgres. */
  queueBackend: QueueBackendKind;
  /** How many `tesync worker` processes. */
  processes: number;
  /** TE_WORKER_CONCURRENCY; null: tesync's default. */
  workerConcurrency: number | null;
  /** TE_QUEUE_PREFIX of the leg: its Redis keys (removed after it), or its Postgres schema (dropped with the leg's database). */
  queuePrefix: string;
  tokens: number;
  requestsNecessary: PerBucket & { total: number };
  floorMs: number;
  floorByBucketMs: PerBucket;
  /** The walk: a first walk into an empty warehouse, as the Postgres leg's first sync. */
  walk: PhaseFigures;
}

export interface BenchResult {
  startedAt: string;
  budgetPolicy: Partial<BudgetPolicy> | null;
  nodeFlags: string[];
  machine: { cpus: number; cpuModel: string; memGb: number; node: string; postgres: string | null; embeddedPostgres: string | null };
  scenario: Scenario;
  runs: RunFigures[];
  /** The distributed leg, one per queue backend; empty when skipped. */
  workers: WorkersRunFigures[];
  /** The as-of leg; null when skipped. */
  asOf: AsOfLegResult | null;
  /** The replay leg; null when skipped. */
  replay: ReplayLegResult | null;
  /** The scale leg; null when skipped. */
  scale: ScaleLegResult | null;
  write: (WriteFloor & { upsertOverCopy: number | null }) | null;
  rss: { tokens: number; peakRssMb: number; baselineRssMb: number; wallMs: number; requests: number }[];
  rssGrowth: number | null;
  targets: { name: string; value: string; target: string; met: boolean | null }[];
  durationMs: number;
}

export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const started = Date.now();
  const s = o.scenario;
  const runs: RunFigures[] = [];
  const rss: BenchResult['rss'] = [];
  let write: BenchResult['write'] = null;
  const pgVersion = await serverVersion(o.databaseUrl);

  // Postgres: first sync, unchanged re-sync, revision re-sync, then the write path against COPY.
  const main = o.postgres === false ? null : await withDatabase(o.databaseUrl, 'bench', async (url) => {
    const { figures } = await scenarioRun(o, s, { kind: 'postgres', url });
    if (o.writeRows > 0) {
      o.log(`write path: up to ${o.writeRows} rows through upsertRows and through COPY`);
      write = await withDatabase(o.databaseUrl, 'bench_write', async (targetUrl) => {
        const source = await openWarehouse({ databaseUrl: url, dataDir: '' });
        const target = await openWarehouse({ databaseUrl: targetUrl, dataDir: '' });
        try {
          await target.migrate();
          const w = await measureWriteFloor(source, target, targetUrl, o.writeRows);
          return { ...w, upsertOverCopy: ratio(w.upsertRowsPerSec, w.copyRowsPerSec) };
        } finally {
          await source.close();
          await target.close();
        }
      });
    }
    return figures;
  });
  if (main) {
    runs.push(main);
    rss.push({ tokens: s.tokens, peakRssMb: main.fullMaxRssMb, baselineRssMb: main.baselineRssMb, wallMs: main.full.wallMs, requests: main.full.requests });
  }

  // Distributed: `tesync worker` processes on one queue backend and budget, one walk of the same scenario, per backend.
  const workers: WorkersRunFigures[] = [];
  if (o.workers !== null) for (const backend of o.queueBackends ?? QUEUE_BACKENDS) workers.push(await workersRun(o, s, o.workers, backend));

  // The embedded warehouse: the same syncs with no DATABASE_URL, in a TE_DATA_DIR of their own.
  let embeddedPostgres: string | null = null;
  if (o.embeddedTokens !== null) {
    // Traversable by the `postgres` user the server runs as under root; its cleanup stops a
    // server a sync process that died left running.
    const folder = await embeddedFolder('tesync-bench-embedded');
    try {
      const run = await scenarioRun(o, { ...s, tokens: o.embeddedTokens }, { kind: 'embedded', dir: folder.dir });
      embeddedPostgres = run.serverVersion;
      runs.push(run.figures);
    } finally {
      await folder.cleanup();
    }
  }

  const asOf = o.asOf === null ? null : await asOfRun(o, o.asOf);
  const replay = o.replay ? await replayRun(o, o.replay) : null;
  // The scale leg's walks wait less for a quiet machine: eight of them.
  const scaleO = { ...o, settleMaxMs: Math.min(o.settleMaxMs, 30_000) };
  const scale = o.scale ? await runScaleLeg(s, o.scale, o.workerConcurrency ?? null, (sc, n, backend) => workersRun(scaleO, sc, n, backend), o.log) : null;

  for (const tokens of o.rssTokens) {
    if (main && tokens === s.tokens) continue;
    const sc = { ...s, tokens };
    const r = await withDatabase(o.databaseUrl, `bench_rss${tokens}`, (url) => withSim(sc, async (sim) => {
      o.log(`peak RSS: first sync of ${tokens} tokens`);
      return syncChild({ scenario: sc, simUrl: sim.url, target: { kind: 'postgres', url }, phases: ['full'], ...(o.budgetPolicy ? { budgetPolicy: o.budgetPolicy } : {}) }, o.nodeFlags ?? []);
    }));
    rss.push({ tokens, peakRssMb: r.maxRssMb, baselineRssMb: r.baselineRssMb, wallMs: r.phases[0]!.wallMs, requests: r.phases[0]!.requests });
  }
  rss.sort((a, b) => a.tokens - b.tokens);

  const result: BenchResult = {
    startedAt: new Date(started).toISOString(),
    budgetPolicy: o.budgetPolicy ?? null,
    nodeFlags: o.nodeFlags ?? [],
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memGb: Math.round(totalmem() / 2 ** 30), node: process.version, postgres: pgVersion, embeddedPostgres },
    scenario: s,
    runs,
    workers,
    asOf,
    replay,
    scale,
    write,
    rss,
    rssGrowth: rssGrowth(rss),
    targets: [],
    durationMs: 0,
  };
  result.targets = judge(result);
  result.durationMs = Date.now() - started;
  if (o.resultsDir) {
    mkdirSync(o.resultsDir, { recursive: true });
    const file = path.join(o.resultsDir, `${result.startedAt.replaceAll(':', '-').slice(0, 19)}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    o.log(`results written to ${path.relative(process.cwd(), file)}`);
  }
  return result;
}

/**
 * A first sync, an unchanged re-sync, then, with the simulator moved to its revision epoch
 * (epoch 2: revised past values, changed lists, a relisted token, new days), a re-sync again:
 * each in a fresh process, as three `tesync sync` runs.
 */
async function scenarioRun(o: BenchOptions, s: Scenario, target: Target): Promise<{ figures: RunFigures; serverVersion: string | null }> {
  const necessary = requestsNecessary(new SimData({ seed: s.seed, tokens: s.tokens, historyDays: s.historyDays, chartsPerToken: s.chartsPerToken }).view(0), s);
  const floor = budgetFloorMs(necessary, s);
  return withSim(s, async (sim) => {
    o.log(`${target.kind}: first sync of ${s.tokens} tokens (floor ${(floor.floorMs / 1000).toFixed(1)} s)`);
    const policy = o.budgetPolicy ? { budgetPolicy: o.budgetPolicy } : {};
    const full = await measuredPhase(sim, { scenario: s, simUrl: sim.url, target, phases: ['full'], ...policy }, o);
    o.log(`${target.kind}: first sync took ${(full.phase.wallMs / 1000).toFixed(1)} s; unchanged re-sync`);
    const resync = await measuredPhase(sim, { scenario: s, simUrl: sim.url, target, phases: ['resync'], ...policy }, o);
    o.log(`${target.kind}: unchanged re-sync took ${(resync.phase.wallMs / 1000).toFixed(1)} s; the simulator moves to epoch 2, revision re-sync`);
    await sim.setEpoch(REVISION_EPOCH);
    const revision = await measuredPhase(sim, { scenario: s, simUrl: sim.url, target, phases: ['revision'], ...policy }, o);
    const necessaryTotal = total(necessary);
    const figures: RunFigures = {
      target: target.kind,
      tokens: s.tokens,
      requestsNecessary: { ...necessary, total: necessaryTotal },
      floorMs: floor.floorMs,
      floorByBucketMs: floor.byBucket,
      full: phaseFigures(full, necessaryTotal, floor.floorMs),
      resync: phaseFigures(resync, necessaryTotal, null),
      revision: phaseFigures(revision, necessaryTotal, null),
      resyncShare: ratio(resync.phase.requests, full.phase.requests),
      revisionShare: ratio(revision.phase.requests, full.phase.requests),
      fullMaxRssMb: full.result.maxRssMb,
      baselineRssMb: full.result.baselineRssMb,
      fullOpenMs: full.result.openMs,
    };
    return { figures, serverVersion: full.result.serverVersion };
  });
}

/** The as-of leg: a shallow warehouse synced from the simulator, deepened, then read. */
async function asOfRun(o: BenchOptions, a: NonNullable<BenchOptions['asOf']>): Promise<AsOfLegResult> {
  const seed: Scenario = { ...o.scenario, tokens: a.seedTokens, historyDays: a.days, budgets: { appPublic: null, appKey: null, gateway: null }, latencyMs: [0, 0], pageSize: 0 };
  return withDatabase(o.databaseUrl, 'bench_asof', async (url) => {
    o.log(`as-of: first sync of ${a.seedTokens} tokens with ${a.days} days of history`);
    await withSim(seed, (sim) => syncChild({ scenario: seed, simUrl: sim.url, target: { kind: 'postgres', url }, phases: ['full'] }, o.nodeFlags ?? []));
    return runAsOfLeg({ databaseUrl: url, copies: Math.max(1, Math.round(a.tokens / a.seedTokens)), days: a.days, runs: a.runs, quickRuns: a.quickRuns, exportLeg: a.exportLeg ?? true, log: o.log });
  });
}

/** The replay leg (replay-leg.ts): the simulator answers at once and limits nothing. */
async function replayRun(o: BenchOptions, r: NonNullable<BenchOptions['replay']>): Promise<ReplayLegResult> {
  const s: Scenario = { ...o.scenario, tokens: r.tokens, latencyMs: [0, 0], pageSize: 0, budgets: { appPublic: null, appKey: null, gateway: null } };
  return withDatabase(o.databaseUrl, 'bench_replay_from', (sourceUrl) =>
    withDatabase(o.databaseUrl, 'bench_replay_into', (targetUrl) =>
      withSim(s, async (sim) => {
        const result = await runReplayLeg({ scenario: s, simUrl: sim.url, sourceUrl, targetUrl, check: r.check, log: o.log });
        o.log(replayLine(result));
        return result;
      }),
    ),
  );
}

async function workersRun(o: BenchOptions, s: Scenario, processes: number, backend: QueueBackendKind): Promise<WorkersRunFigures> {
  const necessary = requestsNecessary(new SimData({ seed: s.seed, tokens: s.tokens, historyDays: s.historyDays, chartsPerToken: s.chartsPerToken }).view(0), s);
  const floor = budgetFloorMs(necessary, s);
  const necessaryTotal = total(necessary);
  // BullMQ's keys, the shared budget and the run counters all live under TE_QUEUE_PREFIX.
  const prefix = `tesync_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  try {
    return await withDatabase(o.databaseUrl, 'bench_workers', (url) =>
      withSim(s, async (sim) => {
        o.log(`workers: one walk of ${s.tokens} tokens by ${processes} \`tesync worker\` processes, queues on ${backend} (floor ${(floor.floorMs / 1000).toFixed(1)} s)`);
        const leg = await runWorkerLeg({
          scenario: s,
          simUrl: sim.url,
          simCpu: sim.cpu,
          databaseUrl: url,
          redisUrl: o.redisUrl,
          queueBackend: backend,
          prefix,
          workers: processes,
          workerConcurrency: o.workerConcurrency ?? null,
          nodeFlags: o.nodeFlags ?? [],
          settleMaxMs: o.settleMaxMs,
          log: o.log,
        });
        o.log(`workers: the walk took ${(leg.phase.wallMs / 1000).toFixed(1)} s (${leg.phase.status})`);
        const { phase, simCpuMs, machine, ...rest } = leg;
        return {
          target: 'workers' as const,
          queueBackend: backend,
          processes,
          workerConcurrency: o.workerConcurrency ?? null,
          queuePrefix: prefix,
          tokens: s.tokens,
          requestsNecessary: { ...necessary, total: necessaryTotal },
          floorMs: floor.floorMs,
          floorByBucketMs: floor.byBucket,
          walk: phaseFigures({ phase, simCpuMs, machine, withServer: null }, necessaryTotal, floor.floorMs),
          ...rest,
        };
      }),
    );
  } finally {
    if (backend === 'redis') await deleteRedisKeys(o.redisUrl, prefix).catch((err: unknown) => o.log(`workers: could not remove the Redis keys under ${prefix}: ${String(err)}`));
  }
}

interface Measured {
  phase: PhaseResult;
  result: SyncJobResult;
  simCpuMs: number;
  machine: MachineDuring;
  withServer: MemoryPeak | null;
}

async function measuredPhase(sim: SimHandle, job: SyncJob, o: BenchOptions): Promise<Measured> {
  // A previous run's leftovers (Postgres flushing, files being dropped) are not this run's.
  const settledMs = o.settleMaxMs > 0 ? await settle(0.15, o.settleMaxMs) : 0;
  const before = await sim.cpu();
  const m0 = readCpuTimes();
  const { result, withServer } = await syncChildWatched(job, o.nodeFlags ?? []);
  const m1 = readCpuTimes();
  const after = await sim.cpu();
  const phase = result.phases[0]!;
  const simCpuMs = after.cpuMs - before.cpuMs;
  // The sync process's own CPU covers its whole life; its Postgres backends', the phase and the reads after it.
  const machine = machineDuring(m0, m1, result.processCpuMs + simCpuMs + (phase.postgresCpuMs ?? 0) + (phase.tableWritesPostgresCpuMs ?? 0), settledMs);
  return { phase, result, simCpuMs, machine, withServer };
}

function phaseFigures(m: Pick<Measured, 'phase' | 'simCpuMs' | 'machine' | 'withServer'>, necessary: number, floorMs: number | null): PhaseFigures {
  const p = m.phase;
  return {
    ...p,
    madeOverNecessary: ratio(p.requests, necessary),
    wallOverFloor: floorMs === null ? null : ratio(p.wallMs, floorMs),
    cpuMsPer1000Requests: ratio(p.cpuMs * 1000, p.requests),
    simCpuMs: m.simCpuMs,
    simCpuMsPer1000Requests: ratio(m.simCpuMs * 1000, p.requests),
    cpuUsPerRow: ratio(p.cpuMs * 1000, p.rowsWritten),
    rowsPerSec: p.wallMs > 0 ? (p.rowsWritten * 1000) / p.wallMs : 0,
    machine: m.machine,
    withServer: m.withServer,
  };
}

/** The target for tesync and the embedded server together, in MB. */
export const EMBEDDED_MEMORY_TARGET_MB = 400;

export function judge(r: BenchResult): BenchResult['targets'] {
  const out: BenchResult['targets'] = [];
  const fmt = (v: number | null | undefined, digits = 2) => (v === null || v === undefined ? 'n/a' : v.toFixed(digits));
  for (const run of r.runs) {
    const at = `${run.target}, ${run.tokens} tokens`;
    const w = run.full.wallOverFloor;
    out.push({ name: `full sync wall time / floor (${at})`, value: fmt(w), target: '<= 1.05', met: w === null ? null : w <= 1.05 });
    out.push({ name: `re-sync requests / full sync requests (${at})`, value: fmt(run.resyncShare, 3), target: '<= 0.01', met: run.resyncShare === null ? null : run.resyncShare <= 0.01 });
    // Rows of the versioned tables the unchanged re-sync wrote, and versions it closed.
    const resyncWrites = sumWrites(run.resync.tableWrites);
    out.push({ name: `unchanged re-sync rows written + versions closed (${at})`, value: String(resyncWrites.written + resyncWrites.versions), target: '0', met: resyncWrites.written + resyncWrites.versions === 0 });
    const revisionWrites = sumWrites(run.revision.tableWrites);
    out.push({ name: `revision re-sync rows written / versions closed (${at})`, value: `${revisionWrites.written} / ${revisionWrites.versions}`, target: '(shown)', met: null });
    out.push({ name: `revision re-sync rows whose as_of alone changed (${at})`, value: String(revisionWrites.onlyAsOf), target: '(shown)', met: null });
    out.push({ name: `revision re-sync: rows rewritten without a change (${at})`, value: String(revisionWrites.rewrittenUnchanged), target: '0', met: revisionWrites.rewrittenUnchanged === 0 });
    out.push({ name: `revision re-sync status (${at})`, value: run.revision.status, target: 'succeeded', met: run.revision.status === 'succeeded' });
    const phases = [run.full, run.resync, run.revision];
    const after = phases.reduce((a, p) => a + p.rateLimits.afterHeaders, 0);
    out.push({ name: `429s after the first budget headers (${at})`, value: String(after), target: '0', met: after === 0 });
    const relearned = phases.reduce((a, p) => a + p.rateLimits.afterFirst429, 0);
    out.push({ name: `429s after a bucket's first 429 taught its window (${at})`, value: String(relearned), target: '0', met: relearned === 0 });
    if (run.target === 'embedded') {
      // Over every sync: each is a process of its own, and starts the server again.
      const peaks = [run.full.withServer, run.resync.withServer, run.revision.withServer].filter((p): p is MemoryPeak => p !== null);
      const rss = peaks.length ? Math.max(...peaks.map((p) => p.atPeak.totalMb)) : null;
      const psses = peaks.map((p) => p.peakPssMb);
      const pss = peaks.length && psses.every((p) => p !== null) ? Math.max(...(psses as number[])) : null;
      const want = `< ${EMBEDDED_MEMORY_TARGET_MB}`;
      // Shown, not judged: summed RSS counts every shared page (the server's binary and
      // libraries, its buffer cache) once per server process that touched it.
      out.push({ name: `peak RSS of tesync + its server, summed (${at}, MB)`, value: fmt(rss, 0), target: '(shown)', met: null });
      out.push({ name: `peak PSS of tesync + its server, shared pages once (${at}, MB)`, value: fmt(pss, 0), target: want, met: pss === null ? null : pss < EMBEDDED_MEMORY_TARGET_MB });
    }
  }
  for (const run of r.workers) {
    const at = `${run.processes} workers on ${run.queueBackend}, ${run.tokens} tokens`;
    const w = run.walk.wallOverFloor;
    // A walk that did not get everything done says nothing about the floor.
    out.push({ name: `walk wall time / floor (${at})`, value: fmt(w), target: '<= 1.05', met: w === null ? null : w <= 1.05 && run.walk.status === 'succeeded' });
    out.push({ name: `walk status (${at})`, value: run.walk.status, target: 'succeeded', met: run.walk.status === 'succeeded' });
    out.push({ name: `429s after the first budget headers (${at})`, value: String(run.walk.rateLimits.afterHeaders), target: '0', met: run.walk.rateLimits.afterHeaders === 0 });
    out.push({ name: `429s after a bucket's first 429 taught its window (${at})`, value: String(run.walk.rateLimits.afterFirst429), target: '0', met: run.walk.rateLimits.afterFirst429 === 0 });
  }
  if (r.asOf) out.push(...asOfTargets(r.asOf));
  if (r.scale) {
    const ok = r.scale.walks.filter((w) => w.status === 'succeeded' && w.rateLimited === 0).length;
    out.push({ name: 'scale walks succeeded without a 429', value: `${ok} of ${r.scale.walks.length}`, target: 'all', met: ok === r.scale.walks.length });
  }
  if (r.replay) {
    const p = r.replay;
    out.push({ name: `replay of the first sync / the sync, ${p.tokens} tokens, nothing to wait for${p.equal === null ? '' : p.equal ? ' (equal)' : ' (NOT equal)'}`, value: `${p.ratio.toFixed(2)} (${(p.replayMs / 1000).toFixed(1)} s / ${(p.syncMs / 1000).toFixed(1)} s)`, target: `<= ${p.limit}`, met: p.met });
  }
  const u = r.write?.upsertOverCopy ?? null;
  // Into the migrated tables, their history triggers on (as a first sync writes: inserts, which the trigger does not version).
  const triggers = r.write ? ` history trigger on ${r.write.tables.filter((t) => t.historyTrigger).length} of ${r.write.tables.length} tables` : '';
  if (r.write || r.runs.some((run) => run.target === 'postgres')) out.push({ name: `upsert rows/s / raw COPY rows/s (postgres${triggers ? `,${triggers}` : ''})`, value: fmt(u), target: '>= 0.50', met: u === null ? null : u >= 0.5 });
  const biggest = [...r.rss].sort((a, b) => b.tokens - a.tokens)[0];
  if (biggest) out.push({ name: `peak RSS at ${biggest.tokens} tokens (MB)`, value: fmt(biggest.peakRssMb, 0), target: '< 300', met: biggest.peakRssMb < 300 });
  if (biggest) out.push({ name: `peak RSS growth ${r.rss[0]!.tokens} → ${biggest.tokens} tokens`, value: r.rssGrowth === null ? 'n/a' : `${(r.rssGrowth * 100).toFixed(1)}%`, target: '< 20%', met: r.rssGrowth === null ? null : r.rssGrowth < 0.2 });
  return out;
}

/** Reads under this take most of their time being planned: judged by what the as-of read adds. */
const PLANNED_FLOOR_MS = 1;

function asOfTargets(a: AsOfLegResult): BenchResult['targets'] {
  const out: BenchResult['targets'] = [];
  const reads = (pick: (t: TableReads) => TableReads['whole']) => a.tables.flatMap((t) => pick(t).asOf.map((x) => ({ table: t.table, plainMs: pick(t).plainMs, ...x })));
  const planned = [...reads((t) => t.whole), ...reads((t) => t.oneKey)];
  const long = planned.filter((x) => x.plainMs >= PLANNED_FLOOR_MS);
  const worstLong = long.length ? long.reduce((w, x) => (x.ratio > w.ratio ? x : w)) : null;
  out.push({
    name: `as-of read / plain read, reads of ${PLANNED_FLOOR_MS} ms or more (whole tables, one token of the point tables), worst`,
    value: worstLong ? `${worstLong.ratio.toFixed(2)} (${long.length} reads; ${worstLong.table} ${worstLong.label})` : 'n/a (none so long)',
    target: '<= 2',
    met: worstLong ? worstLong.ratio <= 2 : null,
  });
  // Under a millisecond (a row, a small table) most of a read is planning, and the as-of read
  // plans two tables: what it adds is the same at three years as at one day.
  const short = planned.filter((x) => x.plainMs < PLANNED_FLOOR_MS);
  const worstShort = short.reduce((w, x) => (x.ms - x.plainMs > w.ms - w.plainMs ? x : w), { ms: 0, plainMs: 0 });
  out.push({
    name: `as-of read - plain read, reads under ${PLANNED_FLOOR_MS} ms, planned at each read, worst (ms)`,
    value: `${(worstShort.ms - worstShort.plainMs).toFixed(3)} (${short.length} reads; worst ratio ${Math.max(...short.map((x) => x.ratio)).toFixed(2)})`,
    target: '<= 0.25',
    met: worstShort.ms - worstShort.plainMs <= 0.25,
  });
  const prepared = reads((t) => t.oneKeyPrepared);
  const medianPrepared = [...prepared.map((x) => x.ratio)].sort((x, y) => x - y)[Math.floor(prepared.length / 2)]!;
  out.push({ name: 'as-of read / plain read, one key, prepared statements: median (worst)', value: `${medianPrepared.toFixed(2)} (${Math.max(...prepared.map((x) => x.ratio)).toFixed(2)})`, target: 'median <= 1.5', met: medianPrepared <= 1.5 });
  const preparedShort = prepared.filter((x) => x.plainMs < PLANNED_FLOOR_MS);
  const addedPrepared = Math.max(0, ...preparedShort.map((x) => x.ms - x.plainMs));
  out.push({ name: `as-of read - plain read, one key under ${PLANNED_FLOOR_MS} ms, prepared statements, worst (ms)`, value: addedPrepared.toFixed(3), target: '<= 0.1', met: addedPrepared <= 0.1 });
  for (const b of a.backtests) {
    const limit = b.instants === 'last 30 days' ? (b.example === 'backtest-history' ? 1000 : 100) : null;
    out.push({ name: `docs' ${b.example}, ${b.instants} (ms)`, value: b.ms.toFixed(1), target: limit === null ? '(shown)' : `<= ${limit}`, met: limit === null ? null : b.ms <= limit });
  }
  const s = a.atFromSubquery;
  out.push({ name: "one token's series at the last run's end: literal / lateral / sub-select in the call (ms)", value: `${s.literalMs.toFixed(1)} / ${s.lateralMs.toFixed(1)} / ${s.subSelectMs.toFixed(0)}`, target: 'lateral <= 2x literal', met: s.lateralMs <= 2 * s.literalMs });
  const c = a.changes;
  out.push({ name: `sync.changes over one day of ${c.table} / its T_as_of read`, value: `${c.ratio.toFixed(2)} (${c.changes} changes in ${c.ms.toFixed(1)} ms; ${c.asOfRows} rows in ${c.asOfMs.toFixed(1)} ms)`, target: `<= ${c.limit}`, met: c.met });
  out.push({ name: `daily fill after a ${a.fill.gapDays}-day gap (ms)`, value: a.fill.afterGapMs.toFixed(0), target: '<= 3000', met: a.fill.afterGapMs <= 3000 });
  out.push({ name: 'daily fill after an unchanged run (ms)', value: a.fill.unchangedMs.toFixed(0), target: '<= 100', met: a.fill.unchangedMs <= 100 });
  const mb = (b: number) => (b / 2 ** 20).toFixed(0);
  const idx = a.indexes.reduce((x, i) => x + i.bytes, 0);
  const tbl = a.indexes.reduce((x, i) => x + i.tableBytes, 0);
  out.push({ name: 'GiST (period, key) indexes of the history tables (MB, of their tables)', value: `${mb(idx)} of ${mb(tbl)}`, target: '(shown)', met: null });
  if (a.export) out.push(...exportTargets(a.export, a.depth.tokens.app));
  return out;
}

function exportTargets(e: ExportLegResult, tokens: number): BenchResult['targets'] {
  const days = Math.max(...e.archives.map((x) => x.days));
  const s = (ms: number) => (ms / 1000).toFixed(2);
  return [
    { name: `export of the daily archives, every day (${e.first.rows} rows, ${e.first.files} files) / (COPY floor + Parquet floor)`, value: `${e.overFloors.toFixed(2)} (${s(e.first.ms)} s / (${s(e.floors.copyMs)} + ${s(e.floors.parquetMs)}) s)`, target: `<= ${EXPORT_LIMITS.overFloors}`, met: e.overFloors <= EXPORT_LIMITS.overFloors },
    { name: `export of one new day at ${tokens} tokens x ${days} days (ms)`, value: e.newDay.ms.toFixed(0), target: `<= ${EXPORT_LIMITS.newDayMs}`, met: e.newDay.ms <= EXPORT_LIMITS.newDayMs && e.newDay.rewritten === 0 },
    { name: 'export with nothing new (ms)', value: e.unchangedMs.toFixed(0), target: `<= ${EXPORT_LIMITS.unchangedMs}`, met: e.unchangedMs <= EXPORT_LIMITS.unchangedMs },
  ];
}

/** The as-of leg's table: per versioned table, plain against as of each instant. */
export function asOfLines(a: AsOfLegResult): string[] {
  const f = (v: number) => (v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2));
  const head = ['table', 'rows', 'versions', 'whole', ...a.instants.map((i) => `as of ${i.label}`), 'one key', ...a.instants.map((i) => `as of ${i.label}`), 'prepared', ...a.instants.map((i) => `as of ${i.label}`)];
  const pair = (p: { plainMs: number; asOf: { ms: number; ratio: number }[] }) => [`${f(p.plainMs)} ms`, ...p.asOf.map((x) => `${f(x.ms)} (${x.ratio.toFixed(1)}x)`)];
  const rows = a.tables.map((t) => [t.table, String(t.current), String(t.history), ...pair(t.whole), ...pair(t.oneKey), ...pair(t.oneKeyPrepared)]);
  const d = a.depth;
  return [
    `as-of: ${d.tokens.app} app and ${d.tokens.gateway} gateway tokens, ${d.days} days of versions (built in ${(d.buildMs / 1000).toFixed(0)} s); instants ${a.instants.map((i) => `${i.label} ${i.at.slice(0, 10)}`).join(', ')}; whole: every row fetched, count(*) above 200000 rows`,
    ...table([head, ...rows]),
    `as-of: fill of the daily archives from empty ${(a.fill.fromEmptyMs / 1000).toFixed(1)} s (${a.fill.daysFromEmpty} days)`,
    ...(a.export
      ? [
          `export: ${a.export.archives.map((x) => `${x.table} ${x.rows} rows`).join(', ')}; every day ${(a.export.first.ms / 1000).toFixed(2)} s (${a.export.first.files} files, ${(a.export.first.bytes / 2 ** 20).toFixed(0)} MB), ` +
            `nothing new ${a.export.unchangedMs.toFixed(0)} ms, one new day ${a.export.newDay.ms.toFixed(0)} ms; floors: COPY out ${(a.export.floors.copyMs / 1000).toFixed(2)} s, Parquet again ${(a.export.floors.parquetMs / 1000).toFixed(2)} s; first / floors ${a.export.overFloors.toFixed(2)}`,
        ]
      : []),
  ];
}

// ---- child processes ----

interface SimHandle {
  url: string;
  cpu(): Promise<{ cpuMs: number; requests: number }>;
  /** Moves the simulator's dataset to `epoch` (sim.setEpoch); resolves once it has. */
  setEpoch(epoch: number): Promise<void>;
}

/** The simulator's revision epoch (sim/dataset-types.ts EpochChanges.epoch2). */
export const REVISION_EPOCH = 2;

/**
 * A script of the bench in a process of its own: its TypeScript through tsx, as the bench has
 * always measured it; in the smoke test (under vitest) the tests' compiled copy
 * (compiled-bin.ts), which starts without tsx's loader thread: the smoke checks that every
 * figure comes out, not what it is.
 */
function forkScript(file: 'sim-process.ts' | 'sync-process.ts', nodeFlags: readonly string[] = []): ChildProcess {
  const stdio = ['ignore', 'inherit', 'inherit', 'ipc'] as const;
  if (process.env.VITEST !== undefined) return fork(compiledScript(`test/bench/${file}`), [], { execArgv: [...nodeFlags], stdio: [...stdio] });
  return fork(path.join(HERE, file), [], { execArgv: [...nodeFlags, '--import', 'tsx'], stdio: [...stdio] });
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: T) => {
      cleanup();
      resolve(m);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`child process exited (${code}) before answering`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

async function withSim<T>(s: Scenario, fn: (sim: SimHandle) => Promise<T>): Promise<T> {
  const child = forkScript('sim-process.ts');
  const ask = async <R extends SimReply['type']>(req: SimRequest, type: R): Promise<Extract<SimReply, { type: R }>> => {
    const reply = nextMessage<SimReply>(child);
    child.send(req);
    const m = await reply;
    if (m.type !== type) throw new Error(`simulator: ${m.type === 'error' ? m.message : `unexpected ${m.type}`}`);
    return m as Extract<SimReply, { type: R }>;
  };
  try {
    const { url } = await ask({ type: 'start', options: simOptions(s) }, 'ready');
    return await fn({
      url,
      cpu: () => ask({ type: 'cpu' }, 'cpu'),
      setEpoch: async (epoch) => {
        const m = await ask({ type: 'epoch', epoch }, 'epoch');
        if (m.epoch !== epoch) throw new Error(`simulator: asked for epoch ${epoch}, answered ${m.epoch}`);
      },
    });
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    if (child.connected) child.send({ type: 'close' } satisfies SimRequest);
    else child.kill();
    await exited;
  }
}

async function syncChild(job: SyncJob, nodeFlags: readonly string[] = []): Promise<SyncJobResult> {
  return (await syncChildWatched(job, nodeFlags)).result;
}

/** The sync process; with the embedded target, its memory and its server's sampled meanwhile. */
async function syncChildWatched(job: SyncJob, nodeFlags: readonly string[] = []): Promise<{ result: SyncJobResult; withServer: MemoryPeak | null }> {
  const child = forkScript('sync-process.ts', nodeFlags);
  const watch = job.target.kind === 'embedded' && child.pid !== undefined ? watchMemory(child.pid, job.target.dir) : null;
  try {
    const reply = nextMessage<{ type: 'done'; result: SyncJobResult } | { type: 'error'; message: string }>(child);
    child.send(job);
    const m = await reply;
    if (m.type === 'error') throw new Error(`sync process failed: ${m.message}`);
    return { result: m.result, withServer: watch?.stop() ?? null };
  } finally {
    watch?.stop();
  }
}

// ---- Postgres ----

async function withDatabase<T>(serverUrl: string, label: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `tesync_${label}_${Date.now().toString(36)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.unsafe(`drop database if exists "${name}" with (force)`).catch(() => {});
    await admin.end({ timeout: 5 });
  }
}

async function serverVersion(url: string): Promise<string | null> {
  const c = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [r] = await c`show server_version`;
    return (r?.server_version as string | undefined) ?? null;
  } catch {
    return null;
  } finally {
    await c.end({ timeout: 1 });
  }
}

// ---- output ----

export function formatTable(r: BenchResult): string {
  const lines: string[] = [];
  const s = r.scenario;
  const budget = (b: { limit: number; windowMs: number } | null) => (b ? `${b.limit}/${b.windowMs / 1000}s` : 'unlimited');
  // The scale leg alone says its own world (scale-leg.ts).
  if (!r.scale || r.runs.length + r.workers.length > 0) {
    lines.push(`scenario: ${s.tokens} tokens, ${s.historyDays} days, ${s.chartsPerToken} charts/token, latency ${s.latencyMs.join('-')} ms, concurrency ${s.concurrency}`);
    lines.push(`budgets: app-public ${budget(s.budgets.appPublic)}, app-key ${budget(s.budgets.appKey)}, gateway ${budget(s.budgets.gateway)}`);
  }
  if (r.budgetPolicy || r.nodeFlags.length) lines.push(`overrides: budget policy ${JSON.stringify(r.budgetPolicy ?? {})}, node flags ${r.nodeFlags.join(' ') || 'none'}`);
  lines.push(`machine: ${r.machine.cpus} cores (${r.machine.cpuModel}), ${r.machine.memGb} GB, Node ${r.machine.node}, Postgres ${r.machine.postgres ?? '?'}`);
  lines.push('');
  const f = (v: number | null | undefined, d = 2) => (v === null || v === undefined ? 'n/a' : v.toFixed(d));
  const rows: string[][] = [['run', 'phase', 'status', 'requests', 'necessary', 'made/nec', 'wall s', 'floor s', 'wall/floor', '429 (after hdr)', 'rows', 'rows/s', 'cpu ms/1k req', 'sim cpu ms/1k', 'pg cpu s', 'peak RSS MB', 'with server RSS (PSS) MB', 'other cpu/steal %']];
  for (const run of r.runs) {
    for (const p of [run.full, run.resync, run.revision]) {
      rows.push([
        `${run.target} ${run.tokens}`,
        p.phase,
        p.failed ? `${p.status} (${p.failed} failed)` : p.status,
        String(p.requests),
        p.phase === 'full' ? String(run.requestsNecessary.total) : '',
        p.phase === 'full' ? f(p.madeOverNecessary, 3) : `${f(p.phase === 'resync' ? run.resyncShare : run.revisionShare, 3)} of full`,
        f(p.wallMs / 1000, 1),
        p.phase === 'full' ? f(run.floorMs / 1000, 1) : '',
        p.phase === 'full' ? f(p.wallOverFloor, 3) : '',
        ...phaseCells(p, f),
      ]);
    }
  }
  for (const run of r.workers) {
    const p = run.walk;
    rows.push([
      `workers x${run.processes} ${run.queueBackend} ${run.tokens}`,
      'walk',
      p.failed ? `${p.status} (${p.failed} failed)` : p.status,
      String(p.requests),
      String(run.requestsNecessary.total),
      f(p.madeOverNecessary, 3),
      f(p.wallMs / 1000, 1),
      f(run.floorMs / 1000, 1),
      f(p.wallOverFloor, 3),
      ...phaseCells(p, f),
    ]);
  }
  if (rows.length > 1) lines.push(...table(rows), '');
  for (const run of r.workers) lines.push(...workersLines(run), '');
  if (r.asOf) lines.push(...asOfLines(r.asOf), '');
  if (r.replay) lines.push(replayLine(r.replay), '');
  if (r.scale) lines.push(...scaleLines(r.scale), '');
  for (const run of r.runs) lines.push(...writesLines(run), '');
  for (const run of r.runs) {
    if (run.target !== 'embedded') continue;
    for (const p of [run.full, run.resync, run.revision]) {
      const m = p.withServer?.atPeak;
      if (!m) continue;
      const q = p.withServer!.atPeakPss;
      lines.push(
        `embedded ${run.tokens}, ${p.phase}: summed RSS peak ${f(m.totalMb, 0)} MB (tesync ${f(m.tesyncMb, 0)}, server ${f(m.serverMb, 0)} in ${m.serverProcesses} processes); ` +
          (q ? `PSS peak ${f(q.pssMb, 0)} MB (tesync ${f(q.tesyncPssMb, 0)}, server ${f(q.serverPssMb, 0)})` : 'PSS unreadable'),
      );
    }
    lines.push(`embedded ${run.tokens}: the first sync's process opened the warehouse (initdb, server start) in ${f(run.fullOpenMs / 1000, 1)} s; Postgres ${r.machine.embeddedPostgres ?? '?'}`);
  }
  if (r.runs.some((run) => run.target === 'embedded')) lines.push('');
  if (r.write) {
    const w = r.write;
    const triggers = w.tables.filter((t) => t.historyTrigger).length;
    lines.push(
      `write path (${w.rows} rows, one transaction per token, history trigger on ${triggers} of ${w.tables.length} tables): upsertRows ${f(w.upsertRowsPerSec, 0)} rows/s, ` +
        `the same rows again (unchanged) ${f(w.reupsertRowsPerSec, 0)} rows/s, raw COPY ${f(w.copyRowsPerSec, 0)} rows/s → ${f(w.upsertOverCopy, 3)} of COPY`,
    );
  }
  if (r.rss.length) lines.push(`peak RSS of the first sync (Postgres): ${r.rss.map((x) => `${x.tokens} tokens ${f(x.peakRssMb, 0)} MB (${f(x.baselineRssMb, 0)} before syncing)`).join(', ')}; growth ${r.rssGrowth === null ? 'n/a' : `${(r.rssGrowth * 100).toFixed(1)}%`}`);
  lines.push('', ...table([['target', 'value', 'wanted', 'met'], ...r.targets.map((t) => [t.name, t.value, t.target, t.met === null ? 'n/a' : t.met ? 'yes' : 'NO'])]));
  return lines.join('\n');
}

/**
 * Per versioned table, the rows the unchanged re-sync and the revision re-sync wrote (run_id
 * theirs) and the versions they closed (T_history), for the tables where either wrote or
 * closed any; then how many of the written rows changed in `as_of` alone, and a write that
 * changed nothing is flagged.
 */
export function writesLines(run: RunFigures): string[] {
  const names = [...new Set([...Object.keys(run.resync.tableWrites), ...Object.keys(run.revision.tableWrites)])].sort();
  const head = `${run.target} ${run.tokens}: rows written / versions closed per versioned table`;
  const ms = (p: PhaseFigures) => `${(p.tableWritesMs / 1000).toFixed(1)} s`;
  const read = `(read after each phase in ${ms(run.full)}, ${ms(run.resync)}, ${ms(run.revision)})`;
  if (names.length === 0) return [`${head}: none in either re-sync ${read}`];
  const cell = (w: TableWrites | undefined) => {
    if (!w) return ['0 / 0', ''];
    return [`${w.written} / ${w.versions}${w.rewrittenUnchanged ? ` (${w.rewrittenUnchanged} unchanged!)` : ''}`, w.onlyAsOf ? String(w.onlyAsOf) : ''];
  };
  const rows = names.map((t) => [`  ${t}`, cell(run.resync.tableWrites[t])[0]!, ...cell(run.revision.tableWrites[t])]);
  const sr = sumWrites(run.resync.tableWrites);
  rows.push(['  total', cell(sr)[0]!, ...cell(sumWrites(run.revision.tableWrites))]);
  return [`${head} ${read}:`, ...table([['  table', 'unchanged re-sync', 'revision re-sync (epoch 2)', 'of which as_of alone changed'], ...rows])];
}

/** What the table's one row of the distributed leg does not say: how the walk was shared, and what the workers logged. */
function workersLines(run: WorkersRunFigures): string[] {
  const f = (v: number | null | undefined, d = 1) => (v === null || v === undefined ? 'n/a' : v.toFixed(d));
  const w = run.walk;
  const buckets = Object.entries(w.rateLimits.byBucket).map(([b, n]) => `${b} ${n.total} (${n.afterHeaders} after headers)`);
  const m = run.messages;
  const lines = [
    `workers x${run.processes} on ${run.queueBackend} (TE_WORKER_CONCURRENCY ${run.workerConcurrency ?? 'default'}): wall from the walk ${run.wallFrom} to the run's end; ${run.queuedMs === null ? '' : `queued ${run.queuedMs} ms before a worker took it; `}tesync enqueue --wait ran ${f(run.enqueueCommandMs / 1000)} s`,
    `  requests by bucket: ${Object.entries(w.requestsByBucket).map(([b, n]) => `${b} ${n} of ${run.requestsNecessary[b as keyof PerBucket]}`).join(', ')}; the simulator answered ${run.simRequests}; 429s ${buckets.length ? buckets.join(', ') : 'none'}`,
    `  busy span by bucket (first request to last answer; requests as a share of the budget over it): ${Object.entries(run.bucketSpans).map(([b, x]) => `${b} ${f(x.spanMs / 1000)} s (${f(x.shareOfBudget, 2)})`).join(', ')}`,
    `  per worker: ${run.workers.map((x) => `${x.jobsDone} jobs, ${f(x.cpuMs / 1000)} s CPU, peak RSS ${f(x.peakRssMb, 0)} MB, exit ${x.exitCode ?? 'signal'}`).join('; ')}`,
    `  logged: ${m['bucket closed for longer than a job waits: queue paused, job back to waiting'] ?? 0} queue pauses, ${m['stalled job (its worker died or hung) moved back to waiting'] ?? 0} stalled jobs, ${run.problems.length} lines at warn or above`,
  ];
  for (const p of run.problems.slice(0, 3)) lines.push(`  ${p.slice(0, 300)}`);
  return lines;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
}

// ---- command line ----

export function parseArgs(argv: readonly string[], env: Record<string, string | undefined> = process.env): BenchOptions {
  const args = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const eq = a.indexOf('=');
    const k = eq < 0 ? a.slice(2) : a.slice(2, eq);
    const inline = eq < 0 ? undefined : a.slice(eq + 1);
    const next = argv[i + 1];
    if (inline !== undefined) args.set(k, inline);
    else if (next !== undefined && !next.startsWith('--')) args.set(k, (i++, next));
    else args.set(k, true);
  }
  const quick = args.has('quick');
  const num = (k: string, fallback: number) => {
    const v = args.get(k);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${k} needs a number, got ${String(v)}`);
    return n;
  };
  const list = (k: string, fallback: number[]) => {
    const v = args.get(k);
    return typeof v === 'string' ? v.split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0) : fallback;
  };
  const base = DEFAULT_SCENARIO;
  const tokens = num('tokens', quick ? 20 : base.tokens);
  // --quick: a smaller world with a budget scaled down with it, so the budget still decides.
  const limit = num('limit', quick ? 100 : 600);
  const windowMs = num('window', quick ? 10 : 60) * 1000;
  const scenario: Scenario = {
    ...base,
    tokens,
    historyDays: num('days', quick ? 365 : base.historyDays),
    chartsPerToken: num('charts', base.chartsPerToken),
    concurrency: num('concurrency', base.concurrency),
    // --page-size N: the simulator pages its lists; the floor counts every page.
    pageSize: Math.floor(num('page-size', base.pageSize)),
    latencyMs: typeof args.get('latency') === 'string' ? (String(args.get('latency')).split(',').map(Number) as [number, number]) : base.latencyMs,
    budgets: args.has('unlimited')
      ? { appPublic: null, appKey: null, gateway: null }
      : { appPublic: { limit, windowMs }, appKey: { limit: Math.max(1, Math.floor(limit / 2)), windowMs }, gateway: { limit, windowMs } },
  };
  const workers = args.has('no-workers') ? null : num('workers', 3);
  const embedded = args.has('no-embedded') ? null : num('embedded-tokens', quick ? Math.min(10, tokens) : 100);
  const rssTokens = args.has('no-rss') ? [] : list('rss-tokens', quick ? [10, 20, 40] : [100, 500, 1000]);
  // --scale: the scale leg alone (scale-leg.ts).
  const scale: ScaleOptions | null = args.has('scale')
    ? { tokens: num('scale-tokens', 100), days: num('scale-days', 180), depthDays: num('scale-depth-days', 30), workers: list('scale-workers', [1, 2, 4]), backends: queuesArg(args.get('queues')) }
    : null;
  const options: BenchOptions = {
    scenario,
    databaseUrl: (args.get('database-url') as string | undefined) ?? env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    postgres: !args.has('no-postgres'),
    workers: workers === null || workers < 1 ? null : Math.floor(workers),
    ...(args.has('worker-concurrency') ? { workerConcurrency: Math.max(1, Math.floor(num('worker-concurrency', 4))) } : {}),
    redisUrl: (args.get('redis-url') as string | undefined) ?? env.REDIS_URL ?? env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    // --queues redis|postgres|both: the backends of the distributed leg.
    queueBackends: queuesArg(args.get('queues')),
    embeddedTokens: embedded,
    rssTokens,
    asOf: args.has('no-as-of') ? null : { tokens: num('as-of-tokens', quick ? 30 : 300), seedTokens: 10, days: num('as-of-days', quick ? 365 : 1095), runs: quick ? 3 : 5, exportLeg: !args.has('no-export') },
    replay: args.has('no-replay') ? null : { tokens: num('replay-tokens', quick ? 10 : 100), check: !args.has('no-replay-check') },
    writeRows: args.has('no-write') ? 0 : num('write-rows', quick ? 50_000 : 400_000),
    settleMaxMs: args.has('no-settle') ? 0 : 60_000,
    resultsDir: args.has('no-results') ? null : path.join(HERE, 'results'),
    ...(args.has('reset-margin-ms') ? { budgetPolicy: { resetMarginMs: num('reset-margin-ms', 1000) } } : {}),
    ...(typeof args.get('node-flags') === 'string' ? { nodeFlags: String(args.get('node-flags')).split(/\s+/).filter(Boolean) } : {}),
    log: (line) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`),
  };
  return scale ? { ...options, postgres: false, workers: null, embeddedTokens: null, rssTokens: [], asOf: null, replay: null, writeRows: 0, scale } : options;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const options = parseArgs(process.argv.slice(2));
  runBench(options).then(
    (r) => {
      console.log(formatTable(r));
      // The export leg fails the run when it goes beyond its limits (issue 56).
      const failures = r.asOf?.export?.failures ?? [];
      if (failures.length > 0) console.error(`export leg failed: ${failures.join('; ')}`);
      process.exit(failures.length > 0 ? 1 : 0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** Pure: `--queues`: one backend, or both (the default). */
export function queuesArg(value: string | boolean | undefined): QueueBackendKind[] {
  if (value === undefined || value === 'both') return [...QUEUE_BACKENDS];
  if (value === 'redis' || value === 'postgres') return [value];
  throw new Error(`--queues must be redis, postgres or both, not ${JSON.stringify(value)}`);
}

/** Pure: the table's cells a phase fills the same way in every leg, from its 429s to the rest of the machine. */
function phaseCells(p: PhaseFigures, f: (v: number | null, digits: number) => string): string[] {
  return [
    `${p.rateLimits.total} (${p.rateLimits.afterHeaders})`,
    String(p.rowsWritten),
    f(p.rowsPerSec, 0),
    f(p.cpuMsPer1000Requests, 0),
    f(p.simCpuMsPer1000Requests, 0),
    p.postgresCpuMs === null ? 'n/a' : f(p.postgresCpuMs / 1000, 1),
    f(p.peakRssMb, 0),
    p.withServer ? `${f(p.withServer.atPeak.totalMb, 0)} (${f(p.withServer.peakPssMb, 0)})` : '',
    p.machine.othersShare === null ? 'n/a' : `${f(p.machine.othersShare * 100, 0)}/${f((p.machine.stealShare ?? 0) * 100, 0)}`,
  ];
}
