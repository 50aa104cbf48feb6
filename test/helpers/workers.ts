// Real `tesync worker` processes for tests: spawned like a user would, their pino lines
// kept, ready when they log so; one run queued to a worker with `tesync enqueue --wait`; plus
// Redis clean-up for a test's queue prefix.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { BIN, childEnv, runCli, type CliResult } from './cli.ts';
import { patience } from './patience.ts';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Runs in a process group of its own (a wrapped worker). */
  group?: boolean;
  /** Resolves with the metrics port once the worker logged `worker ready`. */
  ready: Promise<{ metricsPort: number }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  lines(): LogLine[];
  stderr(): string;
}

/**
 * `wrap`: a command the worker runs under, e.g. `['faketime', '-f', '-1h']` (a skewed clock).
 * Such a command forks the worker: it runs in a process group of its own, which killAll ends
 * whole.
 */
export function startWorker(env: Record<string, string | undefined>, args: string[] = [], options: { wrap?: string[] } = {}): WorkerProcess {
  const [command, ...prefix] = [...(options.wrap ?? []), process.execPath];
  const group = options.wrap !== undefined;
  const child = spawn(command!, [...prefix, BIN, 'worker', ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: group });
  let stderr = '';
  const lines: LogLine[] = [];
  let onReady: (v: { metricsPort: number }) => void = () => {};
  let onFail: (e: Error) => void = () => {};
  const ready = new Promise<{ metricsPort: number }>((resolve, reject) => {
    onReady = resolve;
    onFail = reject;
  });
  let partial = '';
  child.stderr!.on('data', (d: Buffer) => {
    const text = d.toString();
    stderr += text;
    partial += text;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const raw of parts) {
      if (!raw.startsWith('{')) continue;
      try {
        const line = JSON.parse(raw) as LogLine;
        lines.push(line);
        if (line.msg === 'worker ready') onReady({ metricsPort: Number(line.metricsPort) });
      } catch {
        // not a log line
      }
    }
  });
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.on('close', (code, signal) => {
      onFail(new Error(`worker exited (${code ?? signal}) before it was ready:\n${stderr.slice(-2000)}`));
      resolve({ code, signal, at: Date.now() });
    });
  });
  return { child, pid: child.pid!, group, ready, exited, lines: () => lines, stderr: () => stderr };
}

/** Stops whatever is still running (SIGKILL: a test that got here has failed or is done). */
export async function killAll(workers: readonly WorkerProcess[]): Promise<void> {
  for (const w of workers) {
    if (w.child.exitCode !== null || w.child.signalCode !== null) continue;
    if (w.group) process.kill(-w.pid, 'SIGKILL');
    else w.child.kill('SIGKILL');
  }
  await Promise.all(workers.map((w) => w.exited));
}

/** Every schedule off: a worker with these runs only what a test queues. */
export const SCHEDULES_OFF = {
  TE_SCHEDULE_CATALOG: 'off',
  TE_SCHEDULE_SCREENER: 'off',
  TE_SCHEDULE_TOKEN_DATA: 'off',
  TE_SCHEDULE_BUNDLES: 'off',
  TE_SCHEDULE_EXPORT: 'off',
} as const;

export interface WorkerRun {
  /** The worker, still running while the check runs. */
  worker: WorkerProcess;
  /** How `tesync enqueue --wait` ended. */
  enqueue: CliResult;
}

/**
 * One `tesync worker` started with `env` (its REDIS_URL and TE_QUEUE_PREFIX included), and once
 * it is ready one run queued to it with `tesync enqueue --wait --timeout <patience(90)> --only <only>`;
 * `check` gets both while the worker still runs. The worker is then killed, whatever happened;
 * with `removeKeys` the Redis keys under the prefix go too (a test that looks at what the worker
 * left keeps them and removes them itself).
 */
export async function withWorkerRun(
  env: Record<string, string>,
  only: string,
  check: (run: WorkerRun) => Promise<void> | void,
  options: { removeKeys?: boolean } = {},
): Promise<void> {
  const { REDIS_URL: redisUrl, TE_QUEUE_PREFIX: prefix } = env;
  if (options.removeKeys && !(redisUrl && prefix)) throw new Error('withWorkerRun: removeKeys needs REDIS_URL and TE_QUEUE_PREFIX in env');
  const worker = startWorker(env);
  try {
    await worker.ready;
    const enqueue = await runCli(['enqueue', '--wait', '--timeout', String(patience(90)), '--only', only], env, { timeoutMs: 100_000 });
    await check({ worker, enqueue });
  } finally {
    await killAll([worker]);
    if (options.removeKeys) await deleteRedisKeys(redisUrl!, prefix!);
  }
}

/** Removes every Redis key under a test's queue prefix. */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    let n = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) n += await redis.unlink(...keys);
    } while (cursor !== '0');
    return n;
  } finally {
    await redis.quit();
  }
}

/** Polls until `check` returns a value (not undefined), or fails after `patience(timeoutMs)`: a hang guard, not a bound. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, nominalMs: number, everyMs = 100): Promise<T> {
  const timeoutMs = patience(nominalMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
