// Every environment variable tesync reads, declared once: its parser and its documentation.
// src/lib/config.ts reads them; the README's configuration table is checked against this list.
import { z } from 'zod';
import { cronProblem } from './cron.ts';
import { readHostList, type HostName } from './host-names.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const GATEWAY_PERIODS = ['7d', '30d', '90d', '180d', '365d', '1y'] as const;
export const GATEWAY_TIMEFRAMES = ['7d', '30d', '90d', '180d', '365d', '1y', 'all'] as const;

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials')
  // A trailing slash would double up with route prefixes.
  .transform((v) => v.replace(/\/+$/, ''));

/**
 * Notification endpoints: http(s) URLs, comma-separated. A URL may carry the receiver's token
 * in its path or a password, so what is wrong is said by its place in the list, never by it.
 */
const notifyUrls = z.string().transform((v, ctx): string[] => {
  const urls = v.split(',').map((s) => s.trim()).filter(Boolean);
  for (const [i, url] of urls.entries()) {
    let ok = false;
    try {
      const u = new URL(url);
      ok = u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) {
      ctx.addIssue({ code: 'custom', message: `entry ${i + 1} of ${urls.length} is not an http(s) URL (comma-separated URLs; the entry is not shown: it may hold a token)` });
      return z.NEVER;
    }
  }
  if (urls.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'names no URL' });
    return z.NEVER;
  }
  return urls;
});

const MIN_KEY_CHARS = 8;
const secret = z.string().trim().min(MIN_KEY_CHARS, `looks too short to be an API key (${MIN_KEY_CHARS} characters or more)`);

/** Pure: why tesync would refuse `value` as TE_APP_API_KEY or TE_GATEWAY_API_KEY; undefined when it would not. */
export function apiKeyProblem(value: string): string | undefined {
  const r = secret.safeParse(value);
  return r.success ? undefined : (r.error.issues[0]?.message ?? 'is invalid');
}

const positiveInt = (max: number) =>
  z.coerce.number().int('must be a whole number').min(1, 'must be at least 1').max(max, `must be at most ${max}`);
const listOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.enum(values), { error: `must be a comma-separated list of ${values.join(', ')}` }).min(1))
    .transform((v) => [...new Set(v)]);

/** A cron pattern, or `off` (parsed as null) to switch the schedule off. */
const schedule = (fallback: string) =>
  z
    .string()
    .trim()
    .superRefine((v, ctx) => {
      const problem = v.toLowerCase() === 'off' ? undefined : cronProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: `must be a cron pattern or off: ${problem}` });
    })
    .transform((v): string | null => (v.toLowerCase() === 'off' ? null : v.split(/\s+/).join(' ')))
    .default(fallback);

const timeZone = z
  .string()
  .trim()
  .refine((v) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: v });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone such as UTC or Europe/Berlin');

export interface VariableDoc {
  schema: z.ZodType;
  description: string;
  default?: string;
  example: string;
}

