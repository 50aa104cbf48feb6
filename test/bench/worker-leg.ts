// The distributed leg: `tesync worker` processes sharing one queue backend (Redis, or the
// warehouse's own Postgres) and its rate budget do one walk, queued with `tesync enqueue
// --wait`, into a fresh Postgres database, against the same simulator process and budget as
// the in-process leg. Every process is the real command, as
// a user runs it; the bench reads the run back from the warehouse and /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { WALK_QUEUE } from '../../src/runners/bullmq/queues.ts';
import { backendEnv, openTestQueue, type QueueBackendKind } from '../helpers/queue-backends.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { BIN, childEnv } from '../helpers/cli.ts';
import { rateLimitReport, type RequestRow } from './figures.ts';
import { CLOCK_TICK_MS, machineDuring, readCpuTimes, settle, type MachineDuring } from './machine.ts';
import { bucketList, syncEnv, type Scenario } from './scenario.ts';
import type { PhaseResult } from './sync-process.ts';
import { byBucket, byStatus, cpuDelta, databaseBytes, postgresCpu, processTicks, requestRows, responseBytes, sessionPeak, tableRows, tableWrites } from './warehouse-figures.ts';
import { SCHEDULES_OFF } from '../helpers/workers.ts';

export interface WorkerLegOptions {
  scenario: Scenario;
  simUrl: string;
  /** The simulator's CPU time and requests served so far. */
  simCpu(): Promise<{ cpuMs: number; requests: number }>;
  /** A fresh database for this leg. */
  databaseUrl: string;
  redisUrl: string;
  queueBackend: QueueBackendKind;
  /** TE_QUEUE_PREFIX: fresh, removed by the caller afterwards. */
  prefix: string;
  workers: number;
  /** TE_WORKER_CONCURRENCY; null: tesync's default. */
  workerConcurrency: number | null;
  nodeFlags: readonly string[];
  settleMaxMs: number;
  log: (line: string) => void;
}

export interface WorkerProcessFigures {
  pid: number;
  /** CPU time while the walk ran (from `tesync enqueue --wait`'s start to its exit). */
  cpuMs: number;
  /** CPU time over the process's whole life (start-up, migration, the walk, shutdown excluded). */
  processCpuMs: number;
  /** VmHWM: the peak RSS over the process's life. */
  peakRssMb: number;
  /** `job done` lines it logged: the jobs it ran. */
  jobsDone: number;
  exitCode: number | null;
}

export interface WorkerLegResult {
  phase: PhaseResult;
  runId: string;
  /** Wall time is counted from the walk job's addition to its queue; from the enqueue command's start if that job was not found. */
  wallFrom: 'job added' | 'enqueue started';
  /** From the walk job's addition until a worker started the run (sync.runs.started_at). */
  queuedMs: number | null;
  /** `tesync enqueue --wait` from its spawn to its exit (its start-up, the add, polling every 500 ms). */
  enqueueCommandMs: number;
  simCpuMs: number;
  /** Requests the simulator answered during the walk (a cross-check of sync.requests). */
  simRequests: number;
  machine: MachineDuring;
  workers: WorkerProcessFigures[];
  /** Log lines at info and above from every worker, counted by message. */
  messages: Record<string, number>;
  /** The first lines at warn and above (at most 10): level, message, job, error. */
  problems: string[];
  tableRows: Record<string, number>;
  /**
   * Per bucket: from its first request sent to its last answered, and its requests over that
   * span as a share of what its budget allows in it (1: every window used up).
   */
  bucketSpans: Record<string, { spanMs: number; requests: number; shareOfBudget: number | null }>;
  /**
   * Bytes: the upstream's response bodies the run logged (sync.requests.bytes), and what the
   * database and its archive (sync.raw_responses) grew by from the workers' migration to their
   * stop (pg_database_size; the server's WAL is not in it).
   */
  bytes: { responses: number; database: number; archive: number };
  /** The most sessions on the leg's database at once during the walk (every 250 ms), the bench's own not counted. */
  peakSessions: number;
  /** The Redis server's CPU over the walk (INFO cpu): an upper bound, as the server may serve others too; null on the Postgres backend, whose queue CPU is in the Postgres figure. */
  queueServerCpuMs: number | null;
}

