// A warehouse is bound to its upstream: run as a user would, `tesync sync` from simulator A,
// then `sync`, `demo`, `enqueue` and `worker` configured for another upstream refuse (exit 2,
// naming both) without changing one row of any table; `--force` rebinds and is recorded.
// A second simulator on another port is another upstream to `sync`: only the demo's own
// simulator is one upstream whatever its port. `sync`, `demo` and `--force` also on the
// embedded server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { acquireEmbeddedServer, type EmbeddedServer } from '../../src/store/server/embedded-server.ts';
import { embeddedFolder, type TempFolder } from '../helpers/embedded.ts';
import { patience } from '../helpers/patience.ts';
import { useSimulator, useTestDatabase } from '../helpers/mirror-fixture.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys, killAll, SCHEDULES_OFF, startWorker } from '../helpers/workers.ts';

/** Every table of the warehouse: its row count and a hash of every row, history tables and sync.* included. */
async function snapshot(databaseUrl: string): Promise<Record<string, string>> {
  const c = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const tables = await c<{ name: string }[]>`
      select format('%I.%I', table_schema, table_name) as name from information_schema.tables
      where table_schema in ('sync', 'app', 'gateway') and table_type = 'BASE TABLE' order by 1`;
    const out: Record<string, string> = {};
    for (const { name } of tables) {
      const [r] = await c.unsafe<{ n: number; h: string }[]>(`select count(*)::int as n, coalesce(md5(string_agg(t::text, E'\\n' order by t::text)), '') as h from ${name} t`);
      out[name] = `${r!.n} ${r!.h}`;
    }
    return out;
  } finally {
    await c.end();
  }
}

async function query<T>(databaseUrl: string, text: string): Promise<T[]> {
  const c = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return (await c.unsafe(text)) as unknown as T[];
  } finally {
    await c.end();
  }
}

const rowsOf = (s: Record<string, string>, table: string) => Number(s[table]?.split(' ')[0] ?? NaN);

/** The warehouse server's clock now, in seconds: what its log's `at` is read against. */
const serverNow = async (databaseUrl: string) => (await query<{ t: number }>(databaseUrl, 'select extract(epoch from clock_timestamp())::float8 as t'))[0]!.t;

