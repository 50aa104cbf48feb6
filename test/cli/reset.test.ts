// `tesync reset --queues` on both queue backends, each case under a prefix of its own: on Redis
// (TEST_REDIS_URL) it removes exactly the keys under TE_QUEUE_PREFIX ("<prefix>:..."); on the
// warehouse's Postgres (REDIS_URL unset) exactly the prefix's schema `bullmq_<prefix>` and its
// rows of sync.rate_budgets, sync.run_counts and sync.run_jobs. Other prefixes (including ones
// that start with the same letters) are left alone, runs of the prefix's workers still
// `running` are closed as failed, and it refuses while a worker is connected (on Redis also
// while a job lock is held), unless --force. Never flushes anything.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunLedger } from '../../src/store/books/postgres-run-ledger.ts';
import { migrateQueueSchema, queueSchema } from '../../src/runners/bullmq/postgres-backend.ts';
import { clientsUnder, escapeGlob, prefixPattern } from '../../src/runners/bullmq/prefix-keys.ts';
import { describeRedis } from '../../src/runners/bullmq/redis-backend.ts';
import { describePostgresUrl } from '../../src/store/connection.ts';
import { LOST_RUN_ERROR, startRun } from '../../src/store/books/runs.ts';
import { holderOf, holdersOf, stopAdvice } from '../../src/cli/reset.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { backendEnv, openTestQueue, QUEUE_BACKENDS, type QueueBackendKind } from '../helpers/queue-backends.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys, killAll, startWorker } from '../helpers/workers.ts';
import { queueWalk, runEnded } from '../helpers/queue-walk.ts';

describe('who holds a connection (pure)', () => {
  it('by the name tesync gave it; the advice names what to stop', () => {
    const c = (name: string, worker = false) => ({ name, worker });
    expect(holderOf(c('walk:w:tesync@host-a.17', true), 'tesync')).toBe('tesync worker');
    expect(holderOf(c('tesync:tesync-enqueue'), 'tesync')).toBe('tesync enqueue');
    expect(holderOf(c('tesync:tesync-status-serve'), 'tesync')).toBe('tesync status --serve');
    expect(holderOf(c('tesync:budget status-serve 0a1b2c3d4e5f'), 'tesync')).toBe('tesync status --serve');
    expect(holderOf(c('tesync:budget sync 0a1b2c3d4e5f'), 'tesync')).toBe('tesync sync');
    expect(holderOf(c('tesync:budget 0a1b2c3d4e5f'), 'tesync')).toBeUndefined();
    expect(holdersOf([c('tesync:tesync-status-serve'), c('tesync:budget status-serve 1'), c('tesync:tesync-enqueue')], 'tesync')).toEqual(['tesync status --serve', 'tesync enqueue']);
    expect(stopAdvice(['tesync status --serve'], 'this warehouse')).toBe('Stop what holds them (tesync status --serve), then run it again, or add --force.');
    expect(stopAdvice([], 'this Redis')).toBe('Stop what holds them (the workers, and any tesync enqueue --wait, sync or status --serve using this Redis), then run it again, or add --force.');
  });
});

