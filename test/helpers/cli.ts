// Runs the real `tesync` command in a child process, as a user would.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledBin } from './compiled-bin.ts';
import { patience } from './patience.ts';

/** bin/tesync.js: what a user runs, its TypeScript through tsx. */
export const SOURCE_BIN = fileURLToPath(new URL('../../bin/tesync.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `tesync` the tests start: the same sources compiled to JavaScript (compiled-bin.ts). */
export const BIN = compiledBin();

/**
 * NODE_OPTIONS of a child: nothing, unless TESYNC_TEST_CPU_LOG names a file each child appends
 * its CPU to (cpu-log.mjs), or TESYNC_TEST_REPORT a folder a child writes Node's diagnostic
 * report to on SIGUSR2 (its handles and stacks: what a hung worker waits on). No loader: every
 * module a loader hook sees crosses to Node's loader thread and back.
 */
export const CHILD_NODE_OPTIONS = [
  process.env.TESYNC_TEST_CPU_LOG ? `--import=${new URL('./cpu-log.mjs', import.meta.url).href}` : '',
  process.env.TESYNC_TEST_REPORT ? `--report-on-signal --report-signal=SIGUSR2 --report-directory=${process.env.TESYNC_TEST_REPORT}` : '',
]
  .filter((o) => o !== '')
  .join(' ');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Environment for a child: only what the test passes, plus PATH/HOME (no ambient TE_* or
 * DATABASE_URL) and CHILD_NODE_OPTIONS. Its pool is 4 connections unless the
 * test says otherwise: test files run side by side on one Postgres of 100 connections.
 */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const cpuLog = process.env.TESYNC_TEST_CPU_LOG ? { TESYNC_TEST_CPU_LOG: process.env.TESYNC_TEST_CPU_LOG, TESYNC_TEST_CPU_FILE: testFile() } : {};
  return { PATH: process.env.PATH, HOME: process.env.HOME, NODE_OPTIONS: CHILD_NODE_OPTIONS, TE_DATABASE_POOL: '4', ...cpuLog, ...env };
}

/**
 * The test file this process is running, for the CPU log: vitest's worker state (internal, so
 * read defensively; a worker runs one file at a time). Empty outside vitest (the bench).
 */
function testFile(): string {
  const state = (globalThis as { __vitest_worker__?: { filepath?: unknown } }).__vitest_worker__;
  return typeof state?.filepath === 'string' ? path.relative(ROOT, state.filepath) : '';
}

/**
 * `wrap`: a command the process runs under, e.g. `['faketime', '-f', '-2h']` (a skewed clock).
 * `timeoutMs`: when to kill it as hung, as measured on an idle machine (scaled by `patience`).
 */
export function runCli(args: string[], env: Record<string, string | undefined>, options: { cwd?: string; timeoutMs?: number; wrap?: string[] } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [command, ...prefix] = [...(options.wrap ?? []), process.execPath];
    const child = spawn(command!, [...prefix, BIN, ...args], {
      cwd: options.cwd,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), patience(options.timeoutMs ?? 60_000));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface CliProcess {
  child: ReturnType<typeof spawn>;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has ended, whatever ended it. */
  exited: Promise<CliResult>;
  /** Resolves once stderr or stdout matches (rejects when the process ends first, or after `patience(timeoutMs)`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** Starts `tesync` in a child process and returns at once: a test watches its output while it runs. */
export function startCli(args: string[], env: Record<string, string | undefined>, options: { timeoutMs?: number } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const l of listeners) l();
  };
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    changed();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    changed();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), patience(options.timeoutMs ?? 120_000));
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      changed();
      resolve({ code, signal, stdout, stderr });
    });
  });
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const done = (err?: Error) => {
          listeners.delete(look);
          clearTimeout(t);
          if (err) reject(err);
          else resolve();
        };
        const look = () => {
          if (pattern.exec(stdout) !== null || pattern.exec(stderr) !== null) done();
          else if (ended || child.exitCode !== null || child.signalCode !== null) done(new Error(`tesync ${args.join(' ')} ended before printing ${pattern}:\n${stdout}\n${stderr}`));
        };
        const t = setTimeout(() => done(new Error(`tesync ${args.join(' ')} did not print ${pattern} within ${patience(timeoutMs)} ms:\n${stdout}\n${stderr}`)), patience(timeoutMs));
        listeners.add(look);
        look();
      });
    },
  };
}