const READY_TIMEOUT_MS = 120_000;
const MAX_PROBLEMS = 10;

/** Workers up and idle, then one walk, measured; the workers are stopped before returning. */
export async function runWorkerLeg(o: WorkerLegOptions): Promise<WorkerLegResult> {
  const s = o.scenario;
  const env: Record<string, string> = {
    ...syncEnv(s, o.simUrl),
    DATABASE_URL: o.databaseUrl,
    ...backendEnv({ backend: o.queueBackend, redisUrl: o.redisUrl }),
    TE_QUEUE_PREFIX: o.prefix,
    TE_METRICS_PORT: '0',
    ...SCHEDULES_OFF,
    // `worker ready` and the counts of job lines, queue pauses and hand-backs are at info.
    LOG_LEVEL: 'info',
    ...(o.workerConcurrency !== null ? { TE_WORKER_CONCURRENCY: String(o.workerConcurrency) } : {}),
  };
  const messages: Record<string, number> = {};
  const problems: string[] = [];
  const procs = Array.from({ length: o.workers }, () => startWorker(env, o.nodeFlags, messages, problems));
  let warehouse: Warehouse | undefined;
  try {
    o.log(`workers: starting ${o.workers} \`tesync worker\` processes (prefix ${o.prefix})`);
    await Promise.all(procs.map((p) => p.ready));
    warehouse = await openWarehouse({ databaseUrl: o.databaseUrl, dataDir: '', maxConnections: 1 });

    const size0 = await databaseBytes(warehouse);
    const settledMs = o.settleMaxMs > 0 ? await settle(0.15, o.settleMaxMs) : 0;
    const redis0 = o.queueBackend === 'redis' ? await redisCpuMs(o.redisUrl) : null;
    const pg0 = await postgresCpu(warehouse);
    const w0 = procs.map((p) => processTicks(p.pid) ?? 0);
    const sim0 = await o.simCpu();
    const m0 = readCpuTimes();
    const t0 = Date.now();
    const sessions = sessionPeak(warehouse);
    const timeoutS = Math.max(600, Math.ceil(s.tokens * 10));
    const enq = await runEnqueue(['enqueue', '--wait', '--json', '--timeout', String(timeoutS)], env, o.nodeFlags);
    const t1 = Date.now();
    const m1 = readCpuTimes();
    const sim1 = await o.simCpu();
    const w1 = procs.map((p) => processTicks(p.pid) ?? 0);
    const pg1 = await postgresCpu(warehouse);
    const redis1 = redis0 === null ? null : await redisCpuMs(o.redisUrl);
    const peakSessions = await sessions.stop();
    const peaks = procs.map((p) => peakRssMb(p.pid));
    // Exit 1 with a summary is a failed run, measured like any other; no summary is the bench's failure.
    const outcome = lastJson(enq.stdout) as { runId?: string; status?: string } | null;
    if (!outcome?.runId) throw new Error(`tesync enqueue --wait exited ${enq.code} without a run summary: ${enq.stderr.slice(-2000) || enq.stdout.slice(-2000)}`);

    // A worker's request log is written in batches: every row is in once the workers have stopped.
    const processCpuMs = procs.map((p) => (processTicks(p.pid) ?? 0) * CLOCK_TICK_MS);
    const exits = await stopWorkers(procs, o.log);

    const runId = outcome.runId;
    const addedAt = await walkAddedAt({ backend: o.queueBackend, redisUrl: o.redisUrl, databaseUrl: o.databaseUrl, prefix: o.prefix }, runId);
    const [run] = await warehouse.query<{ status: string; started_ms: string; finished_ms: string | null; stats: { rows?: number; failed?: number } | null }>(
      sql`select status, (extract(epoch from started_at) * 1000)::bigint::text as started_ms, (extract(epoch from finished_at) * 1000)::bigint::text as finished_ms, stats from sync.runs where id = ${runId}`,
    );
    if (!run || run.finished_ms === null) throw new Error(`run ${runId} has no end in sync.runs`);
    const rows = await requestRows(warehouse, runId);
    const from = addedAt ?? t0;
    const workerCpu = w1.map((t, i) => (t - w0[i]!) * CLOCK_TICK_MS);
    const cpuMs = workerCpu.reduce((a, b) => a + b, 0);
    const postgresCpuMs = pg0 && pg1 ? cpuDelta(pg0, pg1) : null;
    const simCpuMs = sim1.cpuMs - sim0.cpuMs;
    const queueServerCpuMs = redis0 !== null && redis1 !== null ? redis1 - redis0 : null;
    const size1 = await databaseBytes(warehouse);
    const tw0 = performance.now();
    // The run's start (sync.runs.started_at): every version it closed ends after it.
    const writes = await tableWrites(warehouse, runId, new Date(Number(run.started_ms)));
    const tableWritesMs = performance.now() - tw0;
    const phase: PhaseResult = {
      phase: 'full',
      status: run.status,
      wallMs: Number(run.finished_ms) - from,
      requests: rows.length,
      requestsByBucket: byBucket(rows),
      byStatus: byStatus(rows),
      rateLimits: rateLimitReport(rows),
      rowsWritten: Number(run.stats?.rows ?? 0),
      failed: Number(run.stats?.failed ?? 0),
      cpuMs,
      postgresCpuMs,
      peakRssMb: Math.max(0, ...peaks),
      tableWrites: writes,
      tableWritesMs,
      // Read after the machine's second reading: not in its figure.
      tableWritesPostgresCpuMs: null,
    };
    return {
      phase,
      runId,
      wallFrom: addedAt === null ? 'enqueue started' : 'job added',
      queuedMs: addedAt === null ? null : Number(run.started_ms) - addedAt,
      enqueueCommandMs: t1 - t0,
      simCpuMs,
      simRequests: sim1.requests - sim0.requests,
      machine: machineDuring(m0, m1, cpuMs + simCpuMs + (postgresCpuMs ?? 0) + (queueServerCpuMs ?? 0), settledMs),
      workers: procs.map((p, i) => ({ pid: p.pid, cpuMs: workerCpu[i]!, processCpuMs: processCpuMs[i]!, peakRssMb: peaks[i]!, jobsDone: p.jobsDone(), exitCode: exits[i]! })),
      messages,
      problems,
      tableRows: await tableRows(warehouse),
      bucketSpans: bucketSpans(rows, s),
      bytes: { responses: await responseBytes(warehouse, runId), database: size1.database - size0.database, archive: size1.archive - size0.archive },
      peakSessions,
      queueServerCpuMs,
    };
  } finally {
    await warehouse?.close();
    await stopWorkers(procs, o.log);
  }
}

