// The soak (`npm run soak -- --minutes 25`; not part of `npm test`): one real `tesync worker`
// process with every schedule at `* * * * *`, against the simulator in a child process over
// loopback HTTP with ~10 % faults (500s, 503s, resets, truncated bodies) and tight rate budgets
// (429s with Retry-After: the simulator's budgets, and every 20 s one scripted 429 per API, see
// test/bench/sim-process.ts), on a database and a TE_QUEUE_PREFIX of its own. `--queues redis`
// (the default): the worker's queues, budget and run ledger in Redis (REDIS_URL set);
// `--queues postgres`: in the soak's database itself (no REDIS_URL: BullMQ's Postgres backend in
// the schema queueSchema(prefix), the budget and ledger in sync.rate_budgets, sync.run_counts and
// sync.run_jobs). What the prefix keeps in its queue backend is measured as the Redis keys under
// the prefix, or as the queue rows: the rows of every table of that schema plus the prefix's rows
// of those three sync tables. Every ~15 s it samples the worker's RSS, that measure, runs by
// status and requests; once halfway and once at the end it records the worker's sessions on the
// soak's database (pg_stat_activity by application_name). At the end it stops the worker with
// SIGTERM (the walks in progress hand their jobs back), starts a worker with every schedule off
// to finish them, stops that one too, and checks:
//   - RSS growth after warm-up < 10 % (median of the 3 minutes after a 2-minute warm-up against
//     the median of the last 3 minutes);
//   - Redis keys / queue rows bounded: they reach a plateau (max of the last third of the samples
//     after the warm-up <= 1.2 x max of the middle third). Completed jobs are kept 10 minutes: a
//     soak of 25 minutes or more shows the plateau;
//   - 0 runs left `running` after the graceful stop and the next worker's start: a run handed
//     back is finished by the next worker, nothing is lost;
//   - 0 requests sent inside a Retry-After window: for each 429 with a Retry-After, the window is
//     [answered, started_at + retry_after_ms) where answered = started_at + duration_ms (the moment
//     tesync had the whole answer; the hold itself runs from its headers, somewhere inside the
//     request's duration, so it surely holds until started_at + retry_after_ms); a request to
//     the same bucket whose started_at (the moment it was sent) falls inside that window is a
//     violation. Requests sent before the 429's answer arrived (already in flight) are not.
// It prints a report, writes test/soak/results/<date>.json (<date>-postgres.json on Postgres) and
// exits 1 when a check fails. Cleanup: workers stopped, the prefix's queues removed (`tesync reset
// --queues`; on Redis also whatever keys it left), database dropped, simulator closed.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import type { SimOptions } from '../../sim/index.ts';
import { queueSchema } from '../../src/runners/bullmq/postgres-backend.ts';
import { quoteIdentifier } from '../../src/store/quote.ts';
import type { SimReply, SimRequest } from '../bench/sim-process.ts';
import { BIN, childEnv, runCli } from '../helpers/cli.ts';
import { backendEnv, type QueueBackendKind } from '../helpers/queue-backends.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP_KEY = 'soak_app_key_0123456789';
const GATEWAY_KEY = 'soak_gw_key_0123456789';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '25' },
    'sample-seconds': { type: 'string', default: '15' },
    'warmup-minutes': { type: 'string', default: '2' },
    'window-minutes': { type: 'string', default: '3' },
    'epoch-minutes': { type: 'string', default: '2' },
    'storm-seconds': { type: 'string', default: '20' },
    /** Where the worker's queues, budget and run ledger are: redis (REDIS_URL set), or postgres (the soak's database). */
    queues: { type: 'string', default: 'redis' },
    out: { type: 'string' },
    /** Keep the database (dropped otherwise) and append the workers' log lines to this file: for a look at what happened. */
    keep: { type: 'string' },
  },
});
const MINUTES = Number(args.minutes);
const SAMPLE_MS = Number(args['sample-seconds']) * 1000;
const WARMUP_MS = Number(args['warmup-minutes']) * 60_000;
const WINDOW_MS = Number(args['window-minutes']) * 60_000;
/** The simulator moves to its next epoch this often (a new history day, changed bodies), so walks keep writing. */
const EPOCH_MS = Number(args['epoch-minutes']) * 60_000;
/** Every this often, the next request to each API is answered 429 with a Retry-After of 1-4 s (0: never). */
const STORM_MS = Number(args['storm-seconds']) * 1000;
if (!(MINUTES > 0) || !(SAMPLE_MS > 0)) throw new Error('--minutes and --sample-seconds must be positive numbers');
if (args.queues !== 'redis' && args.queues !== 'postgres') throw new Error(`--queues must be redis or postgres, not ${JSON.stringify(args.queues)}`);
const BACKEND: QueueBackendKind = args.queues;

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
const suffix = randomBytes(3).toString('hex');
const DB_NAME = `tesync_soak_${stamp}_${suffix}`;
const PREFIX = `tesync-soak-${stamp}-${suffix}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${DB_NAME}`;
  return u.toString();
})();
/** The application_name of the soak's own session on its database: not one of the worker's. */
const SOAK_SESSION = 'tesync-soak';