describe('a warehouse bound to its upstream', () => {
  let cwd: string;
  let redisUrl: string;
  const prefix = uniqueName('tesync_bind');
  const appKey = canaryKey('app');
  const gwKey = canaryKey('gw');
  // Two upstreams of the same shape, told apart by their data (their seeds).
  const sim = (seed: number) => useSimulator({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] });
  const [a, b] = [sim(41), sim(42)];
  const db = useTestDatabase({ migrated: true });
  let envA: Record<string, string>;
  let envB: Record<string, string>;
  let first: CliResult;
  let before: Record<string, string>;

  beforeAll(async () => {
    redisUrl = await redisServerUrl();
    cwd = await mkdtemp(path.join(tmpdir(), 'tesync-bind-'));
    const common = { TE_APP_API_KEY: appKey, TE_GATEWAY_API_KEY: gwKey, DATABASE_URL: db.databaseUrl, REDIS_URL: redisUrl, TE_QUEUE_PREFIX: prefix, TE_METRICS_PORT: '0' };
    envA = { ...common, TE_APP_URL: a.sim.url, TE_GATEWAY_URL: a.sim.url };
    envB = { ...common, TE_APP_URL: b.sim.url, TE_GATEWAY_URL: `${b.sim.url}/` };
    first = await runCli(['sync', '--json'], envA, { cwd });
    before = await snapshot(db.databaseUrl);
  }, patience(60_000));
  afterAll(async () => {
    await deleteRedisKeys(redisUrl, prefix).catch(() => 0);
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  const unchanged = async () => expect(await snapshot(db.databaseUrl)).toEqual(before);
  const noSecrets = (r: CliResult) => {
    for (const key of [appKey, gwKey]) expect(r.stdout + r.stderr).not.toContain(key);
  };

  it('the first sync records each source\'s upstream', async () => {
    expect(first.code, first.stderr).toBe(0);
    const bindings = await query<{ source: string; upstream: string; scheme: string; host: string; port: number; path: string; event: string; command: string }>(
      db.databaseUrl,
      'select source, upstream, scheme, host, port, path, event, command from sync.upstream_bindings order by source',
    );
    const port = Number(new URL(a.sim.url).port);
    expect(bindings).toEqual([
      { source: 'app', upstream: a.sim.url, scheme: 'http', host: '127.0.0.1', port, path: '', event: 'bound', command: 'sync' },
      { source: 'gateway', upstream: a.sim.url, scheme: 'http', host: '127.0.0.1', port, path: '', event: 'bound', command: 'sync' },
    ]);
    // The snapshot below covers real data: runs, requests, bodies, rows and versions.
    for (const t of ['sync.runs', 'sync.requests', 'sync.raw_responses', 'app.tokens', 'gateway.tokens']) expect(rowsOf(before, t), t).toBeGreaterThan(0);
    expect(Object.keys(before).filter((t) => t.endsWith('_history')).length).toBeGreaterThan(20);
  });

  // The refusals leave the warehouse and the queues as they were: side by side.
  it.concurrent('`tesync sync` of another upstream: exit 2 naming both, nothing written', async () => {
    const r = await runCli(['sync'], envB, { cwd });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^tesync: configuration error: this warehouse \(Postgres at 127\.0\.0\.1:\d+\/tesync_test_\w+\) mirrors another upstream/);
    expect(r.stderr).toContain(`app is bound to ${a.sim.url}, TE_APP_URL is ${b.sim.url}`);
    expect(r.stderr).toContain(`gateway is bound to ${a.sim.url}, TE_GATEWAY_URL is ${b.sim.url}`);
    expect(r.stderr).toContain('--force');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toBe('');
    noSecrets(r);
    await unchanged();
  });

  it.concurrent('only the sources a sync walks are checked', async () => {
    // A sync of the gateway alone is checked on the gateway alone.
    const r = await runCli(['sync', '--source', 'gateway'], { ...envB, TE_APP_URL: a.sim.url }, { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`gateway is bound to ${a.sim.url}, TE_GATEWAY_URL is ${b.sim.url}`);
    expect(r.stderr).not.toContain('app is bound');
    await unchanged();
  });

  it.concurrent('`tesync demo` into it: exit 2 naming both, nothing written', async () => {
    const r = await runCli(['demo', '--tokens', '2'], { DATABASE_URL: db.databaseUrl }, { cwd, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("mirrors another upstream than tesync demo's bundled simulator");
    expect(r.stderr).toContain(`app is bound to ${a.sim.url}; gateway is bound to ${a.sim.url}`);
    expect(r.stderr).toContain('unset DATABASE_URL');
    expect(r.stdout).toBe('');
    await unchanged();
  });

  it.concurrent('`tesync enqueue` and `tesync worker` of another upstream: exit 2, nothing queued or written', async () => {
    // The syncs' shared rate budget lives under the prefix too: start from nothing.
    await deleteRedisKeys(redisUrl, prefix);
    const enqueue = await runCli(['enqueue'], envB, { cwd });
    expect(enqueue.code, enqueue.stderr).toBe(2);
    expect(enqueue.stderr).toContain(`app is bound to ${a.sim.url}, TE_APP_URL is ${b.sim.url}`);
    expect(await deleteRedisKeys(redisUrl, prefix)).toBe(0);
    const worker = await runCli(['worker'], envB, { cwd });
    expect(worker.code, worker.stderr).toBe(2);
    expect(worker.stderr).toContain(`gateway is bound to ${a.sim.url}, TE_GATEWAY_URL is ${b.sim.url}`);
    noSecrets(worker);
    await unchanged();
  });

  it('`--force` rebinds, syncs, and the rebinding is recorded', async () => {
    const from = await serverNow(db.databaseUrl);
    const r = await runCli(['sync', '--force', '--json'], envB, { cwd });
    const to = await serverNow(db.databaseUrl);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`rebound the app source of this warehouse (--force): from ${a.sim.url} to ${b.sim.url}`);
    await expectReboundAToB(db.databaseUrl, a.sim.url, b.sim.url, { from, to });
    // Bound to B now: A is the other upstream.
    const back = await runCli(['sync'], envA, { cwd });
    expect(back.code).toBe(2);
    expect(back.stderr).toContain(`app is bound to ${b.sim.url}, TE_APP_URL is ${a.sim.url}`);
  });

  it('a worker started for B refuses walks once another process rebinds the warehouse to A', async () => {
    const worker = startWorker({ ...envB, ...SCHEDULES_OFF, LOG_LEVEL: 'info' });
    try {
      await worker.ready;
      // `enqueue --force --wait` of A: rebinds to A and queues a walk, which the worker (B) takes
      // and refuses; the wait ends there, saying why (not at its timeout).
      const enqueue = await runCli(['enqueue', '--force', '--wait', '--timeout', String(patience(60)), '--json', '--only', 'catalog'], envA, { cwd, timeoutMs: 80_000 });
      expect(enqueue.code, enqueue.stderr).toBe(1);
      const runId = /the walk of run ([0-9a-f-]{36}) failed before it started: .*app is bound to/.exec(enqueue.stderr)?.[1];
      expect(runId, enqueue.stderr).toBeDefined();
      expect(enqueue.stderr).toContain(`TE_APP_URL is ${b.sim.url}`);
      noSecrets(enqueue);
      const refused = worker.lines().find((l) => l.msg.startsWith('walk refused'));
      expect(refused, worker.stderr()).toBeDefined();
      expect(String(refused!.reason)).toContain(`app is bound to ${a.sim.url}, TE_APP_URL is ${b.sim.url}`);
      expect(await query(db.databaseUrl, `select id from sync.runs where id = '${runId}'`)).toEqual([]);
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
    } finally {
      await killAll([worker]);
    }
  }, patience(90_000));

  it('a warehouse of an earlier release (data, no binding): the demo refuses it, a sync adopts it', async () => {
    await query(db.databaseUrl, 'truncate sync.upstream_bindings, sync.upstream_binding_log');
    before = await snapshot(db.databaseUrl);
    const demo = await runCli(['demo', '--tokens', '2'], { DATABASE_URL: db.databaseUrl }, { cwd, timeoutMs: 60_000 });
    expect(demo.code, demo.stderr).toBe(2);
    expect(demo.stderr).toContain('app holds data of an upstream it did not record (synced by an earlier release of tesync)');
    await unchanged();
    const sync = await runCli(['sync', '--source', 'app'], envB, { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    expect(await query(db.databaseUrl, 'select source, upstream, event from sync.upstream_bindings')).toEqual([{ source: 'app', upstream: b.sim.url, event: 'adopted' }]);
  });

  it('`tesync demo --force` rebinds it to the simulator, which then is one upstream whatever its port', async () => {
    const forced = await runCli(['demo', '--tokens', '2', '--force'], { DATABASE_URL: db.databaseUrl }, { cwd, timeoutMs: 60_000 });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain("rebound to the simulator (--force)");
    const bindings = await query<{ source: string; upstream: string; port: number | null }>(db.databaseUrl, 'select source, upstream, port from sync.upstream_bindings order by source');
    expect(bindings).toEqual([
      { source: 'app', upstream: 'simulator', port: null },
      { source: 'gateway', upstream: 'simulator', port: null },
    ]);
    const log = await query<{ source: string; event: string; from_upstream: string | null; command: string }>(
      db.databaseUrl,
      `select source, event, from_upstream, command from sync.upstream_binding_log where to_upstream = 'simulator' order by id`,
    );
    expect(log).toEqual([
      { source: 'app', event: 'rebound', from_upstream: b.sim.url, command: 'demo' },
      { source: 'gateway', event: 'rebound', from_upstream: null, command: 'demo' },
    ]);
    // Another demo runs its simulator on another port: the same upstream.
    const again = await runCli(['demo', '--tokens', '2'], { DATABASE_URL: db.databaseUrl }, { cwd, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('already holds an earlier demo');
  }, patience(90_000));
});

// The same on the embedded server, in one data folder: its server kept running by the test (a
// user of it, as each `tesync` process is) for the snapshots, the processes sharing it.
describe('the embedded warehouse, bound to a real upstream', () => {
  let simA: Simulator;
  let simB: Simulator;
  let folder: TempFolder;
  let server: EmbeddedServer;
  const appKey = canaryKey('app');
  const gwKey = canaryKey('gw');
  let envA: Record<string, string>;
  let envB: Record<string, string>;
  let before: Record<string, string>;
  const cli = (args: string[], env: Record<string, string>) => runCli(args, env, { cwd: folder.dir, timeoutMs: 60_000 });
  const unchanged = async () => expect(await snapshot(server.url)).toEqual(before);

  beforeAll(async () => {
    const sim = (seed: number) =>
      startSimulator({ tokens: 2, historyDays: 3, chartsPerToken: 1, seed, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] });
    [simA, simB, folder] = await Promise.all([sim(43), sim(44), embeddedFolder('tesync-bind-embedded')]);
    // The server of the folder's default data dir (./.tesync), started here and left running
    // until afterAll: the `tesync` processes find it and leave it to the last user.
    server = await acquireEmbeddedServer(path.join(folder.dir, '.tesync'));
    const common = { TE_APP_API_KEY: appKey, TE_GATEWAY_API_KEY: gwKey, TE_METRICS_PORT: '0' };
    envA = { ...common, TE_APP_URL: simA.url, TE_GATEWAY_URL: simA.url };
    envB = { ...common, TE_APP_URL: simB.url, TE_GATEWAY_URL: `${simB.url}/` };
    const synced = await cli(['sync'], envA);
    expect(synced.code, synced.stderr).toBe(0);
    before = await snapshot(server.url);
  }, patience(60_000));
  afterAll(async () => {
    await server?.release().catch(() => {});
    await folder?.cleanup();
    await Promise.all([simA?.close(), simB?.close()]);
  }, patience(30_000));

  // The refusals leave the warehouse as it was: side by side.
  it.concurrent('`tesync sync` of another upstream: exit 2 naming both, not one row or version changed', async () => {
    for (const t of ['sync.runs', 'sync.requests', 'sync.raw_responses', 'sync.upstream_bindings', 'app.tokens', 'gateway.tokens']) expect(rowsOf(before, t), t).toBeGreaterThan(0);
    expect(Object.keys(before).filter((t) => t.endsWith('_history')).length).toBeGreaterThan(20);
    const r = await cli(['sync'], envB);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^tesync: configuration error: this warehouse \(the embedded Postgres server in .*\) mirrors another upstream/);
    expect(r.stderr).toContain(`app is bound to ${simA.url}, TE_APP_URL is ${simB.url}`);
    expect(r.stderr).toContain(`gateway is bound to ${simA.url}, TE_GATEWAY_URL is ${simB.url}`);
    expect(r.stderr).toContain('--force');
    expect(r.stdout).toBe('');
    for (const key of [appKey, gwKey]) expect(r.stdout + r.stderr).not.toContain(key);
    await unchanged();
  });

  it.concurrent('`tesync demo` in the folder of a `tesync sync` of another upstream: exit 2, its runs unchanged', async () => {
    const runs = async () => (JSON.parse((await cli(['status', '--json'], {})).stdout) as { runs: unknown[] }).runs;
    const runsBefore = await runs();
    expect(runsBefore).toHaveLength(1);
    const demo = await cli(['demo', '--tokens', '2'], {});
    expect(demo.code, demo.stderr).toBe(2);
    expect(demo.stderr).toContain(`app is bound to ${simA.url}`);
    expect(demo.stderr).toContain('set TE_DATA_DIR to another folder');
    expect(await runs()).toEqual(runsBefore);
    await unchanged();
  });

  it('`--force` rebinds, syncs, and the rebinding is recorded', async () => {
    const from = await serverNow(server.url);
    const r = await cli(['sync', '--force', '--json'], envB);
    const to = await serverNow(server.url);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`rebound the app source of this warehouse (--force): from ${simA.url} to ${simB.url}`);
    await expectReboundAToB(server.url, simA.url, simB.url, { from, to });
    // Bound to B now: A is the other upstream.
    const back = await cli(['sync'], envA);
    expect(back.code).toBe(2);
    expect(back.stderr).toContain(`app is bound to ${simB.url}, TE_APP_URL is ${simA.url}`);
  });
});

/**
 * The warehouse at `url`, first synced from upstream `a` and then by `sync --force` from `b`
 * (run while its server's clock went from `during.from` to `during.to`, in seconds): bound to
 * `b`, and its log says so with when, from what and which command.
 */
async function expectReboundAToB(url: string, a: string, b: string, during: { from: number; to: number }) {
  expect(await query(url, 'select source, upstream, event from sync.upstream_bindings order by source')).toEqual([
    { source: 'app', upstream: b, event: 'rebound' },
    { source: 'gateway', upstream: b, event: 'rebound' },
  ]);
  const log = await query<{ source: string; event: string; from_upstream: string | null; to_upstream: string; command: string; t: number }>(
    url,
    'select source, event, from_upstream, to_upstream, command, extract(epoch from at)::float8 as t from sync.upstream_binding_log order by id',
  );
  expect(log.map(({ t: _t, ...e }) => e)).toEqual([
    { source: 'app', event: 'bound', from_upstream: null, to_upstream: a, command: 'sync' },
    { source: 'gateway', event: 'bound', from_upstream: null, to_upstream: a, command: 'sync' },
    { source: 'app', event: 'rebound', from_upstream: a, to_upstream: b, command: 'sync' },
    { source: 'gateway', event: 'rebound', from_upstream: a, to_upstream: b, command: 'sync' },
  ]);
  // When: on the server's clock, after the first binding, while `sync --force` ran.
  expect(log[2]!.t).toBeGreaterThan(log[0]!.t);
  expect(log[2]!.t).toBeGreaterThanOrEqual(during.from);
  expect(log[2]!.t).toBeLessThanOrEqual(during.to);
}