function bucketSpans(rows: readonly RequestRow[], s: Scenario): WorkerLegResult['bucketSpans'] {
  const out: WorkerLegResult['bucketSpans'] = {};
  for (const { bucket, budget } of bucketList(s)) {
    const mine = rows.filter((r) => r.bucket === bucket);
    if (mine.length === 0) continue;
    const spanMs = Math.max(...mine.map((r) => r.startedAtMs + r.durationMs)) - Math.min(...mine.map((r) => r.startedAtMs));
    out[bucket] = { spanMs, requests: mine.length, shareOfBudget: spanMs > 0 ? (mine.length * budget.windowMs) / (budget.limit * spanMs) : null };
  }
  return out;
}

interface WorkerHandle {
  child: ChildProcess;
  pid: number;
  ready: Promise<void>;
  exited: Promise<number | null>;
  jobsDone(): number;
}

function startWorker(env: Record<string, string>, nodeFlags: readonly string[], messages: Record<string, number>, problems: string[]): WorkerHandle {
  const child = spawn(process.execPath, [...nodeFlags, BIN, 'worker'], { env: childEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
  let jobs = 0;
  let tail = '';
  let partial = '';
  let onReady = () => {};
  let onFail = (_: Error) => {};
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    onFail = reject;
  });
  const timer = setTimeout(() => onFail(new Error(`a worker was not ready after ${READY_TIMEOUT_MS} ms:\n${tail}`)), READY_TIMEOUT_MS);
  child.stderr!.on('data', (d: Buffer) => {
    const text = d.toString();
    tail = (tail + text).slice(-2000);
    const parts = (partial + text).split('\n');
    partial = parts.pop()!;
    for (const raw of parts) {
      let line: LogLine;
      try {
        line = raw.startsWith('{') ? (JSON.parse(raw) as typeof line) : { level: 50, msg: raw };
      } catch {
        line = { level: 50, msg: raw };
      }
      const msg = line.msg ?? '';
      messages[msg] = (messages[msg] ?? 0) + 1;
      if (msg === 'job done') jobs++;
      if (msg === 'worker ready') {
        clearTimeout(timer);
        onReady();
      }
      if ((line.level ?? 0) >= 40 && problems.length < MAX_PROBLEMS) problems.push(condensed(line));
    }
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      onFail(new Error(`a worker exited (${code}) before it was ready:\n${tail}`));
      resolve(code);
    });
  });
  return { child, pid: child.pid!, ready, exited, jobsDone: () => jobs };
}