/** ~10 % of requests hit by a fault (independent draws: 1 - 0.975 * 0.975 * 0.98 * 0.97 = 9.6 %), plus 429s from the budgets. */
const SIM_OPTIONS: SimOptions = {
  tokens: 8,
  historyDays: 120,
  chartsPerToken: 2,
  seed: 2323,
  latencyMs: [5, 40],
  appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } },
  gatewayKeys: [GATEWAY_KEY],
  rateLimits: {
    appPublic: { limit: 15, windowMs: 10_000 },
    appKey: { limit: 4, windowMs: 10_000 },
    gateway: { limit: 15, windowMs: 10_000 },
  },
  faults: { errorRate: 0.025, unavailableRate: 0.025, resetRate: 0.02, truncateRate: 0.03 },
};

interface Sample {
  atS: number;
  rssKb: number | null;
  /** What the prefix keeps in its queue backend: Redis keys, or queue rows (QueueProbe.measure). */
  queueState: number;
  runs: Record<string, number>;
  requests: number;
  http429: number;
  failedRequests: number;
  simServed: number;
  epoch: number;
}

const log = (line: string) => process.stdout.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function rssKb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

// --- what the prefix keeps in its queue backend ------------------------------------------------
/** The soak's look at the prefix's queue backend; the one place where the two backends differ. */
interface QueueProbe {
  /** What `count` counts, for the check's name and the report. */
  readonly measure: 'Redis keys' | 'queue rows';
  /** What `parts` splits it by. */
  readonly partsBy: 'kind' | 'table';
  count(): Promise<number>;
  parts(): Promise<Record<string, number>>;
  /** The jobs of a run not settled yet, as the run ledger has them (null: the ledger has no such run). */
  pendingJobs(runId: string): Promise<number | null>;
  /** After `tesync reset --queues`: removes whatever it left that the database's drop would not; how many. */
  sweep(): Promise<number>;
  close(): void;
}

/** Redis: the keys under `<prefix>:`; by kind, the queue or `run` / budget part after the prefix. */
function redisProbe(url: string): QueueProbe {
  const redis = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: false });
  async function* pages(): AsyncGenerator<string[]> {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      yield keys;
    } while (cursor !== '0');
  }
  return {
    measure: 'Redis keys',
    partsBy: 'kind',
    async count() {
      let n = 0;
      for await (const keys of pages()) n += keys.length;
      return n;
    },
    async parts() {
      const out: Record<string, number> = {};
      for await (const keys of pages()) {
        for (const k of keys) {
          const kind = k.slice(PREFIX.length + 1).split(':')[0]!;
          out[kind] = (out[kind] ?? 0) + 1;
        }
      }
      return out;
    },
    pendingJobs: (runId) => redis.scard(`${PREFIX}:run:${runId}:pending`),
    // What reset left (it refuses while a connection still uses the prefix): SCAN + UNLINK.
    async sweep() {
      let n = 0;
      for await (const keys of pages()) if (keys.length > 0) n += await redis.unlink(...keys);
      return n;
    },
    close: () => redis.disconnect(),
  };
}

/**
 * Postgres: the rows of every table in the prefix's schema (BullMQ's: job, event, scheduler,
 * job_log, metrics, dedup, ...) and the prefix's rows of sync.rate_budgets, sync.run_counts and
 * sync.run_jobs; by table. Whatever reset leaves goes with the database.
 */
