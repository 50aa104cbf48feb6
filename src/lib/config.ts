// The only reader of process.env: parses every variable declared in variables.ts into one
// typed Config, or throws a ConfigError naming the first bad one.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { z } from 'zod';
import type { HostName } from './host-names.ts';
import { parseRedisUrl, type RedisTarget } from './redis-url.ts';
import { VARIABLES, type VariableDoc } from './variables.ts';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    readonly problem: string,
    readonly example?: string,
  ) {
    super(`${variable}: ${problem}${example ? ` (example: ${variable}=${example})` : ''}`);
  }
}


type Vars = typeof VARIABLES;
type Parsed = { [K in keyof Vars]: z.output<Vars[K]['schema']> };

export interface Config {
  app: { url: string; apiKey: string | undefined } | undefined;
  gateway: { url: string; apiKey: string } | undefined;
  databaseUrl: string | undefined;
  /** A direct URL of the same database, for sessions (locks, LISTEN, COPY), when DATABASE_URL is a transaction pooler. */
  databaseSessionUrl: string | undefined;
  /** Connections to DATABASE_URL per process, at most. */
  databasePool: number;
  dataDir: string;
  /** TE_EMBEDDED_PORT: the embedded server's port, pinned; undefined: the one it had last time. */
  embeddedPort: number | undefined;
  /** Where `tesync export` writes without `--to`, and the worker after each daily fill. */
  exportDir: string | undefined;
  /** Set: the workers' queues, budget and run ledger are in Redis; unset: in the warehouse's Postgres. */
  redisUrl: string | undefined;
  /** REDIS_URL read: one server or a cluster's seeds, and the prefix its keys carry there. */
  redis: RedisTarget | undefined;
  logLevel: Parsed['LOG_LEVEL'];
  concurrency: number;
  requestTimeoutMs: number;
  maxResponseBytes: number;
  /** Byte budget of one resource's list bodies in one run (src/engine/fetch/fetch-list.ts). */
  maxListBytes: number;
  maxAttempts: number;
  maxRateWaitMs: number;
  gatewayHistoryPeriods: Parsed['TE_GATEWAY_HISTORY_PERIODS'];
  gatewayChartTimeframes: Parsed['TE_GATEWAY_CHART_TIMEFRAMES'];
  historyOverlapDays: number;
  historyFullRefetchDays: number;
  historyFromParam: string;
  markerMaxAgeMs: number;
  /** Days sync.requests is kept (0: forever); applied as runs end (src/store/books/retention.ts). */
  requestsRetentionDays: number;
  /** `tesync worker`: queues, locks, shutdown and metrics. */
  worker: {
    queuePrefix: string;
    concurrency: number;
    rateWaitMs: number;
    lockMs: number;
    stalledIntervalMs: number;
    shutdownGraceMs: number;
    metricsPort: number;
    /** Who the status page answers (TE_STATUS_PAGE). */
    statusPage: 'local' | 'all' | 'off';
    /** The hosts the status page and /metrics answer besides loopback (TE_STATUS_HOSTS). */
    statusHosts: HostName[];
  };
  /** Below this percentage of what its lists promise a group is not on time (TE_MIN_COVERAGE). */
  minCoverage: number;
  /** Where events are POSTed (TE_NOTIFY_URL: secrets, never logged whole), the signing key, the hold told. */
  notify: { urls: string[]; secret: string | undefined; holdMinutes: number };
  /** Cron pattern per schedule id; null: switched off. */
  schedules: Record<'catalog' | 'screener' | 'token-data' | 'bundles' | 'export', string | null>;
  scheduleTz: string;
  /** Every secret value, so the logger can scrub them wherever they appear. */
  secrets: string[];
}

