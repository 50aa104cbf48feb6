// The embedded warehouse is a real Postgres server that many tesync processes share: commands
// run at once (and one killed mid-write) leave it exact and consistent; real clients get all of
// Postgres through `tesync sql`; nobody without its password gets in.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCalendar } from '../../../src/cli/demo-simulator.ts';
import { startSimulator, type Simulator } from '../../../sim/index.ts';
import { BIN, childEnv, runCli, type CliResult } from '../../helpers/cli.ts';
import { embeddedFolder, isAlive, serverPids, type TempFolder } from '../../helpers/embedded.ts';
import { patience } from '../../helpers/patience.ts';
import { assertSameAsServed, docExamples, parsePsql, PSQL_ARGS, PSQL_ENV, psqlNotInstalled, Served } from '../../docs/doc-examples.ts';

const run = promisify(execFile);
const TOKENS = '6';
const DEMO_TIMEOUT = 180_000;

/** `tesync sql` in the background, and the URL it printed. */
async function startSql(cwd: string): Promise<{ child: ChildProcess; url: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'sql'], { cwd, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /psql "(postgres:\/\/[^"]+)"/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`tesync sql exited ${code}: ${out}`)));
  });
  return {
    child,
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', (code) => resolve(code));
        child.kill('SIGINT');
      }),
  };
}

/** The row counts a demo printed ("Rows per table"), without the "(+N)" of what it added. */
function rowsPerTable(r: CliResult): Record<string, number> {
  const out: Record<string, number> = {};
  // The current tables: `_history` tables hold the versions that came and went in between.
  for (const m of r.stdout.matchAll(/^ {2}((?:app|gateway)\.\w+)\s+(\d+)/gm)) if (!m[1]!.endsWith('_history')) out[m[1]!] = Number(m[2]);
  return out;
}

/** Per table: its row count and a digest of its content without the columns that say when it was fetched. */
async function contents(url: string): Promise<Record<string, string>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<{ t: string }[]>`select table_schema || '.' || table_name as t from information_schema.tables where table_schema in ('app', 'gateway') and table_type = 'BASE TABLE' and table_name not like '%\\_history' order by 1`;
    const out: Record<string, string> = {};
    for (const { t } of tables) {
      const cols = await sql<{ c: string }[]>`select quote_ident(column_name) as c from information_schema.columns where table_schema || '.' || table_name = ${t} and column_name not in ('fetched_at', 'run_id', 'first_seen_at', 'last_seen_at', 'raw_response_id', 'snapshot_date') order by ordinal_position`;
      const [row] = await sql.unsafe(`select count(*)::text as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as d from (select ${cols.map((c) => c.c).join(', ')} from ${t}) x`);
      out[t] = `${row!.n} ${row!.d}`;
    }
    return out;
  } finally {
    await sql.end();
  }
}

// One demo into a fresh folder for the file: what the demos run at once must come to, and the
// warehouse real clients query through `tesync sql`. The folder is one an earlier tesync filled
// with PGlite (its old warehouse beside, no server yet): the demo is the new server's first
// command there, as the last test has it.
let reference: TempFolder;
let oldPglite: string;
let fresh: CliResult;
beforeAll(async () => {
  reference = await embeddedFolder('tesync-reference');
  oldPglite = path.join(reference.dir, '.tesync', 'warehouse');
  mkdirSync(oldPglite, { recursive: true });
  writeFileSync(path.join(oldPglite, 'PG_VERSION'), '17\n');
  fresh = await runCli(['demo', '--tokens', TOKENS], {}, { cwd: reference.dir, timeoutMs: DEMO_TIMEOUT });
  expect(fresh.code, fresh.stderr).toBe(0);
}, patience(DEMO_TIMEOUT));
afterAll(async () => {
  await reference?.cleanup();
});