function postgresProbe(sql: postgres.Sql): QueueProbe {
  const schema = queueSchema(PREFIX);
  const shared = [
    ['sync.rate_budgets', 'prefix'],
    ['sync.run_counts', 'queue_prefix'],
    ['sync.run_jobs', 'queue_prefix'],
  ] as const;
  async function parts(): Promise<Record<string, number>> {
    // Partitions are counted by their parent (none today: BullMQ's tables are plain).
    const tables = await sql<{ name: string }[]>`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relkind in ('r', 'p') and not c.relispartition order by 1`;
    const names = [...tables.map((t) => t.name), ...shared.map(([table]) => table)];
    const counts = [
      ...tables.map((t) => `select count(*)::int as n from ${quoteIdentifier(schema)}.${quoteIdentifier(t.name)}`),
      ...shared.map(([table, column]) => `select count(*)::int as n from ${table} where ${column} = $1`),
    ];
    const rows = await sql.unsafe<{ i: number; n: number }[]>(counts.map((c, i) => `select ${i} as i, n from (${c}) c${i}`).join(' union all '), [PREFIX]);
    return Object.fromEntries(rows.map((r) => [names[r.i]!, r.n]));
  }
  return {
    measure: 'queue rows',
    partsBy: 'table',
    parts,
    count: async () => Object.values(await parts()).reduce((a, b) => a + b, 0),
    async pendingJobs(runId) {
      const [row] = await sql<{ pending: number }[]>`select pending from sync.run_counts where queue_prefix = ${PREFIX} and run_id = ${runId}`;
      return row?.pending ?? null;
    },
    sweep: async () => 0,
    close: () => {},
  };
}

/** The worker's sessions on the soak's database (not the soak's own), by application_name. */
interface SessionCount {
  at: 'middle' | 'end';
  atS: number;
  total: number;
  byApplication: { application: string; n: number; active: number; idle: number; idleInTransaction: number }[];
}

async function workerSessions(sql: postgres.Sql, at: SessionCount['at'], atS: number): Promise<SessionCount> {
  const rows = await sql<SessionCount['byApplication']>`
    select coalesce(nullif(application_name, ''), '(none)') as application, count(*)::int as n,
           count(*) filter (where state = 'active')::int as active, count(*) filter (where state = 'idle')::int as idle,
           count(*) filter (where state like 'idle in transaction%')::int as "idleInTransaction"
    from pg_stat_activity
    where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid() and application_name <> ${SOAK_SESSION}
    group by 1 order by 2 desc, 1`;
  return { at, atS, total: rows.reduce((a, r) => a + r.n, 0), byApplication: [...rows] };
}

/** Pure: one line of a session count, the prefix written <prefix>. */
function sessionLine(s: SessionCount): string {
  const apps = s.byApplication.map((a) => `${a.application.replaceAll(PREFIX, '<prefix>')} ${a.n}${a.active ? ` (${a.active} active)` : ''}`);
  return `${s.at} (t=${s.atS}s): ${s.total} — ${apps.join(', ') || 'none'}`;
}