/** Parses the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [name, doc] of Object.entries(VARIABLES) as [keyof Vars, VariableDoc][]) {
    const raw = env[name];
    // An empty assignment (`FOO=` in .env) means unset, as shells and compose treat it.
    const result = doc.schema.safeParse(raw === undefined || raw.trim() === '' ? undefined : raw);
    if (!result.success) {
      throw new ConfigError(name, result.error.issues[0]?.message ?? 'is invalid', doc.example);
    }
    out[name] = result.data;
  }
  const v = out as Parsed;
  const databaseUrlWrong = v.DATABASE_URL ? databaseUrlProblem(v.DATABASE_URL) : undefined;
  if (databaseUrlWrong) throw new ConfigError('DATABASE_URL', databaseUrlWrong, VARIABLES.DATABASE_URL.example);
  const sessionUrlWrong = v.TE_DATABASE_SESSION_URL ? databaseUrlProblem(v.TE_DATABASE_SESSION_URL) : undefined;
  if (sessionUrlWrong) throw new ConfigError('TE_DATABASE_SESSION_URL', sessionUrlWrong, VARIABLES.TE_DATABASE_SESSION_URL.example);
  if (v.TE_DATABASE_SESSION_URL && !v.DATABASE_URL) {
    throw new ConfigError('TE_DATABASE_SESSION_URL', "is set but DATABASE_URL is not: it names a direct way into DATABASE_URL's database (the embedded warehouse needs none)", VARIABLES.TE_DATABASE_SESSION_URL.example);
  }
  if (v.TE_GATEWAY_URL && !v.TE_GATEWAY_API_KEY) {
    throw new ConfigError('TE_GATEWAY_API_KEY', 'is required when TE_GATEWAY_URL is set', VARIABLES.TE_GATEWAY_API_KEY.example);
  }
  return {
    app: v.TE_APP_URL ? { url: v.TE_APP_URL, apiKey: v.TE_APP_API_KEY } : undefined,
    gateway: v.TE_GATEWAY_URL && v.TE_GATEWAY_API_KEY ? { url: v.TE_GATEWAY_URL, apiKey: v.TE_GATEWAY_API_KEY } : undefined,
    databaseUrl: v.DATABASE_URL,
    databaseSessionUrl: v.TE_DATABASE_SESSION_URL,
    databasePool: v.TE_DATABASE_POOL,
    dataDir: v.TE_DATA_DIR,
    embeddedPort: v.TE_EMBEDDED_PORT,
    exportDir: v.TE_EXPORT_DIR,
    redisUrl: v.REDIS_URL,
    redis: redisTarget(v.REDIS_URL, v.TE_QUEUE_PREFIX),
    logLevel: v.LOG_LEVEL,
    concurrency: v.TE_CONCURRENCY,
    requestTimeoutMs: v.TE_REQUEST_TIMEOUT_MS,
    maxResponseBytes: v.TE_MAX_RESPONSE_BYTES,
    maxListBytes: v.TE_MAX_LIST_BYTES,
    maxAttempts: v.TE_MAX_ATTEMPTS,
    maxRateWaitMs: v.TE_MAX_RATE_WAIT_MS,
    gatewayHistoryPeriods: v.TE_GATEWAY_HISTORY_PERIODS,
    gatewayChartTimeframes: v.TE_GATEWAY_CHART_TIMEFRAMES,
    historyOverlapDays: v.TE_HISTORY_OVERLAP_DAYS,
    historyFullRefetchDays: v.TE_HISTORY_FULL_REFETCH_DAYS,
    historyFromParam: v.TE_HISTORY_FROM_PARAM,
    markerMaxAgeMs: v.TE_MARKER_MAX_AGE_HOURS * 3600_000,
    requestsRetentionDays: v.TE_REQUESTS_RETENTION_DAYS,
    worker: {
      queuePrefix: v.TE_QUEUE_PREFIX,
      concurrency: v.TE_WORKER_CONCURRENCY,
      rateWaitMs: v.TE_WORKER_RATE_WAIT_MS,
      lockMs: v.TE_WORKER_LOCK_MS,
      stalledIntervalMs: v.TE_WORKER_STALLED_INTERVAL_MS,
      shutdownGraceMs: v.TE_WORKER_SHUTDOWN_GRACE_MS,
      metricsPort: v.TE_METRICS_PORT,
      statusPage: v.TE_STATUS_PAGE,
      statusHosts: v.TE_STATUS_HOSTS ?? [],
    },
    schedules: {
      catalog: v.TE_SCHEDULE_CATALOG,
      screener: v.TE_SCHEDULE_SCREENER,
      'token-data': v.TE_SCHEDULE_TOKEN_DATA,
      bundles: v.TE_SCHEDULE_BUNDLES,
      export: v.TE_SCHEDULE_EXPORT,
    },
    scheduleTz: v.TE_SCHEDULE_TZ,
    minCoverage: v.TE_MIN_COVERAGE,
    notify: { urls: v.TE_NOTIFY_URL ?? [], secret: v.TE_NOTIFY_SECRET, holdMinutes: v.TE_NOTIFY_HOLD_MINUTES },
    secrets: [
      v.TE_NOTIFY_SECRET,
      ...(v.TE_NOTIFY_URL ?? []).flatMap(notifyUrlSecrets),
      v.TE_APP_API_KEY,
      v.TE_GATEWAY_API_KEY,
      ...urlSecrets(v.DATABASE_URL),
      ...urlSecrets(v.TE_DATABASE_SESSION_URL),
      ...urlSecrets(v.REDIS_URL),
    ].filter((s): s is string => typeof s === 'string' && s.length > 0),
  };
}

/** REDIS_URL read (redis-url.ts), or the ConfigError naming it. */
function redisTarget(url: string | undefined, queuePrefix: string): RedisTarget | undefined {
  if (!url) return undefined;
  const target = parseRedisUrl(url, queuePrefix);
  if ('problem' in target) throw new ConfigError('REDIS_URL', target.problem, VARIABLES.REDIS_URL.example);
  return target;
}

