// The scale leg (`npm run bench -- --scale`): the same walk by 1, 2 and 4 `tesync worker`
// processes on one machine, on each queue backend, against a simulator whose budget limits
// nothing, plus one walk by one worker at a shallower history, so that each cost splits into a
// part per request and a part per row (scale-model.ts fits them). Each walk is the distributed
// leg's (worker-leg.ts, through run.ts's `workersRun`): a fresh database, a fresh simulator, the
// real commands. The model then predicts each walk's wall time from the constants, and the
// speedups are set against it (docs/scale-out.md).
import { cpus } from 'node:os';
import type { QueueBackendKind } from '../helpers/queue-backends.ts';
import type { WorkersRunFigures } from './run.ts';
import type { Scenario } from './scenario.ts';
import { fitConstants, predictWall, walkRates, type Bound, type ScaleConstants, type ScaleWalk } from './scale-model.ts';

export interface ScaleOptions {
  tokens: number;
  /** Days of history of the walks by 1, 2 and 4 workers. */
  days: number;
  /** Days of history of the extra one-worker walk (fewer rows per request, the same requests). */
  depthDays: number;
  /** Worker counts, in the order walked (default 1, 2, 4). */
  workers: readonly number[];
  backends: readonly QueueBackendKind[];
}

/** One walk of the leg (`processes` workers on `backend`, at `days`); run.ts's `workersRun`. */
export type WalkFn = (s: Scenario, processes: number, backend: QueueBackendKind) => Promise<WorkersRunFigures>;

export interface ScaleWalkFigures extends ScaleWalk {
  /** Each worker's CPU over the walk, ms. */
  perWorkerCpuMs: number[];
  /** The walk job's wait for a worker. */
  queuedMs: number | null;
  rateLimited: number;
}

export interface Prediction {
  backend: QueueBackendKind;
  processes: number;
  measuredWallMs: number;
  /**
   * The one-worker walk's wall time above the model's bound, carried by every walk of the
   * backend as a fixed part: the walk's chain (lists, then tokens, then chart catalogs, then
   * charts) and the queue's hops, which no number of workers shortens.
   */
  fixedMs: number;
  /** The bound plus the fixed part, with the cores the others left free during this walk (its othersShare). */
  predictedWallMs: number;
  bound: Bound;
  /** On an idle machine. */
  predictedIdleWallMs: number;
  idleBound: Bound;
  measuredSpeedup: number;
  predictedSpeedup: number;
  predictedIdleSpeedup: number;
}

export interface ScaleLegResult {
  scenario: Scenario;
  options: ScaleOptions;
  cores: number;
  /** TE_WORKER_CONCURRENCY of the walks (tesync's default unless --worker-concurrency). */
  workerConcurrency: number;
  walks: ScaleWalkFigures[];
  constants: ScaleConstants[];
  predictions: Prediction[];
}

/** tesync's TE_WORKER_CONCURRENCY default (src/lib/variables.ts). */
export const DEFAULT_WORKER_CONCURRENCY = 4;

/** The leg's world: `base` at the leg's tokens and days, every bucket unlimited. */
export function scaleScenario(base: Scenario, o: ScaleOptions, days: number): Scenario {
  return { ...base, tokens: o.tokens, historyDays: days, pageSize: 0, budgets: { appPublic: null, appKey: null, gateway: null } };
}

export async function runScaleLeg(base: Scenario, o: ScaleOptions, workerConcurrency: number | null, walk: WalkFn, log: (line: string) => void): Promise<ScaleLegResult> {
  const walks: ScaleWalkFigures[] = [];
  const single = Math.min(...o.workers);
  for (const backend of o.backends) {
    const plan = [{ processes: single, days: o.depthDays }, ...o.workers.map((processes) => ({ processes, days: o.days }))];
    for (const { processes, days } of plan) {
      log(`scale: ${processes} worker(s) on ${backend}, ${o.tokens} tokens x ${days} days, no budget`);
      const figures = scaleWalk(await walk(scaleScenario(base, o, days), processes, backend), days);
      walks.push(figures);
      const r = walkRates(figures);
      log(`scale: ${(figures.wallMs / 1000).toFixed(1)} s, ${r.requestsPerSec.toFixed(0)} req/s, worker ${r.workerCpuMsPerRequest.toFixed(1)} ms/req, Postgres ${r.postgresCpuMsPerRequest.toFixed(1)} ms/req (${figures.status})`);
    }
  }
  const scenario = scaleScenario(base, o, o.days);
  const concurrency = workerConcurrency ?? DEFAULT_WORKER_CONCURRENCY;
  const constants = o.backends.map((b) => fitConstants(walks, b));
  return { scenario, options: o, cores: cpus().length, workerConcurrency: concurrency, walks, constants, predictions: predictions(walks, constants, scenario, cpus().length, concurrency) };
}

/** A walk's figures, read from the distributed leg's. */
export function scaleWalk(run: WorkersRunFigures, days: number): ScaleWalkFigures {
  const p = run.walk;
  return {
    backend: run.queueBackend,
    processes: run.processes,
    tokens: run.tokens,
    days,
    status: p.status,
    wallMs: p.wallMs,
    requests: p.requests,
    busiestBucketRequests: Math.max(...Object.values(p.requestsByBucket)),
    rows: p.rowsWritten,
    workerCpuMs: p.cpuMs,
    postgresCpuMs: p.postgresCpuMs ?? 0,
    simCpuMs: p.simCpuMs,
    queueServerCpuMs: run.queueServerCpuMs,
    responseBytes: run.bytes.responses,
    databaseBytes: run.bytes.database,
    archiveBytes: run.bytes.archive,
    peakSessions: run.peakSessions,
    othersShare: p.machine.othersShare,
    perWorkerCpuMs: run.workers.map((w) => w.cpuMs),
    queuedMs: run.queuedMs,
    rateLimited: p.rateLimits.total,
  };
}