describe('prefix keys (pure)', () => {
  it('matches only the prefix followed by a colon, with glob characters taken literally', () => {
    expect(prefixPattern('tesync')).toBe('tesync:*');
    expect(prefixPattern('{tesync}')).toBe('{tesync}:*');
    expect(escapeGlob('a*b?c[d]e\\f^')).toBe('a\\*b\\?c\\[d\\]e\\\\f\\^');
  });

  it('finds the connections named under the prefix in CLIENT LIST, not those of other prefixes or its own', () => {
    const list = [
      'id=3 addr=10.0.0.5:40001 laddr=10.0.0.2:6379 fd=8 name=tesync:d2Fsaw==:w:host-a.17 age=120 idle=0 flags=N db=0',
      'id=4 addr=10.0.0.5:40002 laddr=10.0.0.2:6379 fd=9 name=tesync:tesync age=121 idle=1 flags=N db=0',
      'id=5 addr=10.0.0.6:40003 laddr=10.0.0.2:6379 fd=10 name=tesync-staging:d2Fsaw==:w:host-b.3 age=5 idle=0 flags=N db=0',
      'id=6 addr=10.0.0.7:40004 laddr=10.0.0.2:6379 fd=11 name= age=5 idle=0 flags=N db=0',
      'id=7 addr=10.0.0.8:40005 laddr=10.0.0.2:6379 fd=12 name=tesync:reset-self age=0 idle=0 flags=N db=0',
      '',
    ].join('\n');
    expect(clientsUnder(list, 'tesync', 'tesync:reset-self')).toEqual([
      { name: 'tesync:d2Fsaw==:w:host-a.17', addr: '10.0.0.5:40001', ageS: 120, worker: true },
      { name: 'tesync:tesync', addr: '10.0.0.5:40002', ageS: 121, worker: true },
    ]);
    expect(clientsUnder(list, 'tesync-staging')).toHaveLength(1);
    expect(clientsUnder(list, 'other')).toEqual([]);
  });
});

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a case does and looks at on one backend. */
interface Side {
  /** The environment of a tesync process of prefix `p` (with the warehouse: reset closes runs there). */
  env(p: string): Record<string, string>;
  /** Puts there what workers of `p` leave; returns how many of them reset reports (Redis: keys; Postgres: jobs). */
  seed(p: string, size: 'small' | 'large'): Promise<number>;
  /** Puts there what neighbours of `p` keep; returns a check that all of it is still there. */
  seedOthers(p: string): Promise<() => Promise<void>>;
  /** How much is left under `p` (0: nothing at all). */
  left(p: string): Promise<number>;
  /** Something of `p`'s reset would remove, and whether it is still there. */
  mark(p: string): Promise<void>;
  marked(p: string): Promise<boolean>;
  /** A connection named as a worker of `p` names its own; closed with `close`. */
  fakeWorker(p: string): Promise<{ name: string; close(): Promise<void> }>;
  /** What the refusal says is in use. */
  refused(p: string): string;
  dryRun(p: string, n: number): string;
  /** The number a --dry-run reports. */
  dryCount(stdout: string): number;
  removed(p: string, n: number): RegExp;
  nothingLeft(p: string): string;
  /** How much under `p` is due to expire by itself (Redis keys with a TTL a stopped worker left). */
  expiring(p: string): Promise<number>;
}