describe('one embedded server, many commands at once', () => {
  let chaos: TempFolder;
  let sim: Simulator;
  beforeAll(async () => {
    chaos = await embeddedFolder('tesync-chaos');
    // The upstream `tesync demo` starts for itself, started here too, on the demo's calendar:
    // the killed sync writes the same data. (On the simulator's own calendar it served days
    // before the demo's first, and the series the killed sync had reached kept them: the
    // demo's answers leave those days out, which removes nothing.)
    sim = await startSimulator({ tokens: Number(TOKENS), ...demoCalendar(), gatewayKeys: ['gw-key-for-the-killed-sync'] });
  });
  afterAll(async () => {
    await sim?.close();
    await chaos?.cleanup();
  });

  it('demo, status and sql at once, twice over, and a sync killed mid-run: exact and consistent, and the next demo succeeds', async () => {
    for (let round = 1; round <= 2; round++) {
      const sql = await startSql(chaos.dir);
      const [demo, status] = await Promise.all([
        runCli(['demo', '--tokens', TOKENS], {}, { cwd: chaos.dir, timeoutMs: DEMO_TIMEOUT }),
        runCli(['status'], {}, { cwd: chaos.dir, timeoutMs: DEMO_TIMEOUT }),
      ]);
      // sql's clients read while the demo writes.
      const client = postgres(sql.url, { max: 1, onnotice: () => {} });
      const n = (await client<{ n: number }[]>`select count(*)::int as n from sync.runs`)[0]!.n;
      await client.end();
      expect(n).toBeGreaterThanOrEqual(round);
      expect(await sql.stop()).toBe(0);
      expect(demo.code, demo.stderr).toBe(0);
      expect(status.code, status.stderr).toBe(0);
    }

    // A sync of the same data, killed with SIGKILL while it writes. Its simulator is not the
    // demo's own (a URL, not `simulator`): the warehouse is rebound on purpose, both ways.
    const env = { TE_APP_URL: sim.url, TE_GATEWAY_URL: sim.url, TE_GATEWAY_API_KEY: 'gw-key-for-the-killed-sync', TE_DATA_DIR: path.join(chaos.dir, '.tesync') };
    const sync = spawn(process.execPath, [BIN, 'sync', '--full', '--force'], { cwd: chaos.dir, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve) => {
      // Killed once it is writing: a few job lines in (its log goes to stderr).
      let lines = 0;
      sync.stderr!.on('data', (d: Buffer) => {
        lines += d.toString().split('\n').filter((l) => l.includes('job done')).length;
        if (lines >= 5) resolve();
      });
      sync.on('exit', () => resolve());
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => sync.once('exit', (_code, signal) => resolve(signal)));
    sync.kill('SIGKILL');
    // Killed in the middle, not after it had finished.
    expect(await exited).toBe('SIGKILL');

    const last = await runCli(['demo', '--tokens', TOKENS, '--force'], {}, { cwd: chaos.dir, timeoutMs: DEMO_TIMEOUT });
    expect(last.code, last.stderr).toBe(0);
    // The same as one demo into a fresh folder.
    expect(rowsPerTable(last)).toEqual(rowsPerTable(fresh));
    expect(Object.keys(rowsPerTable(last)).length).toBeGreaterThan(20);

    // Every table the same, row for row, as one demo into a fresh folder; state complete.
    const chaosSql = await startSql(chaos.dir);
    const refSql = await startSql(reference.dir);
    try {
      expect(await contents(chaosSql.url)).toEqual(await contents(refSql.url));
      const states = async (url: string) => {
        const c = postgres(url, { max: 1 });
        try {
          return await c<{ source: string; resource: string }[]>`select source, resource from sync.resource_state where status in ('ok', 'unchanged', 'partial', 'not_materialized', 'skipped') order by 1, 2`;
        } finally {
          await c.end();
        }
      };
      const want = await states(refSql.url);
      expect(want.length).toBeGreaterThan(50);
      expect(await states(chaosSql.url)).toEqual(want);
    } finally {
      await chaosSql.stop();
      await refSql.stop();
    }
    // Nobody uses either server now: both stopped.
    expect([...(await serverPids(chaos.dir)), ...(await serverPids(reference.dir))].filter(isAlive)).toEqual([]);
  }, patience(600_000));
});

// On the file's fresh demo: its warehouse is only read here (temporary tables and settings stay
// in their sessions).
describe('real clients through tesync sql', () => {
  let server: Awaited<ReturnType<typeof startSql>>;
  beforeAll(async () => {
    server = await startSql(reference.dir);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("psql: \\l, \\dt app.*, and every example query of docs/warehouse.md, returning what the demo's upstream served", async () => {
    const psql = (args: string[]) => run('psql', [server.url, '-X', '-v', 'ON_ERROR_STOP=1', ...args]).catch(psqlNotInstalled);
    expect((await psql(['-c', '\\l'])).stdout).toMatch(/tesync\s+\|/);
    expect((await psql(['-c', '\\dt app.*'])).stdout).toMatch(/app\s+\| metric_history\s+\| table/);
    // The demo's simulator again (`demo --tokens 6`: its calendar, up to today, the default seed): the same data.
    const sim = await startSimulator({ tokens: Number(TOKENS), ...demoCalendar() });
    try {
      const answer = async (text: string) =>
        parsePsql((await run('psql', [server.url, ...PSQL_ARGS, '-c', text], { env: { ...process.env, ...PSQL_ENV }, maxBuffer: 64 << 20 }).catch(psqlNotInstalled)).stdout);
      const [run0] = (await answer('select started_at, finished_at from sync.runs order by started_at desc limit 1')).rows;
      const served = new Served().add({ data: sim.data, sources: ['app', 'gateway'] }, { started: run0![0]!, finished: run0![1]! });
      const examples = docExamples();
      expect(examples.length).toBeGreaterThanOrEqual(6);
      for (const e of examples) {
        const got = await answer(e.text).catch((err: Error) => {
          throw new Error(`example ${e.name} fails in psql: ${err.message}`);
        });
        assertSameAsServed(e.name, `psql, after \`tesync demo --tokens ${TOKENS}\``, got, served);
      }
    } finally {
      await sim.close();
    }
  });

  it('sessions are isolated: an open transaction blocks no one, settings and temp tables stay in their session', async () => {
    const a = postgres(server.url, { max: 1, onnotice: () => {} });
    const b = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      // psycopg2's default: a transaction left open after a read, here until b has done its work.
      let opened!: () => void;
      let bDone!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const bFinished = new Promise<void>((resolve) => (bDone = resolve));
      const holding = a.begin(async (tx) => {
        await tx`select count(*) from app.tokens`;
        await tx`set local search_path to gateway`;
        opened();
        await bFinished;
        return (await tx`show search_path`)[0]!.search_path as string;
      });
      await open;
      try {
        await b`set search_path to app, public`;
        await b`set application_name to 'bi-tool'`;
        await b`create temp table scratch (x int)`;
        await b`insert into scratch values (1), (2)`;
        const n = (await b<{ n: number }[]>`select count(*)::int as n from scratch`)[0]!.n;
        expect(n).toBe(2);
        const t = (await b<{ t: number }[]>`select count(*)::int as t from tokens`)[0]!.t;
        expect(t).toBeGreaterThan(0);
      } finally {
        bDone();
      }
      expect(await holding).toBe('gateway');
      const [settings] = await a<{ path: string; app: string; scratch: string | null }[]>`select current_setting('search_path') as path, current_setting('application_name') as app, to_regclass('scratch')::text as scratch`;
      expect(settings).toEqual({ path: '"$user", public', app: 'postgres.js', scratch: null });
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('a cancelled query returns an error and its client goes on (pg_cancel_backend and the protocol cancel)', async () => {
    const a = postgres(server.url, { max: 1, onnotice: () => {} });
    const b = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      const pid = (await b<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
      // Cancelled once the server runs it: a cancel that came before would cancel nothing.
      const sleeping = async () => {
        while ((await a<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where pid = ${pid} and state = 'active' and query like '%pg_sleep%'`)[0]!.n === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      };
      const slow = b`select pg_sleep(30)`;
      const settled = slow.then(
        () => 'finished',
        (err: { code?: string }) => err.code,
      );
      await sleeping();
      const cancelled = (await a<{ cancelled: boolean }[]>`select pg_cancel_backend(${pid}) as cancelled`)[0]!.cancelled;
      expect(cancelled).toBe(true);
      expect(await settled).toBe('57014');
      expect((await b`select 1 as one`)[0]!.one).toBe(1);

      const again = b`select pg_sleep(30)`;
      const outcome = again.then(
        () => 'finished',
        (err: { code?: string }) => err.code,
      );
      await sleeping();
      again.cancel();
      expect(await outcome).toBe('57014');
      expect((await b`select 2 as two`)[0]!.two).toBe(2);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('refuses a connection without the password, with a wrong one, and from another system user', async () => {
    const u = new URL(server.url);
    const tryConnect = async (url: string) => {
      const c = postgres(url, { max: 1, connect_timeout: patience(5_000) / 1000, onnotice: () => {} });
      try {
        await c`select 1`;
        return 'connected';
      } catch (err) {
        return (err as { code?: string; message: string }).code ?? (err as Error).message;
      } finally {
        await c.end({ timeout: 1 }).catch(() => {});
      }
    };
    const without = new URL(server.url);
    without.password = '';
    expect(await tryConnect(without.toString())).not.toBe('connected');
    const wrong = new URL(server.url);
    wrong.password = 'not-the-password';
    expect(await tryConnect(wrong.toString())).toBe('28P01');
    expect(await tryConnect(server.url)).toBe('connected');

    // Only its owner can read the password; no one gets in without it.
    const passwordFile = path.join(reference.dir, '.tesync', 'postgres', 'password');
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    // Printed by `tesync sql` alone: no other command's output or log has it.
    const password = readFileSync(passwordFile, 'utf8').trim();
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    expect(fresh.stdout + fresh.stderr).not.toContain(password);
    expect(statSync(path.join(reference.dir, '.tesync', 'postgres', 'data')).mode & 0o077).toBe(0);
    if (process.getuid?.() === 0) {
      await expect(run('runuser', ['-u', 'nobody', '--', 'cat', passwordFile])).rejects.toThrow(/Permission denied/);
      await expect(run('runuser', ['-u', 'nobody', '--', 'psql', `postgres://tesync@127.0.0.1:${u.port}/tesync`, '-w', '-X', '-c', 'select 1'])).rejects.toThrow(/password/);
    } else {
      // Not root: another user's view is the file modes above (no other account to run as).
      expect(process.getuid?.()).toBe(statSync(passwordFile).uid);
    }
  });
});

// The file's reference folder: the demo was its first command.
describe('a folder an earlier tesync filled with PGlite', () => {
  it('is left untouched, said in one line, and the new server is used', async () => {
    const said = fresh.stderr.split('\n').filter((l) => l.includes('PGlite'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(oldPglite);
    expect(readFileSync(path.join(oldPglite, 'PG_VERSION'), 'utf8')).toBe('17\n');
    // Said once: the new server exists now.
    const again = await runCli(['migrate'], {}, { cwd: reference.dir, timeoutMs: DEMO_TIMEOUT });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('PGlite');
  });
});