/** Each walk at the leg's depth, predicted from its backend's constants and set against the one-worker walk. */
export function predictions(walks: readonly ScaleWalk[], constants: readonly ScaleConstants[], s: Scenario, cores: number, concurrency: number): Prediction[] {
  const out: Prediction[] = [];
  const latencyMs = (s.latencyMs[0] + s.latencyMs[1]) / 2;
  for (const c of constants) {
    const deep = walks.filter((w) => w.backend === c.backend && w.days === s.historyDays);
    const base = deep.find((w) => w.processes === Math.min(...deep.map((x) => x.processes)));
    if (!base) continue;
    const at = (w: ScaleWalk, othersCores: number) => predictWall(c, { requests: w.requests, rows: w.rows }, w.processes, { latencyMs, concurrency, cores, othersCores });
    const fixedMs = Math.max(0, base.wallMs - at(base, (base.othersShare ?? 0) * cores).wallMs);
    const base1 = at(base, (base.othersShare ?? 0) * cores).wallMs + fixedMs;
    const baseIdle = at(base, 0).wallMs + fixedMs;
    for (const w of deep) {
      const p = at(w, (w.othersShare ?? 0) * cores);
      const idle = at(w, 0);
      out.push({
        backend: c.backend,
        processes: w.processes,
        measuredWallMs: w.wallMs,
        fixedMs,
        predictedWallMs: p.wallMs + fixedMs,
        bound: p.bound,
        predictedIdleWallMs: idle.wallMs + fixedMs,
        idleBound: idle.bound,
        measuredSpeedup: base.wallMs / w.wallMs,
        predictedSpeedup: base1 / (p.wallMs + fixedMs),
        predictedIdleSpeedup: baseIdle / (idle.wallMs + fixedMs),
      });
    }
  }
  return out;
}

/** The leg's tables: every walk measured, the constants fitted, the speedups against the model. */
export function scaleLines(r: ScaleLegResult): string[] {
  const f = (v: number | null | undefined, d = 1) => (v === null || v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(d));
  const s = r.scenario;
  const lines = [
    `scale: ${s.tokens} tokens, ${r.options.days} days (and ${r.options.depthDays} by one worker), no budget, latency ${s.latencyMs.join('-')} ms, TE_WORKER_CONCURRENCY ${r.workerConcurrency}, ${r.cores} cores`,
    ...table([
      ['backend', 'workers', 'days', 'status', 'wall s', 'requests', 'req/s', 'rows', 'worker ms/req', 'worker cores', 'pg ms/req', 'pg us/row', 'sim ms/req', 'redis ms/req', 'resp B/req', 'db B/row', 'sessions', 'others %'],
      ...r.walks.map((w) => {
        const x = walkRates(w);
        return [
          w.backend,
          String(w.processes),
          String(w.days),
          w.rateLimited ? `${w.status} (${w.rateLimited} 429)` : w.status,
          f(w.wallMs / 1000),
          String(w.requests),
          f(x.requestsPerSec, 0),
          String(w.rows),
          f(x.workerCpuMsPerRequest, 2),
          f(w.workerCpuMs / w.wallMs, 2),
          f(x.postgresCpuMsPerRequest, 2),
          f(x.postgresCpuUsPerRow, 2),
          f(x.simCpuMsPerRequest, 2),
          f(x.queueServerCpuMsPerRequest, 3),
          f(x.responseBytesPerRequest, 0),
          f(x.databaseBytesPerRow, 0),
          String(w.peakSessions),
          w.othersShare === null ? 'n/a' : f(w.othersShare * 100, 0),
        ];
      }),
    ]),
    'scale: constants fitted through the one-worker walks (per request + per row)',
    ...table([
      ['backend', 'req/token', 'rows/token', 'worker CPU', 'Postgres CPU', 'simulator CPU', 'Redis ms/req', 'response bytes', 'database bytes', 'sessions/worker'],
      ...r.constants.map((c) => {
        const cost = (x: { perRequest: number; perRow: number }, d: number, unit: string) => `${f(x.perRequest, d)} ${unit}/req + ${f(x.perRow * 1000, d)} ${unit}/1k rows`;
        return [
          c.backend,
          f(c.requestsPerToken, 2),
          `${f(c.rowsPerToken.fixed, 0)} + ${f(c.rowsPerToken.perDay, 2)}/day`,
          cost(c.workerCpuMs, 3, 'ms'),
          cost(c.postgresCpuMs, 3, 'ms'),
          cost(c.simCpuMs, 3, 'ms'),
          f(c.queueServerCpuMsPerRequest, 3),
          cost(c.responseBytes, 0, 'B'),
          cost(c.databaseBytes, 0, 'B'),
          f(c.sessionsPerWorker, 1),
        ];
      }),
    ]),
    `scale: speedups against the model (predicted with the cores the others left free, and on an idle machine)`,
    ...table([
      ['backend', 'workers', 'wall s', 'fixed s', 'predicted s', 'bound', 'speedup', 'predicted', 'idle: predicted s', 'bound', 'speedup'],
      ...r.predictions.map((p) => [p.backend, String(p.processes), f(p.measuredWallMs / 1000), f(p.fixedMs / 1000), f(p.predictedWallMs / 1000), p.bound, f(p.measuredSpeedup, 2), f(p.predictedSpeedup, 2), f(p.predictedIdleWallMs / 1000), p.idleBound, f(p.predictedIdleSpeedup, 2)]),
    ]),
  ];
  return lines;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}`);
}
