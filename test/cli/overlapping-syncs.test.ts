// Two `tesync sync` on one warehouse, as real processes against the simulator over HTTP: one
// walks, the other leaves the walk to it (exit 0, one line) or waits for it with --wait; the
// warehouse comes out as a single sync leaves it, and upstream is asked nothing twice. The
// lock lives in the warehouse: a holder killed outright frees it at once, a holder whose
// connection drops takes it again (or stops, when another sync got it first).
//
// A walk that must still be going when the other process arrives is paused (SIGSTOP) once it
// has started, its locks held, and resumed (SIGCONT) after: it lasts however long the other
// takes to start on a busy machine.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { SYNC_LOCK_NAMESPACE, SOURCE_LOCK_IDS } from '../../src/store/books/source-lock.ts';
import { runCli, startCli, type CliProcess } from '../helpers/cli.ts';
import { useSimAndWarehouse, useTestWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, type TestWarehouse } from '../helpers/services.ts';
import { warehouseDigest } from '../helpers/warehouse-compare.ts';
import { waitFor } from '../helpers/workers.ts';

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const STARTED = /"msg":"sync started"/;
const SKIPPED = new RegExp(`^Sync skipped: another tesync sync is walking app and gateway \\(run (${UUID}), started \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC, pid (\\d+) on [^)]+\\); nothing to do \\(--wait waits for it instead\\)\\n$`);

