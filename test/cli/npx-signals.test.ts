// A tesync started through npx, exactly as the README has a user start it, ends with its embedded
// Postgres server when the npx process is signalled: npm passes a signal on only to the shell it
// runs the command in, and the command watches the processes above it (src/cli/parent-watch.ts).
// SIGTERM to `npx tesync worker --demo`, SIGINT to `npx tesync sql`: within the hang guard, no
// process whose command line or environment names the command's data folder is left (tesync
// itself has the folder in TE_DATA_DIR, the Postgres server in `-D`), nor any of theirs.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { queueSchema } from '../../src/runners/bullmq/postgres-backend.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { childEnv, runCli } from '../helpers/cli.ts';
import { embeddedFolder, type TempFolder } from '../helpers/embedded.ts';
import { patience } from '../helpers/patience.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The processes of a data folder, from /proc: those whose command line or environment names it,
 * and the processes under them (a Postgres server's backends name nothing).
 */
function processesOf(folder: string): Proc[] {
  const all: (Proc & { names: boolean })[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    const cmdline = read(`/proc/${name}/cmdline`);
    if (stat === undefined || cmdline === undefined) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has ended: only its parent has yet to hear of it.
    if (fields[0] === 'Z') continue;
    const names = cmdline.includes(folder) || (read(`/proc/${name}/environ`) ?? '').includes(folder);
    all.push({ pid: Number(name), ppid: Number(fields[1]), cmd: cmdline.split('\0').join(' ').trim(), names });
  }
  const found = new Set(all.filter((p) => p.names).map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => found.has(p.pid)).map(({ pid, ppid, cmd }) => ({ pid, ppid, cmd }));
}

interface Npx {
  child: ChildProcess;
  out(): string;
  err(): string;
  /** Resolves once stdout or stderr matches (rejects past the hang guard, or when npx ends first). */
  waitFor(pattern: RegExp, ms: number): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npx tesync <args>` from the repository, as a user runs it. */
function npx(args: string[], env: Record<string, string>): Npx {
  // tsx, as a user's `npx tesync` loads the sources, not the tests' own loader.
  const child = spawn('npx', ['tesync', ...args], { cwd: REPO, env: childEnv({ ...env, NODE_OPTIONS: undefined }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return {
    child,
    out: () => out,
    err: () => err,
    exited,
    async waitFor(pattern, ms) {
      const deadline = Date.now() + patience(ms);
      for (;;) {
        const m = pattern.exec(out) ?? pattern.exec(err);
        if (m) return m;
        if (done) throw new Error(`npx tesync ${args.join(' ')} ended before ${pattern}:\n${err.slice(-3000)}`);
        if (Date.now() > deadline) throw new Error(`npx tesync ${args.join(' ')}: no ${pattern} after ${patience(ms)} ms:\n${err.slice(-3000)}`);
        await delay(100);
      }
    },
  };
}

/** Waits, within the hang guard the issue names (15 s, scaled), until none of the folder's processes is left; returns those left. */
async function leftAfter(folder: string): Promise<Proc[]> {
  const deadline = Date.now() + patience(15_000);
  let left = processesOf(folder);
  while (left.length > 0 && Date.now() < deadline) {
    await delay(100);
    left = processesOf(folder);
  }
  return left;
}

describe.runIf(process.platform === 'linux')('a tesync started through npx ends with the npx process, and so does its embedded server', () => {
  let folder: TempFolder | undefined;
  let running: Npx | undefined;
  afterEach(async () => {
    // A case that failed: whatever of the folder is left goes (its Postgres server with the folder).
    if (folder) {
      for (const p of processesOf(folder.dir)) if (!p.cmd.includes('postgres')) process.kill(p.pid, 'SIGKILL');
      await folder.cleanup();
    }
    if (running && running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL');
    folder = undefined;
    running = undefined;
  });

  it('SIGTERM to `npx tesync worker --demo`: no tesync or Postgres process of its data folder remains', async () => {
    folder = await embeddedFolder('tesync-npx-worker');
    const dataDir = `${folder.dir}/.tesync`;
    const worker = (running = npx(['worker', '--demo'], { TE_DATA_DIR: dataDir, TE_METRICS_PORT: '0' }));
    const ready = await worker.waitFor(/"metricsPort":(\d+)[^\n]*"msg":"worker ready"/, 120_000);
    const health = await fetch(`http://127.0.0.1:${ready[1]}/healthz`);
    expect(health.status).toBe(200);
    // What is to end: the worker (npx, its shell and tesync name the folder in their
    // environment) and the embedded server it started (`postgres -D <folder>/...`).
    const before = processesOf(folder.dir);
    expect(before.some((p) => p.cmd.includes('tesync worker --demo') && p.cmd.startsWith('node '))).toBe(true);
    expect(before.some((p) => p.cmd.includes(`-D ${dataDir}/postgres/data`))).toBe(true);

    worker.child.kill('SIGTERM');
    const left = await leftAfter(folder.dir);
    expect(left).toEqual([]);
    // npx itself ends by the signal, as npm does; the worker stopped as on a SIGTERM of its own.
    expect(await worker.exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(worker.err()).toContain('tesync: npm, which started this command, has ended: stopping as on SIGTERM');
    expect(worker.err()).toMatch(/"msg":"worker stopped"/);
  }, patience(180_000));

  it('SIGTERM to `npx tesync worker --demo` mid-walk: no job left locked; each job done or handed back', async () => {
    // The issue: a worker stopped so once left a job locked: the next worker found it stalled.
    folder = await embeddedFolder('tesync-npx-midwalk');
    const dataDir = `${folder.dir}/.tesync`;
    const env = { TE_DATA_DIR: dataDir, TE_METRICS_PORT: '0', TE_SCHEDULE_CATALOG: 'off', TE_SCHEDULE_SCREENER: 'off', TE_SCHEDULE_TOKEN_DATA: 'off', TE_SCHEDULE_BUNDLES: 'off' };
    const worker = (running = npx(['worker', '--demo'], env));
    await worker.waitFor(/"msg":"worker ready"/, 120_000);
    const queued = await runCli(['enqueue', '--full'], { TE_DATA_DIR: dataDir });
    expect(queued.code, queued.stderr).toBe(0);
    // Mid-walk: some jobs done, many more to come.
    await worker.waitFor(/("msg":"job done"[\s\S]*){5}/, 120_000);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await leftAfter(folder.dir)).toEqual([]);
    expect(worker.err()).toMatch(/"msg":"worker stopped"/);
    // Read as the next worker would find them: none active, none locked.
    const warehouse = await openWarehouse({ dataDir, maxConnections: 1 });
    try {
      const jobs = await warehouse.query<{ state: string; locked: number; n: number }>(
        sql`select state::text, count(lock_token)::int as locked, count(*)::int as n from ${sql.identifier(queueSchema('tesync'))}.job group by 1 order by 1`,
      );
      expect(jobs.filter((j) => j.state === 'active' || j.locked > 0), JSON.stringify(jobs)).toEqual([]);
      expect(jobs.some((j) => j.state === 'waiting' && j.n > 0), 'jobs left for the next worker').toBe(true);
    } finally {
      await warehouse.close();
    }
  }, patience(300_000));

  it('SIGINT to `npx tesync sql`: no tesync or Postgres process of its data folder remains', async () => {
    folder = await embeddedFolder('tesync-npx-sql');
    const dataDir = `${folder.dir}/.tesync`;
    const sql = (running = npx(['sql'], { TE_DATA_DIR: dataDir }));
    const serving = await sql.waitFor(/psql "(postgres:\/\/[^"]+)"/, 120_000);
    const client = postgres(serving[1]!, { max: 1, onnotice: () => {} });
    try {
      expect((await client<{ db: string }[]>`select current_database() as db`)[0]!.db).toBe('tesync');
    } finally {
      await client.end({ timeout: 5 });
    }
    const before = processesOf(folder.dir);
    expect(before.some((p) => p.cmd.includes('tesync sql') && p.cmd.startsWith('node '))).toBe(true);
    expect(before.some((p) => p.cmd.includes(`-D ${dataDir}/postgres/data`))).toBe(true);

    sql.child.kill('SIGINT');
    const left = await leftAfter(folder.dir);
    expect(left).toEqual([]);
    expect(await sql.exited).toEqual({ code: null, signal: 'SIGINT' });
    expect(sql.err()).toContain('tesync: npm, which started this command, was interrupted: stopping as on Ctrl-C');
  }, patience(180_000));
});