function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Where the prefix's queues are, for the log and the report. */
function queuesWhere(): string {
  return BACKEND === 'redis' ? `Redis at ${new URL(REDIS_URL).host}, keys ${PREFIX}:*` : `the soak's database, schema ${queueSchema(PREFIX)} and the prefix's rows of sync.rate_budgets, run_counts, run_jobs`;
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// --- the simulator, in a child process --------------------------------------------------------
function startSim(): Promise<{ child: ChildProcess; url: string; ask: (msg: SimRequest) => Promise<SimReply> }> {
  const child = fork(path.join(HERE, '../bench/sim-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting: ((m: SimReply) => void)[] = [];
  child.on('message', (m: SimReply) => waiting.shift()?.(m));
  const ask = (msg: SimRequest) =>
    new Promise<SimReply>((resolve, reject) => {
      waiting.push((m) => (m.type === 'error' ? reject(new Error(`simulator: ${m.message}`)) : resolve(m)));
      child.send(msg);
    });
  return ask({ type: 'start', options: SIM_OPTIONS, stormEveryMs: STORM_MS }).then((m) => {
    if (m.type !== 'ready') throw new Error(`simulator answered ${m.type}`);
    return { child, url: m.url, ask };
  });
}

// --- the worker ------------------------------------------------------------------------------
interface WorkerHandle {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  messages: Record<string, number>;
  warnings: string[];
  tail(): string;
}

function startWorker(env: Record<string, string>): WorkerHandle {
  const child = spawn(process.execPath, [BIN, 'worker'], { env: childEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
  const messages: Record<string, number> = {};
  const warnings: string[] = [];
  let tail = '';
  let partial = '';
  let onReady = () => {};
  let onFail = (_: Error) => {};
  const ready = new Promise<void>((res, rej) => {
    onReady = res;
    onFail = rej;
  });
  child.stderr!.on('data', (d: Buffer) => {
    if (args.keep) appendFileSync(args.keep, d);
    const text = d.toString();
    tail = (tail + text).slice(-4000);
    const parts = (partial + text).split('\n');
    partial = parts.pop()!;
    for (const raw of parts) {
      let line: { level?: number; msg?: string; err?: { message?: string }; job?: string };
      try {
        line = raw.startsWith('{') ? JSON.parse(raw) : { level: 50, msg: raw };
      } catch {
        line = { level: 50, msg: raw };
      }
      const msg = line.msg ?? '';
      messages[msg] = (messages[msg] ?? 0) + 1;
      if (msg === 'worker ready') onReady();
      if ((line.level ?? 0) >= 40 && warnings.length < 30) warnings.push(`${line.level! >= 50 ? 'error' : 'warn'}: ${msg}${line.job ? ` (${line.job})` : ''}${line.err?.message ? `: ${line.err.message}` : ''}`.slice(0, 400));
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      onFail(new Error(`the worker exited (${code ?? signal}) before it was ready:\n${tail}`));
      resolve({ code, signal });
    });
  });
  return { child, ready, exited, messages, warnings, tail: () => tail };
}

// --- main ------------------------------------------------------------------------------------
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
/** The soak's own session on its database (samples, checks, the queue rows): named, so that it is not counted as the worker's. */
const db = postgres(dbUrl, { max: 1, onnotice: () => {}, connection: { application_name: SOAK_SESSION } });
const probe: QueueProbe = BACKEND === 'redis' ? redisProbe(REDIS_URL) : postgresProbe(db);
/** What a tesync process needs to find the prefix's queues: REDIS_URL on Redis, nothing more on Postgres (the warehouse's). */
const queuesEnv: Record<string, string> = { DATABASE_URL: dbUrl, TE_QUEUE_PREFIX: PREFIX, ...backendEnv({ backend: BACKEND, redisUrl: REDIS_URL }) };
let sim: Awaited<ReturnType<typeof startSim>> | undefined;
let worker: WorkerHandle | undefined;
let cleaned = false;

interface CleanupResult {
  /** Redis keys or queue rows (probe.measure) before `tesync reset --queues`, and after it and the sweep. */
  before: number;
  removed: number;
  left: number;
  resetOutput: string;
}

async function cleanup(): Promise<CleanupResult> {
  if (cleaned) return { before: 0, removed: 0, left: 0, resetOutput: '' };
  cleaned = true;
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill('SIGTERM');
    const t = setTimeout(() => worker!.child.kill('SIGKILL'), 60_000);
    await worker.exited;
    clearTimeout(t);
  }
  const before = await probe.count().catch(() => -1);
  let resetOutput = '';
  try {
    const r = await runCli(['reset', '--queues'], { ...queuesEnv, LOG_LEVEL: 'warn' }, { timeoutMs: 60_000 });
    resetOutput = (r.stdout + r.stderr).trim() || `exit ${r.code ?? r.signal}`;
  } catch (err) {
    resetOutput = `tesync reset --queues failed: ${(err as Error).message}`;
  }
  await probe.sweep().catch(() => 0);
  const left = await probe.count().catch(() => -1);
  await db.end({ timeout: 5 }).catch(() => {});
  if (args.keep) log(`kept: database ${DB_NAME}, the workers' log in ${args.keep}`);
  else await admin.unsafe(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`).catch((err) => log(`could not drop ${DB_NAME}: ${(err as Error).message}`));
  await admin.end({ timeout: 5 }).catch(() => {});
  probe.close();
  if (sim && sim.child.exitCode === null) {
    // The simulator process exits on 'close' without answering.
    const gone = new Promise<void>((r) => sim!.child.once('exit', () => r()));
    sim.child.send({ type: 'close' } satisfies SimRequest);
    const t = setTimeout(() => sim?.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(t);
  }
  return { before, removed: before >= 0 && left >= 0 ? before - left : 0, left, resetOutput };
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  log(`database ${DB_NAME}, queue prefix ${PREFIX} on ${queuesWhere()}, ${MINUTES} min, a sample every ${SAMPLE_MS / 1000} s`);
  await admin.unsafe(`CREATE DATABASE "${DB_NAME}"`);
  sim = await startSim();
  log(`simulator at ${sim.url} (pid ${sim.child.pid})`);
  const env: Record<string, string> = {
    TE_APP_URL: sim.url,
    TE_APP_API_KEY: APP_KEY,
    TE_GATEWAY_URL: sim.url,
    TE_GATEWAY_API_KEY: GATEWAY_KEY,
    ...queuesEnv,
    TE_METRICS_PORT: '0',
    TE_SCHEDULE_CATALOG: '* * * * *',
    TE_SCHEDULE_SCREENER: '* * * * *',
    TE_SCHEDULE_TOKEN_DATA: '* * * * *',
    TE_SCHEDULE_BUNDLES: '* * * * *',
    TE_GATEWAY_HISTORY_PERIODS: '30d,365d',
    LOG_LEVEL: 'info',
  };
  const started = Date.now();
  worker = startWorker(env);
  await worker.ready;
  const pid = worker.child.pid!;
  log(`worker ready (pid ${pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const samples: Sample[] = [];
  const end = started + MINUTES * 60_000;
  let workerDied = false;
  void worker.exited.then(() => (workerDied = true));
  let next = Date.now();
  let epoch = 0;
  // The worker's sessions on the database: once halfway, once at the end of the run.
  const sessions: SessionCount[] = [];
  const countSessions = async (at: SessionCount['at']) => {
    const s = await workerSessions(db, at, Math.round((Date.now() - started) / 1000)).catch((err) => (log(`sessions (${at}): ${(err as Error).message}`), undefined));
    if (!s) return;
    sessions.push(s);
    log(`worker's sessions on the database, ${sessionLine(s)}`);
  };
  while (Date.now() < end && !workerDied) {
    if (sessions.length === 0 && Date.now() - started >= (MINUTES * 60_000) / 2) await countSessions('middle');
    const runs: Record<string, number> = {};
    let requests = 0;
    let http429 = 0;
    let failedRequests = 0;
    try {
      for (const r of await db`select status, count(*)::int as n from sync.runs group by status order by status`) runs[r.status as string] = r.n as number;
      const [q] = await db`select count(*)::int as n, count(*) filter (where http_status = 429)::int as r429,
        count(*) filter (where http_status is null or http_status >= 500)::int as failed from sync.requests`;
      requests = q!.n as number;
      http429 = q!.r429 as number;
      failedRequests = q!.failed as number;
    } catch {
      /* the schema may not be there in the first second */
    }
    const simReply = await sim.ask({ type: 'cpu' });
    const wantEpoch = EPOCH_MS > 0 ? Math.floor((Date.now() - started) / EPOCH_MS) : 0;
    if (wantEpoch !== epoch) {
      await sim.ask({ type: 'epoch', epoch: wantEpoch });
      epoch = wantEpoch;
      log(`simulator now at epoch ${epoch}`);
    }
    const s: Sample = {
      atS: Math.round((Date.now() - started) / 1000),
      rssKb: rssKb(pid),
      queueState: await probe.count(),
      runs,
      requests,
      http429,
      failedRequests,
      simServed: simReply.type === 'cpu' ? simReply.requests : 0,
      epoch,
    };
    samples.push(s);
    log(`t=${s.atS}s rss=${s.rssKb === null ? '?' : (s.rssKb / 1024).toFixed(1)}MB ${probe.measure.split(' ').at(-1)}=${s.queueState} runs=${JSON.stringify(runs)} requests=${requests} 429=${http429} failed=${failedRequests}`);
    next += SAMPLE_MS;
    await sleep(Math.max(0, next - Date.now()));
  }
  const ranMs = Date.now() - started;
  const diedEarly = workerDied;
  if (!workerDied) await countSessions('end');

  // Graceful stop: SIGTERM, then wait (TE_WORKER_SHUTDOWN_GRACE_MS is 25 s).
  log('stopping the worker (SIGTERM)');
  const stopAt = Date.now();
  worker.child.kill('SIGTERM');
  const killer = setTimeout(() => worker!.child.kill('SIGKILL'), 60_000);
  const exit = await worker.exited;
  clearTimeout(killer);
  const stopMs = Date.now() - stopAt;
  log(`worker exited ${exit.code ?? exit.signal} after ${(stopMs / 1000).toFixed(1)} s`);
  const queueAtStop = await probe.parts();

  // The walks in progress handed their jobs back: they stay `running` until a worker starts.
  const runningAtStop = await db`select id, options->>'schedule' as schedule from sync.runs where status = 'running' order by started_at`;
  const handedBack = [];
  for (const r of runningAtStop) handedBack.push({ id: r.id as string, schedule: r.schedule as string | null, pendingJobs: await probe.pendingJobs(r.id as string) });
  log(`runs running at the stop: ${handedBack.length} (${handedBack.map((r) => `${r.schedule}: ${r.pendingJobs} jobs queued`).join(', ')})`);
  // A worker with every schedule off: it starts no walk, and finishes the ones handed back.
  const mainWorker = worker;
  const drainStarted = Date.now();
  worker = startWorker({ ...env, TE_SCHEDULE_CATALOG: 'off', TE_SCHEDULE_SCREENER: 'off', TE_SCHEDULE_TOKEN_DATA: 'off', TE_SCHEDULE_BUNDLES: 'off' });
  await worker.ready;
  const drainDeadline = Date.now() + 5 * 60_000;
  while (Date.now() < drainDeadline) {
    const [open] = await db`select count(*)::int as n from sync.runs where status = 'running'`;
    if (open!.n === 0) break;
    await sleep(1000);
  }
  const drainMs = Date.now() - drainStarted;
  const finishedAfterStop = handedBack.length === 0 ? [] : await db`select status, count(*)::int as n from sync.runs where id in ${db(handedBack.map((r) => r.id))} group by 1 order by 1`;
  log(`the next worker finished them in ${(drainMs / 1000).toFixed(1)} s: ${JSON.stringify(finishedAfterStop)}`);
  worker.child.kill('SIGTERM');
  const drainKiller = setTimeout(() => worker!.child.kill('SIGKILL'), 60_000);
  const drainExit = await worker.exited;
  clearTimeout(drainKiller);
  const drainWorker = worker;
  worker = mainWorker;

  const runsFinal: Record<string, number> = {};
  for (const r of await db`select status, count(*)::int as n from sync.runs group by status order by status`) runsFinal[r.status as string] = r.n as number;
  const runsByKind = await db`select coalesce(trigger, '') as trigger, status, count(*)::int as n from sync.runs group by 1, 2 order by 1, 2`.catch(() => []);
  const leftRunning = await db`select id, sources, trigger, started_at, error from sync.runs where status = 'running'`;
  const requestsByBucket = await db`select coalesce(bucket, '(none)') as bucket, count(*)::int as n,
      count(*) filter (where http_status = 429)::int as r429,
      count(*) filter (where http_status = 429 and retry_after_ms is not null)::int as r429_with_retry_after,
      count(*) filter (where http_status is null)::int as no_answer,
      count(*) filter (where http_status >= 500)::int as s5xx,
      count(*) filter (where http_status between 200 and 399)::int as ok
    from sync.requests group by 1 order by 1`;
  // The Retry-After check, as defined at the top of this file.
  const violations = await db`
    with w as (
      select id, bucket, started_at + duration_ms * interval '1 millisecond' as answered_at,
             started_at + retry_after_ms * interval '1 millisecond' as ends_at, retry_after_ms
      from sync.requests where http_status = 429 and retry_after_ms is not null and retry_after_ms > 0 and bucket is not null)
    select w.id as r429_id, q.id as request_id, w.bucket, w.retry_after_ms,
           round(extract(epoch from (w.ends_at - q.started_at)) * 1000)::int as early_ms
    from w join sync.requests q on q.bucket = w.bucket and q.id <> w.id
     and q.started_at >= w.answered_at and q.started_at < w.ends_at
    order by early_ms desc limit 50`;
  const [windows] = await db`
    select count(*)::int as n, coalesce(max(retry_after_ms), 0)::int as max_ms, coalesce(min(retry_after_ms), 0)::int as min_ms,
      coalesce(sum(retry_after_ms), 0)::bigint as total_ms
    from sync.requests where http_status = 429 and retry_after_ms is not null and retry_after_ms > 0`;
  // The closest any request to the bucket came after a window's end (how tight the wait was).
  const [closest] = await db`
    with w as (
      select id, bucket, started_at + retry_after_ms * interval '1 millisecond' as ends_at
      from sync.requests where http_status = 429 and retry_after_ms > 0 and bucket is not null)
    select percentile_disc(0.5) within group (order by gap_ms) as median_ms, min(gap_ms) as min_ms from (
      select w.id, (select round(extract(epoch from (q.started_at - w.ends_at)) * 1000)::int from sync.requests q
                    where q.bucket = w.bucket and q.started_at >= w.ends_at order by q.started_at limit 1) as gap_ms
      from w) g where gap_ms is not null`;
  const [sizes] = await db`select pg_database_size(current_database())::bigint as bytes`;

  // The checks.
  const rssIn = (from: number, to: number) => samples.filter((s) => s.atS * 1000 >= from && s.atS * 1000 < to && s.rssKb !== null).map((s) => s.rssKb!);
  const lastS = samples.at(-1)?.atS ?? 0;
  const early = rssIn(WARMUP_MS, WARMUP_MS + WINDOW_MS);
  const late = rssIn(lastS * 1000 - WINDOW_MS + 1, lastS * 1000 + 1);
  const rssEarlyKb = median(early);
  const rssLateKb = median(late);
  const rssGrowth = rssLateKb / rssEarlyKb - 1;
  // Thirds of the samples after the warm-up: the keys or rows grow until the first completed
  // jobs age out, then hold (the first third is still the climb).
  const settled = samples.filter((s) => s.atS * 1000 >= WARMUP_MS);
  const third = Math.max(1, Math.floor(settled.length / 3));
  const queueFirstMax = Math.max(...settled.slice(0, third).map((s) => s.queueState));
  const queueMiddleMax = Math.max(...settled.slice(third, -third).map((s) => s.queueState));
  const queueLastMax = Math.max(...settled.slice(-third).map((s) => s.queueState));
  const finalRequests = samples.at(-1);
  const checks = [
    {
      name: 'RSS growth after warm-up < 10 %',
      value: `${(rssGrowth * 100).toFixed(1)} % (median ${(rssEarlyKb / 1024).toFixed(1)} MB at ${WARMUP_MS / 60_000}-${(WARMUP_MS + WINDOW_MS) / 60_000} min, ${(rssLateKb / 1024).toFixed(1)} MB in the last ${WINDOW_MS / 60_000} min)`,
      met: early.length > 0 && late.length > 0 && rssGrowth < 0.1,
    },
    {
      name: `${capitalized(probe.measure)} bounded (after warm-up, last-third max <= 1.2 x middle-third max)`,
      value: `${queueLastMax} <= ${Math.floor(queueMiddleMax * 1.2)} (middle-third max ${queueMiddleMax}, first-third max ${queueFirstMax})`,
      met: queueLastMax <= queueMiddleMax * 1.2,
    },
    {
      name: "0 runs left 'running' after the graceful stop and the next worker's start",
      value: `${leftRunning.length} (${handedBack.length} running at the stop, with their jobs handed back)`,
      met: leftRunning.length === 0,
    },
    { name: 'the next worker exited 0 on SIGTERM', value: String(drainExit.code ?? drainExit.signal), met: drainExit.code === 0 },
    { name: '0 requests sent inside a Retry-After window', value: `${violations.length} (of ${windows!.n} windows)`, met: violations.length === 0 },
    { name: 'the worker exited 0 on SIGTERM', value: String(exit.code ?? exit.signal), met: exit.code === 0 },
    { name: 'the soak ran its full length', value: `${(ranMs / 60_000).toFixed(1)} min`, met: !diedEarly && ranMs >= MINUTES * 60_000 - SAMPLE_MS },
  ];

  const cleanupResult = await cleanup();
  const result = {
    date: new Date().toISOString(),
    command: `npm run soak -- --minutes ${MINUTES} --queues ${BACKEND}`,
    /** Where the worker's queues, budget and run ledger were. */
    queueBackend: BACKEND,
    queuePrefix: PREFIX,
    machine: { node: process.version, cpus: (await import('node:os')).cpus().length, platform: process.platform },
    settings: {
      minutes: MINUTES,
      sampleSeconds: SAMPLE_MS / 1000,
      epochMinutes: EPOCH_MS / 60_000,
      stormSeconds: STORM_MS / 1000,
      warmupMinutes: WARMUP_MS / 60_000,
      windowMinutes: WINDOW_MS / 60_000,
      schedules: '* * * * * (catalog, screener, token data, bundles)',
      simulator: SIM_OPTIONS,
      workerEnv: Object.fromEntries(Object.entries(env).filter(([k]) => /KEY|URL/.exec(k) === null)),
    },
    checks,
    passed: checks.every((c) => c.met),
    rss: { earlyMedianKb: rssEarlyKb, lateMedianKb: rssLateKb, growth: rssGrowth, maxKb: Math.max(...samples.map((s) => s.rssKb ?? 0)) },
    queueState: {
      measure: probe.measure,
      where: queuesWhere(),
      firstThirdMax: queueFirstMax,
      middleThirdMax: queueMiddleMax,
      lastThirdMax: queueLastMax,
      max: Math.max(...samples.map((s) => s.queueState)),
      atStopBy: probe.partsBy,
      atStop: queueAtStop,
      cleanup: cleanupResult,
    },
    /** The worker's sessions on the soak's database (pg_stat_activity, the soak's own left out), halfway and at the end. */
    databaseSessions: sessions,
    runs: { final: runsFinal, byTrigger: runsByKind, runningAtStop: handedBack, finishedAfterStop, drainMs, leftRunning },
    requests: {
      total: finalRequests?.requests ?? 0,
      simulatorServed: finalRequests?.simServed ?? 0,
      byBucket: requestsByBucket,
      retryAfterWindows: windows,
      afterWindowEndGapMs: closest,
      violations,
    },
    databaseBytes: Number(sizes!.bytes),
    worker: { stopMs, exit, messages: worker.messages, warnings: worker.warnings },
    nextWorker: { exit: drainExit, messages: drainWorker.messages, warnings: drainWorker.warnings },
    samples,
  };
  const out = args.out ?? path.join(HERE, 'results', `${result.date.slice(0, 10)}${BACKEND === 'redis' ? '' : `-${BACKEND}`}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);

  // The report.
  const lines = [
    '',
    `Soak: ${(ranMs / 60_000).toFixed(1)} min, one tesync worker, schedules every minute, ~10 % faults + tight budgets`,
    `Queue backend: ${BACKEND} (${queuesWhere()})`,
    '',
    'RSS over time (MB, one value a minute):',
    '  ' + samples.filter((_, i) => i % Math.max(1, Math.round(60_000 / SAMPLE_MS)) === 0).map((s) => `${Math.round(s.atS / 60)}m ${((s.rssKb ?? 0) / 1024).toFixed(0)}`).join(', '),
    `${capitalized(probe.measure)} over time (one value a minute):`,
    '  ' + samples.filter((_, i) => i % Math.max(1, Math.round(60_000 / SAMPLE_MS)) === 0).map((s) => `${Math.round(s.atS / 60)}m ${s.queueState}`).join(', '),
    "The worker's sessions on the database (by application_name):",
    ...sessions.map((s) => `  ${sessionLine(s)}`),
    `Runs running at the stop: ${handedBack.length}, finished by the next worker in ${(drainMs / 1000).toFixed(1)} s: ${JSON.stringify(finishedAfterStop)}`,
    `Runs by status at the end: ${JSON.stringify(runsFinal)}`,
    `${capitalized(probe.measure)} at the stop, by ${probe.partsBy}: ${JSON.stringify(queueAtStop)}`,
    `Requests: ${finalRequests?.requests ?? 0} recorded; by bucket:`,
    ...requestsByBucket.map((b) => `  ${b.bucket}: ${b.n} (ok ${b.ok}, 429 ${b.r429}, 5xx ${b.s5xx}, no answer ${b.no_answer})`),
    `Retry-After windows: ${windows!.n} (${windows!.min_ms}-${windows!.max_ms} ms); first request after a window's end: median +${closest?.median_ms ?? '?'} ms, min +${closest?.min_ms ?? '?'} ms`,
    `Worker: stopped in ${(stopMs / 1000).toFixed(1)} s, exit ${exit.code ?? exit.signal}; ${worker.warnings.length} warnings/errors logged (first: ${worker.warnings[0] ?? 'none'})`,
    `Cleanup: database ${DB_NAME} ${args.keep ? 'kept' : 'dropped'}, ${cleanupResult.removed} ${probe.measure} removed (${cleanupResult.left} left): ${cleanupResult.resetOutput.split('\n')[0]}`,
    '',
    'Checks:',
    ...checks.map((c) => `  ${c.met ? 'PASS' : 'FAIL'}  ${c.name}: ${c.value}`),
    '',
    `Written: ${path.relative(process.cwd(), out)}`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  return result.passed ? 0 : 1;
}

// Nothing below may end the process by an empty event loop while a promise is pending.
const keepAlive = setInterval(() => {}, 1 << 30);
main().then(
  (code) => {
    clearInterval(keepAlive);
    process.exit(code);
  },
  async (err) => {
    log(`failed: ${(err as Error).stack ?? err}`);
    if (worker) log(`worker log tail:\n${worker.tail()}`);
    await cleanup().catch(() => {});
    process.exit(2);
  },
);