describe('overlapping tesync sync runs on one warehouse', () => {
  const fx = useSimAndWarehouse({
    tokens: 2,
    historyDays: 5,
    chartsPerToken: 1,
    seed: 231,
    latencyMs: [150, 250],
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gwKey],
  });
  // A second warehouse, for what one sync alone leaves.
  const base = useTestWarehouse();
  const envFor = (w: { databaseUrl: string }, extra: Record<string, string> = {}) => ({
    TE_APP_URL: fx.sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: fx.sim.url,
    TE_GATEWAY_API_KEY: gwKey,
    DATABASE_URL: w.databaseUrl,
    // A paused walk's requests are answered when it resumes: never timed out meanwhile (the
    // most allowed). Its rate-budget leases last as long: no matter, the simulator sets no limit.
    TE_REQUEST_TIMEOUT_MS: '600000',
    // Slow enough that a walk lasts seconds: it is still going when the test pauses it.
    TE_CONCURRENCY: '2',
    ...extra,
  });
  const runs = async (w: TestWarehouse) =>
    w.warehouse.query<{ id: string; status: string; trigger: string; started_at: Date; finished_at: Date | null; error: string | null }>(
      sql`select id::text, status, trigger, started_at, finished_at, error from sync.runs order by started_at`,
    );
  const paths = () => fx.sim.requests.map((r) => r.path);

  // Every process a test started, killed if still there (a failed test may leave one paused).
  const started: CliProcess[] = [];
  const start = (args: string[], env: Record<string, string>) => {
    const p = startCli(args, env);
    started.push(p);
    return p;
  };
  const pause = (p: CliProcess) => p.child.kill('SIGSTOP');
  const resume = (p: CliProcess) => p.child.kill('SIGCONT');

  afterEach(async () => {
    for (const p of started.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
  });

  let single: string[] = [];

  it('two started together: one walks, the other exits 0 with one line; the warehouse as one sync leaves it; no path asked twice', async () => {
    // What one sync alone asks, into a warehouse of its own.
    fx.sim.resetRequests();
    const alone = await runCli(['sync'], envFor(base), { timeoutMs: 120_000 });
    expect(alone.code, alone.stderr).toBe(0);
    single = paths();
    expect(new Set(single).size, 'one sync alone asks each path once').toBe(single.length);

    fx.sim.resetRequests();
    const pair = [start(['sync'], envFor(fx.tw)), start(['sync'], envFor(fx.tw))];
    // The one that took the locks, paused as it starts walking: the other meets them held.
    const walker = await waitFor(
      'one of the two to start walking',
      () => {
        const p = pair.find((x) => STARTED.test(x.stderr()));
        if (!p && pair.every((x) => x.child.exitCode !== null)) throw new Error(`neither started walking:\n${pair.map((x) => x.stdout() + x.stderr()).join('\n---\n')}`);
        return p;
      },
      60_000,
      20,
    );
    pause(walker);
    await pair.find((x) => x !== walker)!.exited;
    resume(walker);
    const both = await Promise.all(pair.map((x) => x.exited));
    for (const r of both) expect(r.code, r.stderr).toBe(0);
    const walked = both.filter((r) => r.stdout.startsWith('Sync succeeded in '));
    const skipped = both.filter((r) => r.stdout.startsWith('Sync skipped: '));
    expect(walked, both.map((r) => r.stdout).join('\n---\n')).toHaveLength(1);
    expect(skipped).toHaveLength(1);
    const m = SKIPPED.exec(skipped[0]!.stdout);
    expect(m, skipped[0]!.stdout).not.toBeNull();

    const recorded = await runs(fx.tw);
    expect(recorded.map((r) => [r.status, r.trigger])).toEqual([['succeeded', 'cli']]);
    expect(m![1]).toBe(recorded[0]!.id);
    expect(walked[0]!.stdout).toContain(`(run ${recorded[0]!.id})`);

    // Upstream saw one walk: exactly the requests of the sync alone, none twice.
    const asked = paths();
    expect(new Set(asked).size).toBe(asked.length);
    expect([...asked].sort()).toEqual([...single].sort());
    expect(await warehouseDigest(fx.warehouse)).toEqual(await warehouseDigest(base));
  }, patience(240_000));

  it('a source another sync walks is left to it; the rest is walked', async () => {
    const gateway = start(['sync', '--source', 'gateway', '--full'], envFor(fx.tw));
    await gateway.waitFor(STARTED);
    pause(gateway);
    const r = await runCli(['sync', '--only', 'tokens'], envFor(fx.tw), { timeoutMs: 120_000 });
    resume(gateway);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`tesync: skipped: another tesync sync is walking gateway \\(run ${UUID}, started [^)]+\\); this sync walks app\\n`));
    expect(r.stdout).toMatch(/^Sync succeeded in /);
    const g = await gateway.exited;
    expect(g.code, g.stderr).toBe(0);
    const recorded = await runs(fx.tw);
    const [appRun, gatewayRun] = await Promise.all(
      ['app', 'gateway'].map(async (s) => (await fx.warehouse.query<{ status: string }>(sql`select status from sync.runs where sources = array[${s}]::text[] order by started_at desc limit 1`))[0]),
    );
    expect(appRun?.status).toBe('succeeded');
    expect(gatewayRun?.status).toBe('succeeded');
    expect(recorded.every((x) => x.status !== 'running')).toBe(true);
  }, patience(240_000));

  it('--wait waits for the holder; a holder killed outright (SIGKILL) frees the lock and the waiter proceeds', async () => {
    // A run some other machine started and lost: the next sync that holds its sources closes it.
    const elsewhere = randomUUID();
    await fx.warehouse.query(
      sql`insert into sync.runs (id, trigger, sources, status, options, started_at) values (${elsewhere}, 'cli', array['app','gateway']::text[], 'running', ${JSON.stringify({ owner: { host: 'elsewhere.invalid', pid: 4242 } })}::jsonb, now() - interval '1 hour')`,
    );
    // The holder's walk lasts until it is killed, however long the waiter takes to start.
    const first = start(['sync', '--full'], envFor(fx.tw));
    await first.waitFor(STARTED);
    pause(first);
    const [held] = await fx.warehouse.query<{ id: string }>(sql`select id::text from sync.runs where status = 'running' and id <> ${elsewhere} order by started_at desc limit 1`);
    expect(held).toBeDefined();
    expect((await fx.warehouse.query<{ status: string }>(sql`select status from sync.runs where id = ${elsewhere}`))[0]?.status).toBe('failed');

    const second = start(['sync', '--wait'], envFor(fx.tw));
    await second.waitFor(new RegExp(`tesync: waiting: another tesync sync is walking app and gateway \\(run ${held!.id}, started [^)]+, pid ${first.child.pid} on `));
    first.child.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');

    const r = await second.exited;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Sync succeeded in /);
    const after = await runs(fx.tw);
    const dead = after.find((x) => x.id === held!.id)!;
    expect(dead.status).toBe('failed');
    expect(dead.error).toMatch(/^abandoned: /);
    expect(after.find((x) => x.id === elsewhere)!.error).toMatch(/^abandoned: .*lock of its sources was free/);
    expect(after.filter((x) => x.status === 'running')).toEqual([]);
    // The waiter walked after the kill, and the warehouse is whole again.
    const waiterRun = after.at(-1)!;
    expect(waiterRun.status).toBe('succeeded');
    expect(await warehouseDigest(fx.warehouse)).toEqual(await warehouseDigest(base));
  }, patience(240_000));

  it('a holder whose lock connection drops takes the lock again when it is free, and goes on', async () => {
    const admin = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const p = start(['sync', '--full'], envFor(fx.tw));
      await p.waitFor(STARTED);
      // Dropped while it walks.
      pause(p);
      const [t] = await admin<{ n: number }[]>`select count(pg_terminate_backend(pid, 5000))::int as n from pg_stat_activity where application_name like 'tesync sync %' and datname = current_database()`;
      expect(t!.n).toBe(1);
      resume(p);
      const r = await p.exited;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('the warehouse connection holding the sync lock dropped; the lock was still free and is held again');
      expect(r.stdout).toMatch(/^Sync succeeded in /);
    } finally {
      await admin.end();
    }
  }, patience(240_000));

  it('a holder whose lock another sync took while its connection was down stops early, exit 1, saying so', async () => {
    const admin = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    const rival = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const p = start(['sync', '--full'], envFor(fx.tw));
      await p.waitFor(STARTED);
      pause(p);
      // The rival queues for the locks first: the moment the holder's session ends, they are its.
      const rivalLocks = rival`select pg_advisory_lock(${SYNC_LOCK_NAMESPACE}::int, ${SOURCE_LOCK_IDS.app!}::int), pg_advisory_lock(${SYNC_LOCK_NAMESPACE}::int, ${SOURCE_LOCK_IDS.gateway!}::int)`.execute();
      await waitFor(
        'the rival queued for the locks',
        async () => (await admin<{ n: number }[]>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`)[0]!.n > 0 || undefined,
        10_000,
        20,
      );
      await admin`select pg_terminate_backend(pid, 5000) from pg_stat_activity where application_name like 'tesync sync %' and datname = current_database()`;
      await rivalLocks;
      resume(p);
      const r = await p.exited;
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toMatch(/tesync: error: lost the warehouse lock of app(, gateway)? to another tesync sync: stopped this sync early/);
      const [last] = await fx.warehouse.query<{ status: string }>(sql`select status from sync.runs order by started_at desc limit 1`);
      expect(last!.status).not.toBe('running');
    } finally {
      await rival.end();
      await admin.end();
    }
  }, patience(240_000));
});
