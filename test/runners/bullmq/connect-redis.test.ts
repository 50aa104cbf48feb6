// Connecting to Redis at start: a port where nothing listens is reported as refused within the
// grace period, a server that accepts but never answers as timed out, a real Redis connects, and
// one server named as a cluster is bad configuration.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/lib/config.ts';
import { parseRedisUrl, type RedisTarget } from '../../../src/lib/redis-url.ts';
import { connectErrorCode, connectRedis, REDIS_REFUSED_GRACE_MS } from '../../../src/upstream/redis/connect.ts';
import { freePort } from '../../helpers/own-servers.ts';
import { redisServerUrl } from '../../helpers/services.ts';

function target(url: string): RedisTarget {
  const t = parseRedisUrl(url, 'tesync');
  if ('problem' in t) throw new Error(t.problem);
  return t;
}

describe('connectRedis', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('reports a refused connection as refused once its grace period is over, before the connect timeout', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const err = (await connectRedis(target(url)).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    const elapsed = Date.now() - started;
    // Refused, not timed out: the refusal ended the wait before the connect timeout could.
    expect(err.message).toMatch(/^cannot reach Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): connection refused \(ECONNREFUSED\)/);
    expect(err.message).not.toContain('timed out');
    // Not before the grace period: a lower bound, which a slower machine only lengthens (less a
    // little for timers that round to the millisecond).
    expect(elapsed).toBeGreaterThanOrEqual(REDIS_REFUSED_GRACE_MS - 50);
  });

  it('reports a server that never answers as timed out', async () => {
    const server = createServer((socket) => sockets.push(socket)); // accepts, never replies
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `redis://127.0.0.1:${(server.address() as { port: number }).port}`;
    await expect(connectRedis(target(url), undefined, { timeoutMs: 700 })).rejects.toThrow(/\(REDIS_URL\): no answer within 1 s \(timed out\)/);
  });

  it('connects to a Redis that answers', async () => {
    const url = await redisServerUrl();
    const redis = await connectRedis(target(url), 'tesync-connect-test');
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await redis.quit();
    }
  });

  it('refuses one server named as a Redis Cluster: bad configuration, naming REDIS_URL', async () => {
    const url = (await redisServerUrl()).replace(/^redis:/, 'redis+cluster:');
    const err = (await connectRedis(target(url), undefined, { timeoutMs: 5000 }).then(
      () => undefined,
      (e: unknown) => e,
    )) as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.variable).toBe('REDIS_URL');
    expect(err.message).toMatch(/^REDIS_URL: names Redis Cluster at 127\.0\.0\.1:\d+, but it is one server, not a cluster: write it redis:\/\/host:port/);
  });

  it('reads the code of a refusal, whole or in parts', () => {
    expect(connectErrorCode(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED');
    expect(connectErrorCode(new AggregateError([new Error('a'), Object.assign(new Error('b'), { code: 'ECONNREFUSED' })], ''))).toBe('ECONNREFUSED');
    expect(connectErrorCode(Object.assign(new Error('Failed to refresh slots cache.'), { lastNodeError: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }))).toBe('ECONNREFUSED');
    expect(connectErrorCode(new Error('no code'))).toBeUndefined();
    expect(connectErrorCode(null)).toBeUndefined();
  });
});
