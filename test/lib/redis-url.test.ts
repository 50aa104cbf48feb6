// REDIS_URL read into where the workers' Redis is: one server or a cluster's seeds, and the
// prefix its keys carry (braced on a cluster, so that every key of tesync's is in one slot).
// A password is a secret: never in a problem, always among the secrets the logger scrubs.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/lib/config.ts';
import { clusterKeyPrefix, describeRedisTarget, hasHashTag, parseRedisUrl, redisPlace } from '../../src/lib/redis-url.ts';
import { keySlot } from '../../src/upstream/redis/client.ts';

describe('REDIS_URL', () => {
  it('reads one server as before: host, port, user, password, database, TLS; the prefix as written', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379', 'tesync')).toEqual({ cluster: false, nodes: [{ host: '127.0.0.1', port: 6379 }], tls: false, keyPrefix: 'tesync' });
    expect(parseRedisUrl('rediss://user:p%40ss@cache.example.com:6380/2', 'tesync')).toEqual({
      cluster: false,
      nodes: [{ host: 'cache.example.com', port: 6380 }],
      username: 'user',
      password: 'p@ss',
      db: 2,
      tls: true,
      keyPrefix: 'tesync',
    });
    expect(parseRedisUrl('redis://[::1]', 'tesync')).toMatchObject({ nodes: [{ host: '::1', port: 6379 }] });
  });

  it('reads a cluster: every seed, and the prefix braced unless it has a hash tag of its own', () => {
    const t = parseRedisUrl('rediss+cluster://:s3cret@10.0.0.1:7000,10.0.0.2:7001,node-3', 'tesync');
    expect(t).toEqual({
      cluster: true,
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'node-3', port: 6379 },
      ],
      password: 's3cret',
      tls: true,
      keyPrefix: '{tesync}',
    });
    expect(parseRedisUrl('redis+cluster://h:7000', 'staging-{tesync}')).toMatchObject({ keyPrefix: 'staging-{tesync}' });
    expect(parseRedisUrl('redis+cluster://h:7000/0', '{}x')).toMatchObject({ keyPrefix: '{{}x}' });
    expect(describeRedisTarget(t as never)).toBe('10.0.0.1:7000,10.0.0.2:7001,node-3:6379');
    expect(redisPlace(t as never)).toBe('Redis Cluster at 10.0.0.1:7000,10.0.0.2:7001,node-3:6379');
    expect(redisPlace(parseRedisUrl('redis://h:1/3', 'p') as never)).toBe('Redis at h:1/3');
  });

  it('gives every key under a braced prefix one slot, whatever follows', () => {
    for (const prefix of ['tesync', 'a}b', 'x{', 'staging-{tesync}', '{}x']) {
      const p = clusterKeyPrefix(prefix);
      expect(hasHashTag(p), p).toBe(true);
      const slots = new Set([`${p}:walk:wait`, `${p}:fetch-gateway:123`, `${p}:budget:gateway:record`, `${p}:run:abc:pending`].map(keySlot));
      expect(slots.size, p).toBe(1);
    }
    // As CLUSTER KEYSLOT gives them.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('123456789')).toBe(12739);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
  });

  it.each([
    ['localhost:6379', /must be a redis:\/\/, rediss:\/\/, redis\+cluster:\/\/ or rediss\+cluster:\/\/ URL/],
    ['redis://a:1,b:2', /names several hosts: a Redis Cluster is written redis\+cluster:\/\//],
    ['redis+cluster://a:1,b:99999', /has a host that cannot be read/],
    ['redis+cluster://a:1/2', /names a database number, which a Redis Cluster does not have/],
    ['redis+cluster://:pa%zzword@a:1', /user name or password that is not percent-encoded right/],
  ])('refuses %j, naming REDIS_URL and never its password', (url, problem) => {
    let err: unknown;
    try {
      loadConfig({ REDIS_URL: url });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('REDIS_URL');
    expect((err as ConfigError).message).toMatch(problem);
    expect((err as ConfigError).message).not.toContain('pa%zz');
  });

  it('counts a cluster URL\'s password among the secrets, as written and decoded', () => {
    const c = loadConfig({ REDIS_URL: 'redis+cluster://tesync:p%40ss@h1:7000,h2:7001', TE_QUEUE_PREFIX: 'prod' });
    expect(c.redis).toMatchObject({ cluster: true, password: 'p@ss', keyPrefix: '{prod}' });
    expect(c.secrets).toEqual(expect.arrayContaining(['p%40ss', 'p@ss']));
    expect(c.worker.queuePrefix).toBe('prod');
  });
});
