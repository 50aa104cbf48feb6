// A connection to the workers' Redis as the code that uses it sees it: one server (ioredis
// `Redis`) or a Redis Cluster (ioredis `Cluster`), which answer the same commands for keys of
// one slot. What differs is here: which slot a key hashes to, which node serves it, and the
// primaries a command about every key (SCAN, CLIENT LIST) must be sent to one by one.
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** CRC16/XMODEM, the checksum Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** Pure: the cluster slot of a key, as `CLUSTER KEYSLOT` gives it (its hash tag's, when it has one). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(new TextEncoder().encode(hashed)) % 16384;
}

/**
 * The node (`host:port`) that serves a key's slot as this client knows it now, or undefined on
 * one server. It changes when the cluster moves the slot: a failover (a replica promoted), or
 * a slot migrated; the client learns it from a MOVED reply or a refresh of its slot table.
 */
export function servingNode(client: RedisClient, key: string): string | undefined {
  if (!isCluster(client)) return undefined;
  return client.slots[keySlot(key)]?.[0];
}

/** The primaries of a cluster (the one server otherwise): a command about every key goes to each. */
export function primaries(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}
