// The commands of issue 60 item 3 on a warehouse behind a real PgBouncer of the test's own, as a
// user runs them: `tesync sync`, `tesync worker` on both queue backends (with `tesync enqueue
// --wait`), `tesync status --serve` and `tesync export`, against the simulator with a few
// tokens. One PgBouncer per file (test/cli/pooled-*.test.ts), in the mode the file names; each
// mode's file says what it expects of it.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { runCli, startCli, type CliResult } from './cli.ts';
import { startOwnPgbouncer, type OwnPgbouncer, type PoolMode } from './own-pgbouncer.ts';
import { patience } from './patience.ts';
import { useSimulator, useTestDatabase, type BlockDatabase } from './mirror-fixture.ts';
import { canaryKey, redisServerUrl, uniqueName } from './services.ts';
import { SCHEDULES_OFF, withWorkerRun, type WorkerRun } from './workers.ts';

export interface PooledWarehouse {
  readonly bouncer: OwnPgbouncer;
  /** The warehouse's database, reached directly: what TE_DATABASE_SESSION_URL names. */
  readonly db: BlockDatabase;
  /** DATABASE_URL through the pooler. */
  readonly pooledUrl: string;
  /** The sources (the simulator) and DATABASE_URL through the pooler; nothing else. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** The environment of a worker on `backend`, on a queue prefix of its own. */
  workerEnv(backend: 'redis' | 'postgres', extra?: Record<string, string>): Promise<Record<string, string>>;
  /** A query on the warehouse, directly. */
  query<T>(text: string): Promise<T[]>;
  /** A temporary folder of the test, removed afterwards. */
  folder(): string;
}

/** Starts, for the file, a simulator, a PgBouncer in `mode` and an empty database behind it. */
export function usePooledWarehouse(mode: PoolMode): PooledWarehouse {
  const appKey = canaryKey('pooledapp');
  const gatewayKey = canaryKey('pooledgw');
  // Empty: the first command through the pooler migrates it. Dropped after the PgBouncer in front of it goes.
  const db = useTestDatabase();
  const fx = useSimulator({ tokens: 2, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  let bouncer: OwnPgbouncer | undefined;
  const folders: string[] = [];
  beforeAll(async () => {
    bouncer = await startOwnPgbouncer(mode, db.databaseUrl);
  }, patience(60_000));
  afterAll(async () => {
    await bouncer?.cleanup();
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  }, patience(60_000));
  const ready = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('usePooledWarehouse: read outside its beforeAll..afterAll, or its setup failed');
    return v;
  };
  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: ready(bouncer).urlOf(db.name),
    TE_APP_URL: fx.sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: fx.sim.url,
    TE_GATEWAY_API_KEY: gatewayKey,
    LOG_LEVEL: 'warn',
    ...extra,
  });
  return {
    get bouncer() {
      return ready(bouncer);
    },
    get db() {
      return db;
    },
    get pooledUrl() {
      return ready(bouncer).urlOf(db.name);
    },
    env,
    async workerEnv(backend, extra = {}) {
      return env({ ...SCHEDULES_OFF, TE_QUEUE_PREFIX: uniqueName('pooled'), TE_METRICS_PORT: '0', LOG_LEVEL: 'info', ...(backend === 'redis' ? { REDIS_URL: await redisServerUrl() } : {}), ...extra });
    },
    async query<T>(text: string) {
      const c = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
      try {
        return (await c.unsafe(text)) as unknown as T[];
      } finally {
        await c.end();
      }
    },
    folder() {
      const f = mkdtempSync(path.join(tmpdir(), `tesync-pooled-${mode}-`));
      folders.push(f);
      return f;
    },
  };
}

/** `tesync sync` of the simulator; its run as sync.runs holds it. */
export async function syncThrough(fx: PooledWarehouse, extra: Record<string, string> = {}): Promise<{ cli: CliResult; runs: { status: string }[] }> {
  const cli = await runCli(['sync'], fx.env(extra), { timeoutMs: 120_000 });
  const runs = cli.code === 0 ? await fx.query<{ status: string }>("select status from sync.runs where trigger <> 'export' order by started_at") : [];
  return { cli, runs };
}

/** One `tesync worker` and a walk of the token lists queued to it with `tesync enqueue --wait`, then the run as the warehouse holds it. */
export async function workerWalk(env: Record<string, string>): Promise<WorkerRun & { errors: string[]; run: { status: string; backend: string } | undefined }> {
  let out: (WorkerRun & { errors: string[] }) | undefined;
  await withWorkerRun(
    env,
    'tokens',
    (r) => {
      out = { ...r, errors: r.worker.lines().filter((l) => l.level >= 50).map((l) => l.msg) };
    },
    { removeKeys: env.REDIS_URL !== undefined },
  );
  const [run] = await postgresRuns(env.TE_DATABASE_SESSION_URL, env);
  return { ...out!, run };
}

/** The last manual run of the worker's prefix, read directly when a direct URL is at hand (else through the pooler). */
async function postgresRuns(direct: string | undefined, env: Record<string, string>): Promise<{ status: string; backend: string }[]> {
  const c = postgres(direct ?? env.DATABASE_URL!, { max: 1, onnotice: () => {}, prepare: false });
  try {
    return await c<{ status: string; backend: string }[]>`
      select status, options->>'queueBackend' as backend from sync.runs
      where trigger = 'manual' and options->>'queuePrefix' = ${env.TE_QUEUE_PREFIX!} order by started_at desc limit 1`;
  } finally {
    await c.end();
  }
}

/** `tesync status --serve` until it answered /status.json once: that answer. */
export async function serveStatusOnce(env: Record<string, string>): Promise<{ status: number; groups: unknown }> {
  const serve = startCli(['status', '--serve', '--port', '0'], env);
  try {
    await serve.waitFor(/Status page of .*: http:\/\/127\.0\.0\.1:\d+\//, 60_000);
    const port = Number(/http:\/\/127\.0\.0\.1:(\d+)\//.exec(serve.stdout())![1]);
    const r = await fetch(`http://127.0.0.1:${port}/status.json`);
    const body = (await r.json()) as { groups?: unknown };
    return { status: r.status, groups: body.groups };
  } finally {
    serve.child.kill('SIGINT');
    await serve.exited;
  }
}

/** `tesync export` into a new folder: the command's end and the manifest's files. */
export async function exportThrough(fx: PooledWarehouse, env: Record<string, string>): Promise<{ cli: CliResult; files: number }> {
  const dir = fx.folder();
  const cli = await runCli(['export', '--to', dir], env, { timeoutMs: 120_000 });
  const manifest = path.join(dir, '_manifest.json');
  const files = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { files: unknown[] }).files.length : 0;
  return { cli, files };
}

/** The lines of `tesync check --json`. */
export function checks(stdout: string): { variable: string; status: string; message: string }[] {
  return (JSON.parse(stdout) as { checks: { variable: string; status: string; message: string }[] }).checks;
}
