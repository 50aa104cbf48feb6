// The one place a Redis connection is made (no other `new Redis(` or `new Cluster(` in src/):
// REDIS_URL as config.ts read it, one server or a Redis Cluster, with what BullMQ requires of
// its connections. BullMQ, the rate budget's store and the run ledger are handed what this
// makes, or a duplicate of it, which keeps its options.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { ConfigError } from '../../lib/errors.ts';
import { redisPlace, type RedisTarget } from '../../lib/redis-url.ts';
import { isCluster, type RedisClient } from './client.ts';

/** Options of each connection to a node: the server's, or each node's of a cluster. */
export function nodeOptions(target: RedisTarget, connectionName?: string): RedisOptions {
  return {
    ...(target.cluster ? {} : { host: target.nodes[0]!.host, port: target.nodes[0]!.port }),
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.db !== undefined ? { db: target.db } : {}),
    ...(target.tls ? { tls: {} } : {}),
    ...(connectionName ? { connectionName } : {}),
    // BullMQ workers block on Redis: a command must wait for a reconnect, not fail.
    maxRetriesPerRequest: null,
    // disconnect() ends the socket and waits this long for it to close: ioredis waits the whole
    // time (2 s by default) when the socket was already closed by a refusal, holding the exit.
    disconnectTimeout: 250,
  };
}

/**
 * A cluster's own options. A command whose node is gone is sent again once the slot table is
 * refreshed, every 300 ms, until a replica has taken the slot over: 200 tries (a minute) cover
 * a failover with Redis' default cluster-node-timeout of 15 s, where ioredis' defaults (16
 * tries, 100 ms apart) would fail the command after about 2 s.
 */
export function clusterOptions(target: RedisTarget, connectionName?: string): ClusterOptions {
  return {
    redisOptions: nodeOptions(target, connectionName),
    retryDelayOnFailover: 300,
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 300,
    maxRedirections: 200,
    slotsRefreshTimeout: 2000,
    // A TLS cluster's nodes are named by the certificate's host, not the address they announce.
    ...(target.tls ? { dnsLookup: (address: string, callback: (err: Error | null, address: string) => void) => callback(null, address) } : {}),
  };
}

/** A client of the target, connecting in the background (ioredis reconnects on its own). */
export function openRedis(target: RedisTarget, connectionName?: string): RedisClient {
  return target.cluster ? new Cluster(target.nodes, clusterOptions(target, connectionName)) : new Redis(nodeOptions(target, connectionName));
}

const REDIS_CONNECT_TIMEOUT_MS = 10_000;
/**
 * A refused connection is an answer: nothing listens there. It is reported once refusals have
 * gone on this long (a Redis that is just starting gets that much), not after the timeout.
 */
export const REDIS_REFUSED_GRACE_MS = 1000;

/** Pure: the error code of a failed connection attempt (Node's AggregateError of several addresses carries it, or its parts do; a cluster's, its last node's error). */
export function connectErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown; lastNodeError?: unknown } | null;
  if (typeof e?.code === 'string') return e.code;
  if (Array.isArray(e?.errors)) return e.errors.map(connectErrorCode).find((c) => c !== undefined);
  if (e?.lastNodeError) return connectErrorCode(e.lastNodeError);
  return undefined;
}

/**
 * Connects and checks the target answers as what REDIS_URL says it is, or fails start-up with
 * a plain message instead of retrying forever against a wrong URL: a cluster's node named as
 * one server (its keys are spread over nodes that one client cannot reach) and a server named
 * as a cluster are bad configuration.
 */
export async function connectRedis(target: RedisTarget, connectionName?: string, timing: { timeoutMs?: number; refusedGraceMs?: number } = {}): Promise<RedisClient> {
  const timeoutMs = timing.timeoutMs ?? REDIS_CONNECT_TIMEOUT_MS;
  const graceMs = timing.refusedGraceMs ?? REDIS_REFUSED_GRACE_MS;
  const redis = openRedis(target, connectionName);
  const timers: NodeJS.Timeout[] = [];
  let refusing = false;
  let started = false;
  let reject: ((err: Error) => void) | undefined;
  const failed = new Promise<never>((_, r) => (reject = r));
  // ioredis reconnects on its own; a failed start is reported below. The first refusal starts
  // the grace period: still refused at its end, the start fails as refused.
  const onError = (err: unknown) => {
    if (started) return;
    if (/cluster support disabled/i.test(String((err as { lastNodeError?: Error })?.lastNodeError?.message ?? (err as Error)?.message))) {
      reject?.(new ConfigError('REDIS_URL', `names ${redisPlace(target)}, but it is one server, not a cluster: write it redis://host:port (rediss:// for TLS)`));
      return;
    }
    if (refusing || connectErrorCode(err) !== 'ECONNREFUSED') return;
    refusing = true;
    timers.push(setTimeout(() => reject?.(new Error('connection refused (ECONNREFUSED): nothing listens on that port; is Redis running?')), graceMs));
  };
  redis.on('error', onError);
  if (isCluster(redis)) redis.on('node error', onError);
  try {
    await Promise.race([
      (async () => {
        await redis.ping();
        if (!target.cluster && /cluster_enabled:1/.test(await redis.info('cluster'))) {
          throw new ConfigError('REDIS_URL', `names ${redisPlace(target)}, a node of a Redis Cluster: write it redis+cluster://host1:port1,host2:port2 (any of its nodes), so that tesync follows the cluster`);
        }
      })(),
      failed,
      new Promise((_, r) => timers.push(setTimeout(() => r(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s (timed out)`)), timeoutMs))),
    ]);
    return redis;
  } catch (err) {
    redis.disconnect();
    if (err instanceof ConfigError) throw err;
    throw new Error(`cannot reach ${redisPlace(target)} (REDIS_URL): ${(err as Error).message}`);
  } finally {
    // Refusals after this are reconnects of a running process, not a failed start.
    started = true;
    for (const t of timers) clearTimeout(t);
  }
}
