// Where tesync's keys are in the workers' Redis, as `tesync check` and `tesync status` say it:
// one server, or a Redis Cluster with its state, and then the slot the prefix's hash tag
// gives and the primary that serves it (with its replicas), as the cluster itself answers
// (CLUSTER KEYSLOT, CLUSTER SLOTS, CLUSTER INFO), not as this client last learned it.
import { redisPlace, type RedisTarget } from '../../lib/redis-url.ts';
import type { RedisClient } from './client.ts';

export interface KeysPlace {
  /** `Redis at ...` or `Redis Cluster at ...` (the seeds), as REDIS_URL names it. */
  where: string;
  cluster: boolean;
  /** The prefix as the keys carry it. */
  keyPrefix: string;
  /** A cluster's: `ok` or `fail` (CLUSTER INFO's cluster_state). */
  state?: string;
  primaries?: number;
  /** The slot every key under the prefix hashes to. */
  slot?: number;
  /** The primary serving it (`host:port`), none when no node does. */
  primary?: string;
  replicas?: string[];
}

type SlotsReply = [number, number, ...[string, number, ...unknown[]][]][];

/** Asks the Redis where the prefix's keys are. */
export async function readKeysPlace(redis: RedisClient, target: RedisTarget): Promise<KeysPlace> {
  const base = { where: redisPlace(target), cluster: target.cluster, keyPrefix: target.keyPrefix };
  if (!target.cluster) return base;
  const [slot, slots, info] = await Promise.all([
    redis.call('CLUSTER', 'KEYSLOT', `${target.keyPrefix}:walk`) as Promise<number>,
    redis.call('CLUSTER', 'SLOTS') as Promise<SlotsReply>,
    redis.call('CLUSTER', 'INFO') as Promise<string>,
  ]);
  const node = ([host, port]: [string, number, ...unknown[]]) => `${host}:${port}`;
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  const [, , primary, ...replicas] = range ?? [];
  return {
    ...base,
    state: /cluster_state:(\w+)/.exec(String(info))?.[1] ?? 'unknown',
    primaries: new Set(slots.map(([, , p]) => node(p!))).size,
    slot: Number(slot),
    ...(primary ? { primary: node(primary), replicas: replicas.map(node) } : {}),
  };
}

/** Pure: the place in one line: `Redis Cluster at h1:p1,h2:p2: 3 primaries, state ok; keys under {tesync}: in slot 4710, on 127.0.0.1:7002 (replica 127.0.0.1:7005)`. */
export function keysPlaceLine(p: KeysPlace): string {
  if (!p.cluster) return `${p.where}, one server; keys under "${p.keyPrefix}:"`;
  const on = p.primary ? `on ${p.primary}${p.replicas?.length ? ` (replica${p.replicas.length === 1 ? '' : 's'} ${p.replicas.join(', ')})` : ' (no replica)'}` : 'served by no node';
  return `${p.where}: ${p.primaries} primar${p.primaries === 1 ? 'y' : 'ies'}, state ${p.state}; keys under "${p.keyPrefix}:" in slot ${p.slot}, ${on}`;
}
