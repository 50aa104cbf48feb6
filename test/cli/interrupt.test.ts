// Ctrl-C and SIGTERM on `tesync sync` and `tesync demo`, as a person and a supervisor send
// them: the real command in an 80-column tmux pane (Ctrl-C typed with send-keys) or a child
// process sent signals. The walk stops, the run is closed `interrupted` at the signal's time,
// the command says so in one line and exits 130 (SIGINT) or 143 (SIGTERM); the embedded server
// it started is gone; the next sync goes on from there and ends with the warehouse an
// uninterrupted sync makes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/store/connection.ts';
import { SOURCE_LOCK_IDS, SYNC_LOCK_NAMESPACE } from '../../src/store/books/source-lock.ts';
import { BIN, childEnv, runCli } from '../helpers/cli.ts';
import { embeddedFolder, isAlive, serverPids, type TempFolder } from '../helpers/embedded.ts';
import { freshDatabase, useSimAndWarehouse, useTestDatabase, useTestWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { requireTmux, tmuxPane, type TmuxPane } from '../helpers/tmux.ts';
import { canaryKey, createTestLogger, uniqueName } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { warehouseDigest } from '../helpers/warehouse-compare.ts';
import { waitFor } from '../helpers/workers.ts';

const COLUMNS = 80;
const appKey = canaryKey('app_int');
const gwKey = canaryKey('gw_int');

interface RunRow {
  id: string;
  status: string;
  finished_at: Date | null;
  interrupted_at: Date | null;
  error: string | null;
}

async function runsOf(databaseUrl: string): Promise<RunRow[]> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return await db<RunRow[]>`select id::text, status, finished_at, (options->'interrupted'->>'at')::timestamptz as interrupted_at, error from sync.runs order by started_at`;
  } finally {
    await db.end();
  }
}

async function requestsAfter(databaseUrl: string, runId: string, at: Date): Promise<number> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [r] = await db<{ n: number }[]>`select count(*)::int as n from sync.requests where run_id = ${runId} and started_at > ${at}`;
    return r!.n;
  } finally {
    await db.end();
  }
}

/** Progress showing work done: `N/M` with N > 0 on the walk's line. */
const walking = (text: string) => /\b([1-9]\d*)\/\d+ (done )?\|/.test(text);

beforeAll(() => {
  requireTmux();
});

