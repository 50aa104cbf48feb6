// REDIS_URL read once, into where the workers' Redis is: one server (`redis://`, `rediss://`)
// or a Redis Cluster (`redis+cluster://h1:p1,h2:p2`, `rediss+cluster://...`: the nodes to
// learn the cluster from, any of them will do), and the prefix every key of tesync's lives
// under there. Pure: config.ts calls it; nothing here connects.

export interface RedisNode {
  host: string;
  port: number;
}

export interface RedisTarget {
  /** A Redis Cluster: the nodes are seeds, the cluster tells the rest. */
  cluster: boolean;
  /** One for a single server; the seeds of a cluster. */
  nodes: RedisNode[];
  username?: string;
  /** A secret: never in a message or a log line. */
  password?: string;
  /** The database number (a single server only: a cluster has database 0 alone). */
  db?: number;
  tls: boolean;
  /**
   * TE_QUEUE_PREFIX as the keys carry it: on a cluster with a hash tag (`{tesync}`, added
   * when the prefix has none), so that every key under it (each queue's, the budget's, the run
   * counters) hashes to one slot and no script or transaction spans two; on one server as
   * written.
   */
  keyPrefix: string;
}

const SCHEMES: Record<string, { cluster: boolean; tls: boolean }> = {
  'redis:': { cluster: false, tls: false },
  'rediss:': { cluster: false, tls: true },
  'redis+cluster:': { cluster: true, tls: false },
  'rediss+cluster:': { cluster: true, tls: true },
};

/** Pure: whether a key prefix holds a Redis Cluster hash tag (a `{` followed by a `}` with something between). */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

/** Pure: the prefix as a cluster's keys carry it: as it is when it has a hash tag, else braced whole. */
export function clusterKeyPrefix(prefix: string): string {
  return hasHashTag(prefix) ? prefix : `{${prefix}}`;
}

/**
 * Pure: REDIS_URL read, or what is wrong with it, in words that never quote the URL (its
 * password may be anywhere in a URL that cannot be read).
 */
export function parseRedisUrl(url: string, queuePrefix: string): RedisTarget | { problem: string } {
  const scheme = /^([a-z+]+:)\/\//i.exec(url)?.[1]?.toLowerCase();
  const kind = scheme ? SCHEMES[scheme] : undefined;
  if (!scheme || !kind) return { problem: 'must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL' };
  const rest = url.slice(scheme.length + 2);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const path = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at);
  const hosts = (at < 0 ? authority : authority.slice(at + 1)).split(',');
  if (!kind.cluster && hosts.length > 1) return { problem: 'names several hosts: a Redis Cluster is written redis+cluster://host1:port1,host2:port2' };
  const nodes: RedisNode[] = [];
  for (const h of hosts) {
    const node = readHost(h);
    if (!node) return { problem: 'has a host that cannot be read: write host:port (a port is a number up to 65535; an IPv6 address in brackets, like [::1]:6379)' };
    nodes.push(node);
  }
  const colon = userinfo.indexOf(':');
  let username: string | undefined;
  let password: string | undefined;
  try {
    username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon)) || undefined;
    password = colon < 0 ? undefined : decodeURIComponent(userinfo.slice(colon + 1)) || undefined;
  } catch {
    return { problem: 'has a user name or password that is not percent-encoded right: each "%" must be followed by two hex digits (percent-encode @ : / ? # % in them)' };
  }
  const dbText = /^\/?(\d*)\/?(?:[?#].*)?$/.exec(path)?.[1];
  if (dbText === undefined) return { problem: 'has a path that is not a database number (redis://host:6379/2)' };
  const db = dbText === '' ? undefined : Number(dbText);
  if (kind.cluster && db !== undefined && db !== 0) return { problem: 'names a database number, which a Redis Cluster does not have (it has database 0 only): leave it out' };
  return {
    cluster: kind.cluster,
    nodes,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(db !== undefined && !kind.cluster ? { db } : {}),
    tls: kind.tls,
    keyPrefix: kind.cluster ? clusterKeyPrefix(queuePrefix) : queuePrefix,
  };
}

function readHost(text: string): RedisNode | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(text);
  if (!m) return undefined;
  const port = m[2] === undefined ? 6379 : Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** Pure: host:port (and /db) of a server, the seeds of a cluster joined by commas; never a password. */
export function describeRedisTarget(t: Pick<RedisTarget, 'cluster' | 'nodes' | 'db'>): string {
  const hostPort = (n: RedisNode) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`;
  if (t.cluster) return t.nodes.map(hostPort).join(',');
  return `${hostPort(t.nodes[0]!)}${t.db !== undefined ? `/${t.db}` : ''}`;
}

/** Pure: where the Redis is, for messages: `Redis at host:port`, `Redis Cluster at h1:p1,h2:p2`. */
export function redisPlace(t: Pick<RedisTarget, 'cluster' | 'nodes' | 'db'>): string {
  return `${t.cluster ? 'Redis Cluster' : 'Redis'} at ${describeRedisTarget(t)}`;
}