interface LogLine {
  level?: number;
  msg?: string;
  job?: string;
  resource?: string;
  err?: unknown;
}

/** A warning's gist: level, message, job and error text. */
function condensed(line: LogLine): string {
  const level = line.level === undefined ? '?' : line.level >= 50 ? 'error' : 'warn';
  const where = [line.job, line.resource].filter(Boolean).join(' ');
  const err = errorText(line.err);
  return `${level}: ${line.msg ?? ''}${where ? ` (${where})` : ''}${err ? `: ${err}` : ''}`.slice(0, 600);
}

function errorText(err: unknown): string {
  if (err === undefined || err === null) return '';
  if (typeof err === 'string') return err;
  if (typeof err !== 'object') return String(err);
  const e = err as Record<string, unknown>;
  if (typeof e.message === 'string') return `${typeof e.type === 'string' ? `${e.type}: ` : ''}${e.message}`;
  // A string logged as `err` comes out as an object of its characters ({"0":"E","1":"r",...}).
  const chars = Object.keys(e).filter((k) => k !== '' && Number.isInteger(Number(k)));
  if (chars.length > 0) return chars.sort((a, b) => Number(a) - Number(b)).map((k) => String(e[k])).join('');
  return JSON.stringify(err);
}

/** SIGTERM, as a container stop does; SIGKILL for one still there after its grace period. */
async function stopWorkers(procs: readonly WorkerHandle[], log: (line: string) => void): Promise<(number | null)[]> {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  const killer = setTimeout(() => {
    for (const p of procs) {
      if (p.child.exitCode === null && p.child.signalCode === null) {
        log(`workers: ${p.pid} still running 40 s after SIGTERM; killed`);
        p.child.kill('SIGKILL');
      }
    }
  }, 40_000);
  try {
    return await Promise.all(procs.map((p) => p.exited));
  } finally {
    clearTimeout(killer);
  }
}

function runEnqueue(args: string[], env: Record<string, string>, nodeFlags: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function lastJson(stdout: string): unknown {
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return null;
  }
}

/** VmHWM of a live process, in MB; 0 when unreadable. */
function peakRssMb(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** When the walk job of this run was added to its queue (BullMQ's job timestamp); null if not found. */
async function walkAddedAt(place: Parameters<typeof openTestQueue>[0], runId: string): Promise<number | null> {
  const queue = openTestQueue(place, WALK_QUEUE);
  try {
    const jobs = await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed']);
    const walk = jobs.find((j) => j.name === 'walk' && (j.data as { runId?: string } | undefined)?.runId === runId);
    return walk?.timestamp ?? null;
  } finally {
    await queue.close();
  }
}

/** The Redis server's CPU so far (INFO cpu, user and system), in ms. */
async function redisCpuMs(url: string): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const info = await redis.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
    return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
  } finally {
    redis.disconnect();
  }
}