/** Every environment variable tesync reads, with its documentation. */
export const VARIABLES = {
  TE_APP_URL: {
    schema: httpUrl.optional(),
    description: 'App host base URL (without `/api/v1`). Unset: the app source is off.',
    example: 'https://app.example.com',
  },
  TE_APP_API_KEY: {
    schema: secret.optional(),
    description: 'Bearer key for `/api/v1/tokens/{slug}/full`. Unset: research bundles are recorded as `skipped`.',
    example: 'te_live_xxxxxxxxxxxx',
  },
  TE_GATEWAY_URL: {
    schema: httpUrl.optional(),
    description: 'Gateway base URL (without `/v1`). Unset: the gateway source is off.',
    example: 'https://gateway.example.com',
  },
  TE_GATEWAY_API_KEY: {
    schema: secret.optional(),
    description: 'Bearer key for every gateway route. Required when `TE_GATEWAY_URL` is set.',
    example: 'te_live_xxxxxxxxxxxx',
  },
  DATABASE_URL: {
    schema: z
      .string()
      .trim()
      .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
      .optional(),
    description: 'Postgres connection URL. Unset: the embedded Postgres server tesync runs in `TE_DATA_DIR`.',
    example: 'postgres://user:pass@localhost:5432/tesync',
  },
  TE_DATABASE_POOL: {
    schema: positiveInt(1000).default(10),
    description: 'Connections each tesync process opens to `DATABASE_URL` at most. Workers × this stays under the server\'s `max_connections`.',
    default: '10',
    example: '4',
  },
  TE_DATABASE_SESSION_URL: {
    schema: z
      .string()
      .trim()
      .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL')
      .optional(),
    description:
      "A direct URL of `DATABASE_URL`'s database, for what needs a session of its own: advisory locks, `LISTEN`, COPY streams, the Postgres queue backend. For a `DATABASE_URL` through a transaction pooler (PgBouncer's `pool_mode = transaction`), which tesync refuses without it (exit 2); everything else goes on through `DATABASE_URL`. Unset: sessions go through `DATABASE_URL` too.",
    example: 'postgres://user:pass@db-primary:5432/tesync',
  },
  TE_DATA_DIR: {
    schema: z.string().trim().min(1).default('./.tesync'),
    description: "Folder for embedded data: the embedded Postgres server's cluster, password, port and log under `postgres/`.",
    default: './.tesync',
    example: '/var/lib/tesync',
  },
  TE_EMBEDDED_PORT: {
    schema: z.coerce.number({ error: 'must be a port from 1024 to 65535' }).int('must be a port from 1024 to 65535').min(1024, 'must be a port from 1024 to 65535').max(65535, 'must be a port from 1024 to 65535').optional(),
    description:
      "Port of the embedded Postgres server on 127.0.0.1, kept across restarts (a BI tool's saved connection keeps working). Unset: the port it had last time (`TE_DATA_DIR/postgres/port`), a free one from 5433 up the first time, another only when a program other than this folder's server holds it. Set: always this one; a command exits 1 naming this variable when another program holds it.",
    example: '5433',
  },
  TE_EXPORT_DIR: {
    schema: z.string().trim().min(1).optional(),
    description:
      "Folder `tesync export` writes Parquet into when `--to` is not given; set, `tesync worker` exports the daily archives into it on its `export` schedule (`TE_SCHEDULE_EXPORT`).",
    example: '/var/lib/tesync/export',
  },
  REDIS_URL: {
    schema: z
      .string()
      .trim()
      .refine((v) => /^rediss?(\+cluster)?:\/\//.test(v), 'must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL')
      .optional(),
    description:
      'Redis for `tesync worker`: its queues, the shared rate budget and the run counters, under `TE_QUEUE_PREFIX`; `tesync sync` then paces its requests on that shared budget too. A Redis Cluster: `redis+cluster://host1:port1,host2:port2` (`rediss+cluster://` for TLS; any of its nodes, each a seed), its keys under the prefix in braces (one slot). Unset: they live in the warehouse\'s own Postgres (BullMQ\'s Postgres backend, schema `bullmq_<prefix>`), and a worker needs nothing else installed.',
    example: 'redis://redis:6379',
  },
  LOG_LEVEL: {
    schema: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    description: 'pino log level. `debug` also prints stack traces.',
    default: 'info',
    example: 'debug',
  },
  TE_CONCURRENCY: {
    schema: positiveInt(256).default(8),
    description: 'Resources fetched at once per upstream bucket by `tesync sync` (the rate budget still paces them).',
    default: '8',
    example: '16',
  },
  TE_REQUEST_TIMEOUT_MS: {
    schema: positiveInt(600_000).default(30_000),
    description: 'Timeout of one upstream request, headers and body, in milliseconds.',
    default: '30000',
    example: '10000',
  },
  TE_MAX_RESPONSE_BYTES: {
    schema: positiveInt(2 ** 31).default(32 * 1024 * 1024),
    description: 'Largest upstream response body accepted, counted while streaming.',
    default: '33554432',
    example: '67108864',
  },
  TE_MAX_LIST_BYTES: {
    schema: positiveInt(2 ** 40).default(64 * 1024 * 1024),
    description: "Byte budget of one resource's list bodies in one run (every page of it, every read): past it the list stops, stored as incomplete (nothing delisted or removed by it).",
    default: '67108864',
    example: '268435456',
  },
  TE_MAX_ATTEMPTS: {
    schema: positiveInt(20).default(5),
    description: 'Attempts per request for transient failures (network errors, timeouts, 5xx).',
    default: '5',
    example: '3',
  },
  TE_MAX_RATE_WAIT_MS: {
    schema: positiveInt(24 * 3600_000).default(120_000),
    description: 'Longest wait for rate budget a sync sits through; a longer `Retry-After` fails that resource (retried next run).',
    default: '120000',
    example: '600000',
  },
  TE_GATEWAY_HISTORY_PERIODS: {
    schema: listOf(GATEWAY_PERIODS).default(['365d']),
    description: `Gateway history periods to mirror, comma-separated (${GATEWAY_PERIODS.join(', ')}).`,
    default: '365d',
    example: '30d,365d',
  },
  TE_GATEWAY_CHART_TIMEFRAMES: {
    schema: listOf(GATEWAY_TIMEFRAMES).default(['all']),
    description: `Gateway chart timeframes to mirror, comma-separated (${GATEWAY_TIMEFRAMES.join(', ')}); a chart is asked only for those its catalog lists; where it lists none of them, its longest one is mirrored instead and the substitution recorded.`,
    default: 'all',
    example: 'all,30d',
  },
  TE_HISTORY_OVERLAP_DAYS: {
    schema: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').max(365, 'must be at most 365').default(3),
    description: 'Days of app history fetched again before the last day seen, so revised values are picked up.',
    default: '3',
    example: '7',
  },
  TE_HISTORY_FULL_REFETCH_DAYS: {
    schema: z.coerce.number().int('must be a whole number').min(1, 'must be at least 1').max(365, 'must be at most 365').default(7),
    description: 'Every this many days a token\'s app history is fetched whole instead of from the overlap, so revisions older than the overlap are picked up too.',
    default: '7',
    example: '1',
  },
  TE_HISTORY_FROM_PARAM: {
    schema: z.string().trim().regex(/^[A-Za-z][A-Za-z0-9_]{0,39}$/, 'must be a query parameter name').default('from'),
    description: 'Name of the app history "from" date filter (ISO date); an upstream that refuses it gets full fetches.',
    default: 'from',
    example: 'start',
  },
  TE_MARKER_MAX_AGE_HOURS: {
    schema: positiveInt(24 * 365).default(24),
    description: 'Hours an unchanged freshness marker is trusted; older resources are fetched again anyway.',
    default: '24',
    example: '6',
  },
  TE_REQUESTS_RETENTION_DAYS: {
    schema: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more (0: keep forever)').max(36_500, 'must be at most 36500').default(90),
    description: 'Days `sync.requests` (one row per upstream attempt) is kept; older rows are removed in batches as runs end. 0: kept forever. The raw archive and the history are never removed.',
    default: '90',
    example: '30',
  },
  TE_QUEUE_PREFIX: {
    schema: z.string().trim().regex(/^[A-Za-z0-9_.{}-]{1,64}$/, 'must be 1-64 letters, digits, `_`, `.`, `-` (or `{}` for a Redis Cluster hash tag)').default('tesync'),
    description: 'Namespace of the worker queues, schedules, rate budgets and run counters (Redis keys `<prefix>:...`, `{<prefix>}:...` on a Redis Cluster unless it has braces of its own; or the Postgres schema `bullmq_<prefix>`); workers sharing it share the work.',
    default: 'tesync',
    example: 'tesync-staging',
  },
  TE_WORKER_CONCURRENCY: {
    schema: positiveInt(256).default(4),
    description: 'Jobs one `tesync worker` runs at once per upstream bucket queue (the shared rate budget still paces requests).',
    default: '4',
    example: '8',
  },
  TE_WORKER_RATE_WAIT_MS: {
    schema: positiveInt(24 * 3600_000).default(10_000),
    description: 'Longest a worker job waits for rate budget while holding its slot; a longer wait pauses that bucket\'s queue and hands the job back (no attempt used).',
    default: '10000',
    example: '30000',
  },
  TE_WORKER_LOCK_MS: {
    schema: positiveInt(3600_000).default(30_000),
    description: 'Job lock of `tesync worker`, renewed while the job runs; a worker that dies loses its jobs to the others after this.',
    default: '30000',
    example: '60000',
  },
  TE_WORKER_STALLED_INTERVAL_MS: {
    schema: positiveInt(3600_000).default(30_000),
    description: 'How often workers look for stalled jobs (locks of dead workers) and hand them to another worker.',
    default: '30000',
    example: '15000',
  },
  TE_WORKER_SHUTDOWN_GRACE_MS: {
    schema: positiveInt(3600_000).default(25_000),
    description: 'On SIGTERM/SIGINT, how long active jobs may finish; then they are aborted and handed back to the queue. Keep it under the container stop timeout.',
    default: '25000',
    example: '50000',
  },
  TE_METRICS_PORT: {
    schema: z.coerce.number().int('must be a whole number').min(0, 'must be 0-65535').max(65535, 'must be 0-65535').default(9464),
    description: '`tesync worker` serves `/healthz` and Prometheus `/metrics` on this port (0: any free port, logged at start).',
    default: '9464',
    example: '9100',
  },
  TE_STATUS_PAGE: {
    schema: z.enum(['local', 'all', 'off'], { error: 'must be one of local, all, off' }).default('local'),
    description:
      "Who `tesync worker`'s status page (`/`, `/status.json`, `/body/<id>` on `TE_METRICS_PORT`) answers: `local`, requests from this machine only (loopback); `all`, whoever reaches the port (put a proxy with authentication in front); `off`, no page. `/healthz` and `/metrics` answer whoever reaches the port either way. Whichever it is, the page and `/metrics` answer only the names they know (loopback, and `TE_STATUS_HOSTS`).",
    default: 'local',
    example: 'all',
  },
  TE_STATUS_HOSTS: {
    schema: z
      .string()
      .transform((v, ctx): HostName[] => {
        const read = readHostList(v);
        if ('hosts' in read) return read.hosts;
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(read.wrong)} is not a host name, IPv4 address or [IPv6] address, with an optional :port (comma-separated; no wildcards, no user, no path)` });
        return z.NEVER;
      })
      .optional(),
    description:
      'Host names (or `host:port`) the status page and `/metrics` answer besides `localhost`, 127.0.0.0/8 and `[::1]`, comma-separated: the name a proxy or a browser reaches `TE_METRICS_PORT` by, and the names Prometheus scrapes it by (it may also scrape by IP address). Any other `Host` gets 421, so a DNS-rebinding page cannot read the page; `/healthz` answers any. Unset: loopback names only.',
    example: 'status.example.com,worker:9464',
  },
  TE_MIN_COVERAGE: {
    schema: z.coerce.number({ error: 'must be a percentage from 0 to 100' }).min(0, 'must be a percentage from 0 to 100').max(100, 'must be a percentage from 0 to 100').default(100),
    description:
      'The share of what its lists promise (listed tokens\' routes, their charts, periods and timeframes; `analytics.coverage`) below which a group is not on time: on the status page, in notifications, and for `tesync status` checks without `--min-coverage`. Judged once a walk of the group has ended since its lists last changed.',
    default: '100',
    example: '99',
  },
  TE_NOTIFY_URL: {
    schema: notifyUrls.optional(),
    description:
      'Where notifications are POSTed, comma-separated for several (a Slack or Mattermost incoming webhook takes them as they are): a run failed, partial or recovered, a group overdue or back on time, coverage lost or restored, contract drift, a rebinding, a bucket held, a worker lost (docs/operations.md, "Alerts"). A secret: never logged whole. Unset: events are still recorded in `sync.notifications`, and sent nowhere.',
    example: 'https://hooks.slack.com/services/T000/B000/XXXX',
  },
  TE_NOTIFY_SECRET: {
    schema: z.string().trim().min(16, 'looks too short for a signing key (16 characters or more)').optional(),
    description: 'HMAC-SHA256 key of the `X-Tesync-Signature` header each notification carries (`t=<unix seconds>,v1=<hex>`), for the receiver to check. Unset: notifications go unsigned, and workers and syncs warn at start.',
    example: 'a-long-random-string-shared-with-the-receiver',
  },
  TE_NOTIFY_HOLD_MINUTES: {
    schema: positiveInt(24 * 60).default(30),
    description: 'A bucket held by upstream\'s `Retry-After` for longer than this is told (`bucket.held`), and told again when it is free (`bucket.released`).',
    default: '30',
    example: '10',
  },
  TE_SCHEDULE_CATALOG: {
    schema: schedule('0 */6 * * *'),
    description: 'Cron pattern of the walk of metric catalog, token lists and the gateway contract; `off` removes the schedule.',
    default: '0 */6 * * *',
    example: '0 */3 * * *',
  },
  TE_SCHEDULE_SCREENER: {
    schema: schedule('5 * * * *'),
    description: 'Cron pattern of the screener walk (app and gateway screeners, daily archives).',
    default: '5 * * * *',
    example: '*/30 * * * *',
  },
  TE_SCHEDULE_TOKEN_DATA: {
    schema: schedule('30 2 * * *'),
    description: 'Cron pattern of the per-token walk: snapshots, history, charts and gateway pages.',
    default: '30 2 * * *',
    example: '0 3 * * *',
  },
  TE_SCHEDULE_BUNDLES: {
    schema: schedule('30 4 * * *'),
    description: 'Cron pattern of the research bundle walk (needs `TE_APP_API_KEY`).',
    default: '30 4 * * *',
    example: 'off',
  },
  TE_SCHEDULE_EXPORT: {
    schema: schedule('15 0 * * *'),
    description: 'Cron pattern of the export of the daily archives as Parquet into `TE_EXPORT_DIR` (the days new or changed since the last export); only with `TE_EXPORT_DIR` set.',
    default: '15 0 * * *',
    example: '15 1 * * *',
  },
  TE_SCHEDULE_TZ: {
    schema: timeZone.default('UTC'),
    description: 'Time zone of the `TE_SCHEDULE_*` patterns.',
    default: 'UTC',
    example: 'Europe/Berlin',
  },
} as const satisfies Record<string, VariableDoc>;