/**
 * A notification URL is a secret whole: the whole of it, its password, and a path or query
 * long enough to be a token (Slack's `/services/T.../B.../...`), so that no log shows them.
 */
export function notifyUrlSecrets(url: string): string[] {
  const out = [url, ...urlSecrets(url)];
  try {
    const u = new URL(url);
    const rest = `${u.pathname}${u.search}`;
    if (rest.length >= 12) out.push(rest);
  } catch {
    // Refused by its parser already.
  }
  return out;
}

/** Passwords inside connection URLs are secrets too: the password as written and, when it can be, decoded. */
export function urlSecrets(url: string | undefined): string[] {
  if (!url) return [];
  const pw = passwordOf(url);
  if (!pw) return [];
  try {
    return [pw, decodeURIComponent(pw)];
  } catch {
    return [pw];
  }
}

/**
 * The password of a URL as written. A URL of several hosts (a Redis Cluster's seeds,
 * `redis+cluster://:pw@h1:p1,h2:p2`) is no WHATWG URL: its user info is read by hand.
 */
function passwordOf(url: string): string {
  try {
    return new URL(url).password;
  } catch {
    const authority = url.slice(url.indexOf('://') + 3).split(/[/?#]/)[0] ?? '';
    const at = authority.lastIndexOf('@');
    const colon = authority.indexOf(':');
    return at < 0 || colon < 0 || colon > at ? '' : authority.slice(colon + 1, at);
  }
}

/**
 * Pure: what is wrong with a Postgres URL that the driver (postgres.js) could not read, in
 * words that never quote the URL (its password may be anywhere in a URL that cannot be read);
 * undefined when it reads. The driver's own steps, in its order: the host part after the last
 * `@` is percent-decoded, the first of several hosts (`h1,h2`) stands for them in WHATWG URL
 * parsing, then the user name and the password are percent-decoded. Its errors name nothing
 * (`URI malformed`, `Invalid URL`).
 */
export function databaseUrlProblem(url: string): string | undefined {
  const undecodable = (part: string) =>
    `${part} is not percent-encoded right: each "%" must be followed by two hex digits (write a literal % as %25, and percent-encode @ : / ? # in the user name and password)`;
  const afterScheme = url.slice(url.indexOf('://') + 3);
  const hostPart = afterScheme.split(/[?/]/)[0] ?? '';
  let host: string;
  try {
    host = decodeURIComponent(hostPart.slice(hostPart.indexOf('@') + 1));
  } catch {
    // Which part the `%` is in cannot be told for sure when the URL is not read whole.
    return undecodable(hostPart.slice(hostPart.indexOf('@') + 1).includes('@') ? 'its user name, password or host' : 'its host');
  }
  let parsed: URL;
  try {
    parsed = new URL(url.replace(host, host.split(',')[0] ?? ''));
  } catch {
    const authority = afterScheme.split(/[/?#]/)[0] ?? '';
    const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
    if (hostAndPort.includes('[') && !/\[[^\]]*\]/.test(hostAndPort)) return 'is not a URL that can be read: its host has a "[" with no "]" (an IPv6 address is written in brackets, like [::1])';
    return 'is not a URL that can be read: check the host and port (a port is a number up to 65535; an IPv6 address is written in brackets, like [::1]), and percent-encode @ : / ? # % in the user name and password';
  }
  for (const [part, value] of [
    ['its user name', parsed.username],
    ['its password', parsed.password],
  ] as const) {
    try {
      decodeURIComponent(value);
    } catch {
      return undecodable(part);
    }
  }
  return undefined;
}

/** The process environment over a `.env` file in the working folder (the environment wins). */
export function readEnvironment(cwd = process.cwd()): Record<string, string | undefined> {
  const file = path.join(cwd, '.env');
  const fromFile = existsSync(file) ? parseDotenv(readFileSync(file)) : {};
  return { ...fromFile, ...process.env };
}
