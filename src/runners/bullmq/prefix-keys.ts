// What tesync keeps in Redis lives under one prefix (TE_QUEUE_PREFIX, braced on a Redis Cluster:
// src/lib/redis-url.ts): `<prefix>:<queue>:...` (BullMQ queues, job schedulers, jobs),
// `<prefix>:budget:...` (the shared rate budget), `<prefix>:run:...` (run counters). `tesync
// reset --redis` finds them with SCAN and removes them with UNLINK, after checking that no
// tesync process still uses them; on a cluster SCAN and CLIENT LIST go to every primary, each
// of which holds its own keys and connections.
import { keySlot, primaries, type RedisClient } from '../../upstream/redis/client.ts';

/** Pure: `s` with Redis glob characters escaped, so it matches only itself. */
export function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\^]/g, (c) => `\\${c}`);
}

/** Pure: the SCAN pattern of every key under the prefix (`tesync:*`: not `tesync-staging:*`). */
export function prefixPattern(prefix: string): string {
  return `${escapeGlob(prefix)}:*`;
}

export interface PrefixClient {
  name: string;
  addr: string;
  /** Seconds since it connected. */
  ageS: number;
  /** A BullMQ worker (`<prefix>:<queue>:w:<name>`, or unnamed `<prefix>:<queue>`), not some other tesync connection. */
  worker: boolean;
}

/** Pure: the connections named under the prefix in a CLIENT LIST reply (tesync names every connection it opens so). */
export function clientsUnder(clientList: string, prefix: string, ownName?: string): PrefixClient[] {
  const out: PrefixClient[] = [];
  for (const line of clientList.split('\n')) {
    const fields = new Map<string, string>();
    for (const part of line.trim().split(' ')) {
      const eq = part.indexOf('=');
      if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
    }
    const name = fields.get('name') ?? '';
    if (!name.startsWith(`${prefix}:`) || name === ownName) continue;
    const rest = name.slice(prefix.length + 1);
    // BullMQ names a worker's connection `<prefix>:<base64 of the queue name>[:w:<worker name>]`.
    const worker = rest.includes(':w:') || /^[A-Za-z0-9+/]+=*$/.test(rest);
    out.push({ name, addr: fields.get('addr') ?? '?', ageS: Number(fields.get('age') ?? 0), worker });
  }
  return out;
}

/** The connections under the prefix (every primary's, on a cluster), or why they could not be listed (CLIENT may be disabled on managed Redis). */
export async function prefixClients(redis: RedisClient, prefix: string, ownName?: string): Promise<{ clients: PrefixClient[] } | { error: string }> {
  try {
    const lists = await Promise.all(primaries(redis).map(async (node) => String(await node.call('CLIENT', 'LIST'))));
    return { clients: lists.flatMap((list) => clientsUnder(list, prefix, ownName)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** Every batch of keys matching `pattern` (SCAN of each primary; a key may come twice, UNLINK counts it once). */
export async function* scanKeys(redis: RedisClient, pattern: string, count = 1000): AsyncGenerator<string[]> {
  for (const node of primaries(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

/** How many keys are under the prefix, and how many of them are job locks (held by a live worker: they expire with it). */
export async function countPrefixKeys(redis: RedisClient, prefix: string): Promise<{ keys: number; locks: number }> {
  const seen = new Set<string>();
  let locks = 0;
  for await (const batch of scanKeys(redis, prefixPattern(prefix))) {
    for (const k of batch) {
      if (seen.has(k)) continue;
      seen.add(k);
      if (k.endsWith(':lock')) locks++;
    }
  }
  return { keys: seen.size, locks };
}

/**
 * Removes every key under the prefix; resolves with how many were removed. One UNLINK per slot
 * of a batch: a cluster refuses a command over keys of two slots (CROSSSLOT), and a prefix
 * without a hash tag would spread them.
 */
export async function removePrefixKeys(redis: RedisClient, prefix: string): Promise<number> {
  let removed = 0;
  for await (const batch of scanKeys(redis, prefixPattern(prefix))) {
    const bySlot = new Map<number, string[]>();
    for (const k of batch) bySlot.set(keySlot(k), [...(bySlot.get(keySlot(k)) ?? []), k]);
    for (const keys of bySlot.values()) removed += await redis.unlink(...keys);
  }
  return removed;
}