describe('Ctrl-C and SIGTERM on tesync sync', () => {
  // 8 requests per 2 s per bucket: the walk (about 50 requests) takes several seconds.
  const limit = { limit: 8, windowMs: 2000 };
  const rateLimits = { appPublic: limit, appKey: limit, gateway: limit };
  const fx = useSimAndWarehouse({
    tokens: 4,
    historyDays: 30,
    chartsPerToken: 2,
    seed: 81,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gwKey],
    rateLimits,
    latencyMs: [5, 20],
  });
  let dir: string;
  // Where the same sync runs uninterrupted, in this process; and a warehouse for the second case.
  const reference = useTestWarehouse();
  const second = useTestDatabase({ migrated: true });
  const socket = uniqueName('tesync_interrupt');
  let pane: TmuxPane | undefined;
  const env = () => ({
    TE_APP_URL: fx.sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: fx.sim.url,
    TE_GATEWAY_API_KEY: gwKey,
    TE_CONCURRENCY: '4',
    // A process that quits at once leaves its rate-budget leases until they expire (the request
    // timeout and a second): the next sync on its warehouse waits that long for them.
    TE_REQUEST_TIMEOUT_MS: '5000',
  });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-interrupt-'));
  });
  afterAll(async () => {
    pane?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('Ctrl-C in an 80-column terminal: one line, exit 130, the run interrupted at that time; the next sync completes it exactly', async () => {
    pane = tmuxPane(socket, dir, COLUMNS, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8', TE_DATABASE_POOL: '4', DATABASE_URL: fx.databaseUrl, ...env() }, ['sync']);
    const before = await pane.until(walking, 30_000);
    expect(walking(before.at(-1)!), before.at(-1)).toBe(true);
    const sentAt = new Date();
    pane.ctrlC();
    const after = await pane.until((t) => t.includes('tesync exited'), 20_000);
    const exitSeenAt = new Date();
    const shown = after.at(-1)!;
    console.log(`the pane after Ctrl-C:\n${shown.trimEnd()}`);
    expect(shown).toMatch(/tesync exited 130/);
    const lines = shown.split('\n').filter((l) => l.includes('run interrupted'));
    expect(lines, shown).toHaveLength(1);
    expect(lines[0]).toMatch(/^tesync: Ctrl-C: run interrupted \(\d+ done, [1-9]\d* left\); the next sync goes on$/);
    expect(shown).toMatch(/^Sync interrupted in [\d.]+ s \(run [0-9a-f-]{36}\)$/m);
    // Requests the interrupt cut short are said so, not counted as the network's failures.
    expect(shown).not.toMatch(/network: \d/);
    for (const c of [...before, ...after]) for (const line of c.split('\n')) expect([...line].length, line).toBeLessThanOrEqual(COLUMNS);

    const [run] = await runsOf(fx.databaseUrl);
    expect(run).toMatchObject({ status: 'interrupted', error: 'interrupted by SIGINT' });
    // Ended when the signal came, on the server's clock (this machine's): the time recorded on
    // its arrival, after Ctrl-C was typed and before the command exited; no request after it.
    expect(run!.finished_at!.getTime()).toBe(run!.interrupted_at!.getTime());
    expect(run!.finished_at!.getTime()).toBeGreaterThanOrEqual(sentAt.getTime());
    expect(run!.finished_at!.getTime()).toBeLessThanOrEqual(exitSeenAt.getTime());
    expect(await requestsAfter(fx.databaseUrl, run!.id, run!.finished_at!), 'requests after the interrupt').toBe(0);

    // The next sync goes on from there: the warehouse ends as an uninterrupted sync leaves one
    // (the same sync in this process, into a warehouse of its own). Both at once and unlimited:
    // the rate limit only made the walk last long enough to stop.
    fx.sim.setRateLimits(undefined);
    try {
      const { TE_CONCURRENCY, TE_REQUEST_TIMEOUT_MS } = env();
      const [next, whole] = await Promise.all([
        runCli(['sync'], { ...env(), DATABASE_URL: fx.databaseUrl }),
        syncOnce(fx.sim, reference, createTestLogger([appKey, gwKey], 'warn').logger, { appKey, gatewayKey: gwKey, env: { TE_CONCURRENCY, TE_REQUEST_TIMEOUT_MS } }, ['app', 'gateway']),
      ]);
      expect(next.code, next.stderr).toBe(0);
      expect(whole.status).toBe('succeeded');
    } finally {
      fx.sim.setRateLimits(rateLimits);
    }
    expect(await warehouseDigest(fx.warehouse)).toEqual(await warehouseDigest(reference));
    expect((await runsOf(fx.databaseUrl)).map((r) => r.status)).toEqual(['interrupted', 'succeeded']);
  }, patience(90_000));

  it('SIGTERM, then a second signal at once: exit 143 without waiting; the next sync closes the run interrupted at the first signal', async () => {
    const child = spawn(process.execPath, [BIN, 'sync'], { env: childEnv({ ...env(), DATABASE_URL: second.databaseUrl }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Until its walk has written something.
    await waitFor('a job done', () => /"msg":"job done"/.test(stderr) || undefined, 15_000);
    expect(stderr).toMatch(/"msg":"job done"/);
    child.kill('SIGTERM');
    // The second only once the first was taken: two signals pending together may be handled
    // in either order. Its first act is the interrupt's record.
    await waitFor('the interrupt recorded', async () => (await runsOf(second.databaseUrl))[0]?.interrupted_at ?? undefined, 5_000, 10);
    child.kill('SIGINT');
    const code = await exited;
    expect(code, stderr).toBe(143);
    const quitAtOnce = /again: quitting at once/.test(stderr);
    console.log(`second signal ${quitAtOnce ? 'quit at once' : 'came after the run was closed'}`);
    const [left] = await runsOf(second.databaseUrl);
    expect(left!.interrupted_at, 'the interrupt recorded before quitting').not.toBeNull();
    if (quitAtOnce) expect(left!.status).toBe('running');

    // Any later sync closes it (a small one here: the first test showed a whole one resumes).
    const next = await runCli(['sync', '--source', 'gateway', '--only', 'contract'], { ...env(), DATABASE_URL: second.databaseUrl });
    expect(next.code, next.stderr).toBe(0);
    const runs = await runsOf(second.databaseUrl);
    expect(runs.map((r) => r.status)).toEqual(['interrupted', 'succeeded']);
    expect(runs[0]!.finished_at!.getTime()).toBe(runs[0]!.interrupted_at!.getTime());
    expect(runs[0]!.error).toMatch(/^interrupted by SIGTERM/);
  }, patience(90_000));
});

describe('Ctrl-C on tesync demo (embedded warehouse)', () => {
  let folder: TempFolder;
  const socket = uniqueName('tesync_interrupt_demo');
  let pane: TmuxPane | undefined;

  beforeAll(async () => {
    folder = await embeddedFolder('tesync-interrupt-demo');
  });
  afterAll(async () => {
    pane?.kill();
    await folder?.cleanup();
  });

  it('exit 130, the run interrupted, and the embedded server it started stopped', async () => {
    const dataDir = path.join(folder.dir, 'data');
    pane = tmuxPane(socket, folder.dir, COLUMNS, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: folder.dir, LANG: 'C.UTF-8', TE_DATA_DIR: dataDir }, ['demo', '--tokens', '60']);
    const before = await pane.until(walking, 60_000);
    expect(walking(before.at(-1)!), before.at(-1)).toBe(true);
    const [pid] = await serverPids(dataDir);
    expect(pid && isAlive(pid), 'the embedded server runs').toBe(true);
    pane.ctrlC();
    const shown = (await pane.until((t) => t.includes('tesync exited'), 30_000)).at(-1)!;
    console.log(`the demo's pane after Ctrl-C:\n${shown.trimEnd().split('\n').slice(-4).join('\n')}`);
    expect(shown).toMatch(/tesync exited 130/);
    expect(shown).toMatch(/^tesync: Ctrl-C: run interrupted \(\d+ done, \d+ left\); the next demo goes on$/m);
    for (const line of shown.split('\n').filter((l) => l.startsWith('tesync: Ctrl-C'))) expect([...line].length, line).toBeLessThanOrEqual(COLUMNS);
    // The last user left: the server is stopped and no user file is left behind.
    await waitFor('the embedded server to stop', () => !isAlive(pid!) || undefined, 5_000);
    expect(isAlive(pid!), 'the embedded server is gone').toBe(false);
    expect(readdirSync(path.join(dataDir, 'postgres', 'users'))).toEqual([]);

    const w = await openWarehouse({ dataDir, maxConnections: 1 });
    try {
      const runs = await w.query<{ status: string; same: boolean }>(sql`select status, finished_at = (options->'interrupted'->>'at')::timestamptz as same from sync.runs`);
      expect(runs).toEqual([{ status: 'interrupted', same: true }]);
    } finally {
      await w.close();
    }
  }, patience(120_000));
});

describe('Ctrl-C while waiting for another sync (--wait)', () => {
  it('exit 130 with one line; no run was opened, and the lock waited for is untouched', async () => {
    const db = await freshDatabase({ migrated: true });
    const holder = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // Another sync's lock of app, as src/store/books/source-lock.ts takes it.
      await holder`select pg_advisory_lock(${SYNC_LOCK_NAMESPACE}, ${SOURCE_LOCK_IDS.app!})`;
      const child = spawn(process.execPath, [BIN, 'sync', '--wait'], { env: childEnv({ TE_APP_URL: 'http://127.0.0.1:9', DATABASE_URL: db.databaseUrl }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await waitFor('tesync: waiting:', () => stderr.includes('tesync: waiting:') || undefined, 15_000);
      expect(stderr).toContain('tesync: waiting:');
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(130);
      expect(stderr).toMatch(/^tesync: Ctrl-C: stopped before the walk began; nothing was written$/m);
      expect(await runsOf(db.databaseUrl)).toEqual([]);
      const [held] = await holder<{ n: number }[]>`select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted`;
      expect(held!.n).toBe(1);
    } finally {
      await holder.end();
    }
  }, patience(60_000));
});