describe('tesync reset', () => {
  const gwKey = canaryKey('gw');
  const fx = useSimAndWarehouse({ tokens: 2, historyDays: 3, chartsPerToken: 1, seed: 9, gatewayKeys: [gwKey] });
  let redisUrl: string;
  let redis: Redis;
  /** The test's own session on the warehouse, for looking at its schemas and rows. */
  let admin: postgres.Sql;
  const redisPrefixes: string[] = [];
  beforeAll(async () => {
    redisUrl = await redisServerUrl();
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
    admin = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    for (const p of redisPrefixes) await deleteRedisKeys(redisUrl, p);
    // Keys named exactly like a prefix (no `:`) are neighbours too: deleteRedisKeys leaves them.
    if (redisPrefixes.length > 0) await redis?.del(...redisPrefixes);
    await redis?.quit();
    await admin?.end();
  });

  /** A case's prefix. Its neighbours (Side.seedOthers) must survive: `<p>-staging`, `<p>x`, and on Redis `other_<p>`. */
  function newPrefix(backend: QueueBackendKind): string {
    const p = uniqueName('tesync_reset');
    if (backend === 'redis') redisPrefixes.push(p, `${p}-staging`, `${p}x`, `other_${p}`);
    return p;
  }

  // ---- Redis: keys under "<prefix>:" ----
  const redisKeysUnder = async (p: string): Promise<string[]> => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${p}:*`, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
    return found;
  };
  const onRedis: Side = {
    env: (p) => ({ ...backendEnv({ backend: 'redis', redisUrl }), TE_QUEUE_PREFIX: p, DATABASE_URL: fx.databaseUrl }),
    /** Keys of every type tesync leaves (strings, hashes, lists, sorted sets, streams). */
    async seed(p, size) {
      const n = size === 'large' ? 40 : 5;
      const m = redis.multi();
      for (let i = 0; i < n; i++) m.hset(`${p}:fetch-gateway:${i}`, 'name', 'fetch', 'data', '{}');
      m.set(`${p}:run:abc:pending`, '3').rpush(`${p}:walk:wait`, '1', '2').zadd(`${p}:walk:delayed`, 1, 'a').xadd(`${p}:walk:events`, '*', 'event', 'added');
      m.hset(`${p}:budget:gateway:record`, 's', '{}');
      await m.exec();
      return n + 5;
    },
    async seedOthers(p) {
      // Keys of the neighbours, and keys that contain the prefix elsewhere.
      const keys = [`${p}-staging:walk:wait`, `${p}x:walk:wait`, `other_${p}:${p}:x`, `${p}`];
      for (const k of keys) await redis.set(k, 'keep');
      return async () => expect(await redis.exists(...keys)).toBe(keys.length);
    },
    left: async (p) => (await redisKeysUnder(p)).length,
    mark: async (p) => void (await redis.set(`${p}:marker`, '1')),
    marked: async (p) => (await redis.exists(`${p}:marker`)) === 1,
    async fakeWorker(p) {
      const name = `${p}:${Buffer.from('walk').toString('base64')}:w:${p}@host-a.17`;
      const worker = new Redis(redisUrl, { connectionName: name, maxRetriesPerRequest: 3 });
      await worker.ping();
      return { name, close: async () => void (await worker.quit()) };
    },
    refused: (p) => `tesync: reset refused: tesync still uses the Redis keys under "${p}:" at ${describeRedis(redisUrl)}:`,
    dryRun: (p, n) => `${n} Redis keys under "${p}:" at `,
    dryCount: (stdout) => Number(/^(\d+) Redis keys/.exec(stdout)?.[1]),
    removed: (p, n) => new RegExp(`^Removed ${n} Redis keys under "${escapeRe(p)}:" at `),
    nothingLeft: (p) => `No Redis keys under "${p}:" at ${describeRedis(redisUrl)}; nothing to remove`,
    async expiring(p) {
      let n = 0;
      for (const k of await redisKeysUnder(p)) if ((await redis.pttl(k)) > 0) n++;
      return n;
    },
  };

  // ---- Postgres: the schema bullmq_<prefix> and the prefix's rows ----
  const location = () => `Postgres at ${describePostgresUrl(fx.databaseUrl)}`;
  const schemaJobs = async (schema: string): Promise<number | undefined> => {
    const [t] = await admin<{ ok: boolean }[]>`select to_regclass(${`"${schema}".job`}) is not null as ok`;
    if (!t!.ok) return undefined;
    return (await admin<{ n: number }[]>`select count(*)::int as n from ${admin(schema)}.job`)[0]!.n;
  };
  const prefixRows = async (p: string) =>
    (
      await admin<{ n: number }[]>`
        select ((select count(*) from sync.rate_budgets where prefix = ${p}) + (select count(*) from sync.run_counts where queue_prefix = ${p})
             + (select count(*) from sync.run_jobs where queue_prefix = ${p}))::int as n`
    )[0]!.n;
  /** The prefix's records of the budget (a bucket) and of the run ledger (a run with `jobs` jobs): 1 + 1 + jobs rows. */
  const seedRows = async (p: string, jobs: number) => {
    await admin`insert into sync.rate_budgets (prefix, bucket, record, version, updated_at, expires_at, written_by)
                values (${p}, 'gateway', '{}'::jsonb, 1, clock_timestamp(), clock_timestamp() + interval '1 hour', 'test')`;
    const ledger = new PostgresRunLedger(fx.warehouse.db, p);
    for (let j = 0; j < jobs; j++) await ledger.enter('run-a', `job-${j}`);
    return 2 + jobs;
  };
  /** The prefix's queue schema as `tesync migrate` makes it, `waiting` jobs in a fetch queue, one waiting and one delayed walk. */
  const seedQueues = async (p: string, fetchJobs: number) => {
    await migrateQueueSchema(fx.databaseUrl, queueSchema(p));
    const place = { backend: 'postgres' as const, redisUrl, databaseUrl: fx.databaseUrl, prefix: p };
    const fetch = openTestQueue(place, 'fetch-gateway');
    const walk = openTestQueue(place, 'walk');
    try {
      for (let i = 0; i < fetchJobs; i++) await fetch.add('fetch', { i });
      await walk.add('walk', {});
      await walk.add('walk', {}, { delay: 3600_000 });
    } finally {
      await fetch.close();
      await walk.close();
    }
    return fetchJobs + 2;
  };
  const onPostgres: Side = {
    env: (p) => ({ ...backendEnv({ backend: 'postgres', redisUrl }), TE_QUEUE_PREFIX: p, DATABASE_URL: fx.databaseUrl }),
    async seed(p, size) {
      const jobs = await seedQueues(p, size === 'large' ? 12 : 2);
      await seedRows(p, 3);
      return jobs;
    },
    async seedOthers(p) {
      // `${p}x` has queues of its own; both neighbours have budget and ledger rows.
      const theirJobs = await seedQueues(`${p}x`, 1);
      const rows = { [`${p}x`]: await seedRows(`${p}x`, 1), [`${p}-staging`]: await seedRows(`${p}-staging`, 2) };
      return async () => {
        expect(await schemaJobs(queueSchema(`${p}x`))).toBe(theirJobs);
        for (const [o, n] of Object.entries(rows)) expect(await prefixRows(o), o).toBe(n);
      };
    },
    left: async (p) => {
      const jobs = await schemaJobs(queueSchema(p));
      return (jobs === undefined ? 0 : 1 + jobs) + (await prefixRows(p));
    },
    mark: async (p) =>
      void (await admin`insert into sync.rate_budgets (prefix, bucket, record, version, updated_at, expires_at, written_by)
                        values (${p}, 'marker', '{}'::jsonb, 1, clock_timestamp(), clock_timestamp() + interval '1 hour', 'test')`),
    marked: async (p) => (await admin`select 1 from sync.rate_budgets where prefix = ${p} and bucket = 'marker'`).length === 1,
    async fakeWorker(p) {
      // BullMQ names a worker's LISTEN session `<queue>:w:<worker name>`, tesync's worker name being `<prefix>@<host>.<pid>`.
      const name = `walk:w:${p}@host-a.17`;
      const session = postgres(fx.databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: name } });
      await session`select 1`;
      return { name, close: () => session.end() };
    },
    refused: (p) => `tesync: reset refused: tesync still uses the queues of "${p}" in the schema ${queueSchema(p)} of ${location()}:`,
    dryRun: (p, n) => `${n} jobs in the schema ${queueSchema(p)} of ${location()}; nothing removed (--dry-run)`,
    dryCount: (stdout) => Number(/^(\d+) jobs? in the schema /.exec(stdout)?.[1]),
    removed: (p, n) => new RegExp(`^Removed the schema ${escapeRe(`${queueSchema(p)} of ${location()}`)} with its ${n} jobs \\(queues, job schedulers\\), and the prefix's rate budgets and run counters\\n`),
    nothingLeft: (p) => `No queues of "${p}" in ${location()} (no schema ${queueSchema(p)}); the prefix's rate budgets and run counters removed`,
    expiring: async () => 0,
  };
  const SIDES: Record<QueueBackendKind, Side> = { redis: onRedis, postgres: onPostgres };

  /** Runs of workers `running` in the warehouse: of `p` on `backend` (reset closes it), and two it must leave alone. */
  async function seedRuns(p: string, backend: QueueBackendKind) {
    const run = (queuePrefix: string, queueBackend: QueueBackendKind) => {
      const id = randomUUID();
      return startRun(fx.warehouse.db, { id, trigger: 'manual', sources: ['gateway'], options: { job: `walk-${id}`, queuePrefix, queueBackend } }).then(() => id);
    };
    return {
      mine: await run(p, backend),
      otherBackend: await run(p, backend === 'redis' ? 'postgres' : 'redis'),
      otherPrefix: await run(`${p}x`, backend),
    };
  }
  const runStatus = async (id: string) => (await fx.warehouse.query<{ status: string; error: string | null }>(sql`select status, error from sync.runs where id = ${id}`))[0];

  // Each of these cases seeds, resets and looks under a prefix of its own, and the runs it
  // seeds are its prefix's: they run side by side.
  describe.concurrent('a prefix of its own per case', () => {
    it('says what it needs (exit 2): what to reset without --queues; REDIS_URL for --redis, removing nothing without it', async () => {
      const p = newPrefix('postgres');
      const rows = await seedRows(p, 1);
      const [none, redisFlag] = await Promise.all([runCli(['reset'], { REDIS_URL: redisUrl }), runCli(['reset', '--redis'], onPostgres.env(p))]);
      expect(none.code).toBe(2);
      expect(none.stderr).toContain('say what to reset: --queues');
      expect(redisFlag.code).toBe(2);
      expect(redisFlag.stderr).toContain("reset --redis: REDIS_URL is not set, so the queues are in the warehouse's Postgres: use --queues");
      expect(await prefixRows(p)).toBe(rows);
    });

    describe.each(QUEUE_BACKENDS)('queues on %s', (backend) => {
      const side = SIDES[backend];

      it("removes exactly the prefix's queues and says how many, closing its workers' runs; --dry-run only counts", async () => {
        const p = newPrefix(backend);
        const mine = await side.seed(p, 'large');
        const othersIntact = await side.seedOthers(p);
        const runs = await seedRuns(p, backend);
        const env = side.env(p);

        const dry = await runCli(['reset', '--queues', '--dry-run'], env);
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toContain(side.dryRun(p, mine));
        expect(dry.stdout).toContain('nothing removed (--dry-run)');
        expect(side.dryCount(dry.stdout)).toBe(mine);
        const seeded = await side.left(p);
        expect(seeded).toBeGreaterThan(0);
        expect(await runStatus(runs.mine)).toMatchObject({ status: 'running' });

        const r = await runCli(['reset', '--queues'], env);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(side.removed(p, mine));
        expect(r.stdout).toContain(`Closed 1 run of these workers as failed in ${location()}`);
        expect(await side.left(p)).toBe(0);
        await othersIntact();
        expect(await runStatus(runs.mine)).toEqual({ status: 'failed', error: LOST_RUN_ERROR });
        // Runs of the same prefix on the other backend, and of another prefix, are not this reset's.
        expect(await runStatus(runs.otherBackend)).toMatchObject({ status: 'running' });
        expect(await runStatus(runs.otherPrefix)).toMatchObject({ status: 'running' });

        // Nothing left: it says so (on Redis under its name before the Postgres backend, --redis).
        const again = await runCli(['reset', backend === 'redis' ? '--redis' : '--queues'], env);
        expect(again.code, again.stderr).toBe(0);
        expect(again.stdout).toBe(`${side.nothingLeft(p)}\n`);
        await othersIntact();
      });

      it('refuses while a worker is connected under the prefix, naming it; --force removes anyway', async () => {
        const p = newPrefix(backend);
        const mine = await side.seed(p, 'small');
        const othersIntact = await side.seedOthers(p);
        const seeded = await side.left(p);
        const env = side.env(p);
        const worker = await side.fakeWorker(p);
        try {
          const r = await runCli(['reset', '--queues'], env);
          expect(r.code).toBe(1);
          expect(r.stderr).toContain(side.refused(p));
          expect(r.stderr).toContain('1 connection under the prefix (1 from workers)');
          expect(r.stderr).toContain(`  ${worker.name} from `);
          expect(r.stderr).toContain('--force');
          expect(r.stdout).toBe('');
          expect(await side.left(p)).toBe(seeded);

          const forced = await runCli(['reset', '--queues', '--force'], env);
          expect(forced.code, forced.stderr).toBe(0);
          expect(forced.stdout).toMatch(side.removed(p, mine));
          expect(await side.left(p)).toBe(0);
          await othersIntact();
        } finally {
          await worker.close();
        }
      });
    });

    describe.each(QUEUE_BACKENDS)('queues on %s, beside tesync status --serve', (backend) => {
      const side = SIDES[backend];
      it('a dry run counts and refuses nothing, saying what a reset would be refused for; the refusal names status --serve', async () => {
        const p = newPrefix(backend);
        const mine = await side.seed(p, 'small');
        const seeded = await side.left(p);
        const env = side.env(p);
        const serve = startCli(['status', '--serve', '--port', '0'], env, { timeoutMs: 90_000 });
        try {
          await serve.waitFor(/Status page of .*: http:\/\/\S+/, 60_000);
          const url = /Status page of .*: (http:\/\/\S+)/.exec(serve.stdout())![1]!;
          // The page read once: its rate budget's connection is open, as a person's look leaves it.
          expect((await fetch(url)).status).toBe(200);

          const dry = await runCli(['reset', '--queues', '--dry-run'], env);
          expect(dry.code, dry.stderr).toBe(0);
          expect(side.dryCount(dry.stdout)).toBe(mine);
          expect(dry.stdout).toContain('nothing removed (--dry-run)');
          expect(dry.stdout).toContain('A reset now would be refused: tesync still uses ');
          expect(dry.stdout).toMatch(/connected \d+s ago \(tesync status --serve\)/);
          expect(dry.stdout).toContain('Stop what holds them (tesync status --serve), then run it again, or add --force.');

          const r = await runCli(['reset', '--queues'], env);
          expect(r.code).toBe(1);
          expect(r.stderr).toContain(side.refused(p));
          expect(r.stderr).toContain('Stop what holds them (tesync status --serve), then run it again, or add --force.');
          expect(r.stdout).toBe('');
          expect(await side.left(p)).toBe(seeded);
        } finally {
          serve.child.kill('SIGINT');
          await serve.exited;
        }
      });
    });

    describe('queues on redis only', () => {
      it('refuses while a job lock is held, with no worker connected (a worker died less than TE_WORKER_LOCK_MS ago)', async () => {
        const p = newPrefix('redis');
        const mine = await onRedis.seed(p, 'small');
        // Held for longer than the reset below takes to start, however slow the machine.
        await redis.set(`${p}:fetch-gateway:7:lock`, 'token', 'PX', patience(60_000));
        const locked = await runCli(['reset', '--queues'], onRedis.env(p));
        expect(locked.code).toBe(1);
        expect(locked.stderr).toContain(onRedis.refused(p));
        expect(locked.stderr).toContain('1 job lock held');
        expect(locked.stderr).not.toContain('under the prefix');
        expect((await redisKeysUnder(p)).length).toBe(mine + 1);
      });
    });
  });

  // Each of these has a real worker walk the shared warehouse, and two walks would meet at its
  // sync lock: one at a time.
  describe.each(QUEUE_BACKENDS)('queues on %s', (backend) => {
    const side = SIDES[backend];

    describe('after a real worker', () => {
      it('is refused while it runs, naming its connections, and removes everything it left once it stopped', async () => {
        const p = newPrefix(backend);
        const othersIntact = await side.seedOthers(p);
        const env = {
          ...side.env(p),
          TE_GATEWAY_URL: fx.sim.url,
          TE_GATEWAY_API_KEY: gwKey,
          TE_METRICS_PORT: '0',
          TE_REQUEST_TIMEOUT_MS: '5000',
        };
        // What the worker leaves stays when it stops: reset is to remove it. Its walk is queued
        // and awaited as `tesync enqueue --wait --only tokens` does, from this process.
        const worker = startWorker(env);
        try {
          await worker.ready;
          const walk = await runEnded(fx.databaseUrl, (await queueWalk(env, { groups: ['tokens'] })).runId, { nominalMs: 90_000 });
          expect(walk.status, JSON.stringify(walk.stats.failures)).not.toBe('failed');
          expect(await side.left(p)).toBeGreaterThan(5);
          // The worker removes and expires some of what it keeps as it goes: a marker tells
          // whether reset removed anything.
          await side.mark(p);
          const refused = await runCli(['reset', '--queues'], env);
          expect(refused.code).toBe(1);
          expect(refused.stderr).toContain(side.refused(p));
          const counted = /(\d+) connections? under the prefix \((\d+) from workers\)/.exec(refused.stderr);
          expect(counted, refused.stderr).not.toBeNull();
          expect(Number(counted![2])).toBeGreaterThanOrEqual(1);
          // Each connection it names is one of the prefix's (at most 10 are named, in no set
          // order: the worker's own may be among those left unnamed).
          // Each with what holds it, where its name says (a worker's, here).
          const named = [...refused.stderr.matchAll(/^ {4}(.+) from \S+, connected \d+s ago(?: \((tesync [a-z -]+)\))?$/gm)].map((m) => m[1]!);
          expect(refused.stderr).toMatch(/connected \d+s ago \(tesync worker\)$/m);
          expect(refused.stderr).toContain('Stop what holds them (tesync worker), then run it again, or add --force.');
          expect(named.length, refused.stderr).toBe(Math.min(10, Number(counted![1])));
          for (const name of named) expect(name.startsWith(`${p}:`) || name.includes(`:w:${p}@`) || name.endsWith(` ${p}`), name).toBe(true);
          expect(await side.marked(p)).toBe(true);
        } finally {
          await killAll([worker]);
        }
        // A key the stopped worker left with a TTL (a lock, a lease) may expire between the dry
        // run and the reset: the reset removes what is there, never more than the dry run said.
        const expiring = await side.expiring(p);
        const dry = await runCli(['reset', '--queues', '--dry-run'], env);
        expect(dry.code, dry.stderr).toBe(0);
        const counted = side.dryCount(dry.stdout);
        expect(counted, dry.stdout).toBeGreaterThan(0);
        const r = await runCli(['reset', '--queues'], env);
        expect(r.code, r.stderr).toBe(0);
        const possible = Array.from({ length: expiring + 1 }, (_, i) => counted - i);
        expect(possible.some((n) => side.removed(p, n).test(r.stdout)), `${r.stdout}(dry run: ${counted}, ${expiring} with a TTL)`).toBe(true);
        expect(await side.left(p)).toBe(0);
        await othersIntact();
      }, patience(120_000));
    });
  });
});
