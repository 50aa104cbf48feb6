// `tesync reset --redis` on the machine's Redis (TEST_REDIS_URL), each case under a prefix of
// its own: it removes exactly the keys under TE_QUEUE_PREFIX ("<prefix>:..."), leaves other
// prefixes (including ones that start with the same letters) alone, and refuses while a worker
// is connected or a job lock is held, unless --force. Never flushes anything.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientsUnder, escapeGlob, prefixPattern } from '../../src/runners/bullmq/prefix-keys.ts';
import { runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys, withWorkerRun } from '../helpers/workers.ts';

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

describe('tesync reset --redis', () => {
  let redisUrl: string;
  let redis: Redis;
  const used: string[] = [];
  beforeAll(async () => {
    redisUrl = await redisServerUrl();
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  });
  afterAll(async () => {
    for (const p of used) await deleteRedisKeys(redisUrl, p);
    // Keys named exactly like a prefix (no `:`) are neighbours too: deleteRedisKeys leaves them.
    if (used.length > 0) await redis?.del(...used);
    await redis?.quit();
  });

  function prefixes() {
    const p = uniqueName('tesync_reset');
    // Neighbours that must survive: a longer prefix, one that only shares letters, and keys
    // that contain the prefix elsewhere.
    const others = [`${p}-staging`, `${p}x`];
    used.push(p, ...others, `other_${p}`);
    return { p, others };
  }

  /** Keys of every type tesync leaves (strings, hashes, lists, sorted sets, streams). */
  async function seed(p: string, n = 40): Promise<string[]> {
    const keys: string[] = [];
    const m = redis.multi();
    for (let i = 0; i < n; i++) {
      const k = `${p}:fetch-gateway:${i}`;
      m.hset(k, 'name', 'fetch', 'data', '{}');
      keys.push(k);
    }
    m.set(`${p}:run:abc:pending`, '3').rpush(`${p}:walk:wait`, '1', '2').zadd(`${p}:walk:delayed`, 1, 'a').xadd(`${p}:walk:events`, '*', 'event', 'added');
    m.hset(`${p}:budget:gateway:record`, 's', '{}');
    keys.push(`${p}:run:abc:pending`, `${p}:walk:wait`, `${p}:walk:delayed`, `${p}:walk:events`, `${p}:budget:gateway:record`);
    await m.exec();
    return keys;
  }
  async function seedOthers(p: string, others: string[]): Promise<string[]> {
    const keys = [...others.map((o) => `${o}:walk:wait`), `other_${p}:${p}:x`, `${p}`];
    for (const k of keys) await redis.set(k, 'keep');
    return keys;
  }
  const existing = async (keys: string[]) => (keys.length === 0 ? 0 : redis.exists(...keys));
  const under = async (p: string) => {
    let n = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${p}:*`, 'COUNT', 1000);
      cursor = next;
      n += keys.length;
    } while (cursor !== '0');
    return n;
  };

  it('removes exactly the keys under the prefix and says how many; --dry-run only counts', async () => {
    const { p, others } = prefixes();
    const mine = await seed(p);
    const theirs = await seedOthers(p, others);
    const env = { REDIS_URL: redisUrl, TE_QUEUE_PREFIX: p };

    const dry = await runCli(['reset', '--redis', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`${mine.length} Redis keys under "${p}:"`);
    expect(dry.stdout).toContain('nothing removed (--dry-run)');
    expect(await existing(mine)).toBe(mine.length);

    const r = await runCli(['reset', '--redis'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Removed ${mine.length} Redis keys under "${p}:" at `));
    expect(await under(p)).toBe(0);
    expect(await existing(theirs)).toBe(theirs.length);

    const again = await runCli(['reset', '--redis'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to remove');
  });

  it('asks what to reset without --queues (exit 2)', async () => {
    const r = await runCli(['reset'], { REDIS_URL: redisUrl });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('say what to reset: --queues');
  });

  it('refuses while a worker is connected under the prefix, or a job lock is held; --force removes anyway', async () => {
    const { p, others } = prefixes();
    const mine = await seed(p, 5);
    const theirs = await seedOthers(p, others);
    const env = { REDIS_URL: redisUrl, TE_QUEUE_PREFIX: p };
    const workerName = `${p}:${Buffer.from('walk').toString('base64')}:w:host-a.17`;
    const worker = new Redis(redisUrl, { connectionName: workerName, maxRetriesPerRequest: 3 });
    try {
      await worker.ping();
      const r = await runCli(['reset', '--redis'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`tesync: reset refused: tesync still uses the Redis keys under "${p}:"`);
      expect(r.stderr).toContain('1 connection under the prefix (1 from workers)');
      expect(r.stderr).toContain(workerName);
      expect(r.stderr).toContain('--force');
      expect(await existing(mine)).toBe(mine.length);
    } finally {
      await worker.quit();
    }

    await redis.set(`${p}:fetch-gateway:7:lock`, 'token', 'PX', 60_000);
    const locked = await runCli(['reset', '--redis'], env);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain('1 job lock held');
    expect(await existing(mine)).toBe(mine.length);

    const forced = await runCli(['reset', '--redis', '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(new RegExp(`^Removed ${mine.length + 1} Redis keys`));
    expect(await under(p)).toBe(0);
    expect(await existing(theirs)).toBe(theirs.length);
  });

  describe('after a real worker', () => {
    const gwKey = canaryKey('gw');
    const fx = useSimAndWarehouse({ tokens: 2, historyDays: 3, chartsPerToken: 1, seed: 9, gatewayKeys: [gwKey] });

    it('is refused while it runs, and removes every key it left once it stopped', async () => {
      const { p, others } = prefixes();
      const theirs = await seedOthers(p, others);
      const env = {
        REDIS_URL: redisUrl,
        TE_QUEUE_PREFIX: p,
        DATABASE_URL: fx.databaseUrl,
        TE_GATEWAY_URL: fx.sim.url,
        TE_GATEWAY_API_KEY: gwKey,
        TE_METRICS_PORT: '0',
        TE_REQUEST_TIMEOUT_MS: '5000',
      };
      // The keys the worker leaves stay when it stops: reset is to remove them.
      await withWorkerRun(env, 'tokens', async ({ enqueue: walk }) => {
        expect(walk.code, walk.stderr).toBe(0);
        const left = await under(p);
        expect(left).toBeGreaterThan(5);
        // The worker removes and expires some of its own keys as it goes: a marker tells
        // whether reset removed anything.
        await redis.set(`${p}:marker`, '1');
        const refused = await runCli(['reset', '--redis'], env);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(/\d+ connections under the prefix \((\d+) from workers\)/);
        expect(await redis.exists(`${p}:marker`)).toBe(1);
      });
      const dry = await runCli(['reset', '--redis', '--dry-run'], env);
      const counted = Number(/^(\d+) Redis keys/.exec(dry.stdout)?.[1]);
      const r = await runCli(['reset', '--redis'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Removed ${counted} Redis keys under "${p}:"`));
      expect(await under(p)).toBe(0);
      expect(await existing(theirs)).toBe(theirs.length);
    }, 150_000);
  });
});
