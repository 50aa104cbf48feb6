// Which URL tesync's sessions go through, and whether a URL keeps them.
//
// tesync holds state on a session of its own: advisory locks for a whole run (the source
// locks, the export's, the migration's), LISTEN (the Postgres budget store, BullMQ's Postgres
// backend), COPY streams in an exported snapshot, BullMQ's `search_path`. A pooler that hands a
// server connection to other clients between transactions (PgBouncer's pool_mode =
// transaction or statement) breaks each of them, silently: a lock stays with a server
// connection other clients go on using. So a URL is trusted with sessions only on positive
// evidence (judgeSessions), and otherwise tesync needs TE_DATABASE_SESSION_URL, a direct URL
// of the same database, for them: deny by default. The rest (the pool's reads and writes, each
// transaction whole) goes through DATABASE_URL whatever it is.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { ConfigError } from '../lib/errors.ts';

/** How a URL's connections map onto server sessions. */
export type SessionVerdict =
  /** The backend that answers is the one the server named at login: nothing shares it. */
  | { kind: 'direct' }
  /** Through a pooler that keeps one server session per client connection (PgBouncer's session mode). */
  | { kind: 'session pooler' }
  /** Server sessions shared between clients, or no proof that they are not: `why`, in words. */
  | { kind: 'shared'; why: string };

/** Where sessions go, as `openWarehouse` decided. */
export interface SessionRoute {
  /** The URL of `Warehouse.session` and of the Postgres queue backend. */
  url: string;
  /** The variable naming it, for messages. */
  variable: 'DATABASE_URL' | 'TE_DATABASE_SESSION_URL';
  /** DATABASE_URL's verdict; undefined when TE_DATABASE_SESSION_URL is set (it is not asked then). */
  pool?: SessionVerdict;
}

type KeyedRows = readonly { pid: number }[] & { state?: { pid?: number | null; secret?: number | null } };

/**
 * Pure: whether the backend that ran a `select pg_backend_pid() as pid` is the one the server
 * named at login (the BackendKeyData message, which postgres.js keeps as the result's
 * `state`). A pooler sends a key of its own (it answers cancel requests itself); a TCP proxy
 * passes the server's through and keeps one server connection per client: a session too.
 */
export function answeredByLoginBackend(rows: KeyedRows): boolean {
  const pid = rows[0]?.pid;
  return typeof pid === 'number' && rows.state?.pid === pid;
}

const PROBE = { max: 1, prepare: false, onnotice: () => {}, connect_timeout: 10, idle_timeout: 0, max_lifetime: 0 } as const;

/** Longest wait for a terminated backend to leave pg_stat_activity. */
const GONE_WAIT_MS = 5000;
/** A pooler's event loop sees the terminated server connection close before the next statement. */
const POOLER_NOTICE_MS = 100;

/**
 * Whether `url`'s connections keep a server session each. Direct when the login backend
 * answers; otherwise, through a pooler, a session only when a probe connection's backend is
 * idle under the probe's own name (no other client on it) and the connection dies when that
 * backend is terminated (the probe's own: nobody else's session is touched). Anything else,
 * and anything that cannot be told, is `shared`.
 */
export async function judgeSessions(url: string): Promise<SessionVerdict> {
  const name = `tesync probe ${randomBytes(4).toString('hex')}`;
  const a = postgres(url, { ...PROBE, connection: { TimeZone: 'UTC', application_name: `${name} a` } });
  const b = postgres(url, { ...PROBE, connection: { TimeZone: 'UTC', application_name: `${name} b` } });
  const shared = (why: string): SessionVerdict => ({ kind: 'shared', why });
  try {
    const first = await a<{ pid: number }[]>`select pg_backend_pid() as pid`;
    if (answeredByLoginBackend(first)) return { kind: 'direct' };
    const pid = first[0]!.pid;
    // A copy: postgres.js keeps one key object per connection slot, rewritten at each login.
    const key = { pid: first.state?.pid, secret: first.state?.secret };
    // A pooler may add to the name (PgBouncer's application_name_add_host): its start is ours.
    const [seen] = await b<{ me: number; alone: boolean | null }[]>`
      select pg_backend_pid() as me,
             (select state = 'idle' and left(application_name, ${name.length + 2}) = ${`${name} a`}
                from pg_stat_activity where pid = ${pid}) as alone`;
    if (seen!.me === pid) return shared('two of its connections were served by one server session at once');
    if (seen!.alone !== true) return shared("a connection's server session was not its own between two statements");
    try {
      await b`select pg_terminate_backend(${pid})`;
      for (const until = Date.now() + GONE_WAIT_MS; ; ) {
        const [r] = await b<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`;
        if (r!.n === 0) break;
        if (Date.now() > until) return shared('a terminated server session did not end: whether its connection would go with it cannot be told');
        await delay(20);
      }
    } catch (err) {
      return shared(`whether a connection goes with its server session cannot be told (${(err as Error).message})`);
    }
    await delay(POOLER_NOTICE_MS);
    try {
      const again = await a<{ pid: number }[]>`select pg_backend_pid() as pid`;
      // The same connection (its login key) on another server session: the pooler moved it.
      if (again.state?.pid === key.pid && again.state?.secret === key.secret) return shared('a connection outlived its server session: its next statement ran on another one');
    } catch {
      // The connection ended with its server session: what a session is.
    }
    return { kind: 'session pooler' };
  } finally {
    await Promise.all([a.end({ timeout: 1 }), b.end({ timeout: 1 })]).catch(() => {});
  }
}

/** What names a database on a server, the same through a pooler as directly. */
async function databaseIdentity(sql: postgres.Sql): Promise<string> {
  const [r] = await sql<{ id: string }[]>`
    select current_database() || ' (oid ' || (select oid from pg_database where datname = current_database())::text
           || ') of the server up since ' || pg_postmaster_start_time()::text as id`;
  return r!.id;
}

/**
 * Where tesync's sessions go, for a DATABASE_URL whose pool `pool` has answered `first`
 * (`select pg_backend_pid() as pid`): TE_DATABASE_SESSION_URL when set (a URL that keeps
 * sessions, into the same database), else DATABASE_URL when it keeps them. Throws a
 * ConfigError naming TE_DATABASE_SESSION_URL otherwise. `where` describes a URL for messages.
 */
export async function routeSessions(pool: postgres.Sql, first: KeyedRows, url: string, sessionUrl: string | undefined, where: (url: string) => string): Promise<SessionRoute> {
  if (sessionUrl) {
    const verdict = await judgeSessions(sessionUrl);
    if (verdict.kind === 'shared') {
      throw new ConfigError('TE_DATABASE_SESSION_URL', `reaches Postgres at ${where(sessionUrl)} through a pooler that shares server sessions (${verdict.why}): it must reach Postgres directly, or through a pooler in session mode`);
    }
    const direct = postgres(sessionUrl, { ...PROBE, connection: { TimeZone: 'UTC' } });
    try {
      const [mine, theirs] = await Promise.all([databaseIdentity(direct), databaseIdentity(pool)]);
      if (mine !== theirs) throw new ConfigError('TE_DATABASE_SESSION_URL', `reaches another database than DATABASE_URL: ${mine}, not ${theirs}; it must name DATABASE_URL's database, directly`);
    } finally {
      await direct.end({ timeout: 1 }).catch(() => {});
    }
    return { url: sessionUrl, variable: 'TE_DATABASE_SESSION_URL' };
  }
  const verdict: SessionVerdict = answeredByLoginBackend(first) ? { kind: 'direct' } : await judgeSessions(url);
  if (verdict.kind === 'shared') {
    throw new ConfigError(
      'TE_DATABASE_SESSION_URL',
      `is needed: DATABASE_URL reaches Postgres at ${where(url)} through a pooler that does not keep a server session per connection (PgBouncer's pool_mode = transaction or statement: ${verdict.why}), and tesync holds advisory locks, LISTENs and COPY streams on sessions of its own. Set TE_DATABASE_SESSION_URL to a direct URL of the same database (sessions go through it, everything else through DATABASE_URL), or use the pooler's session mode`,
    );
  }
  return { url, variable: 'DATABASE_URL', pool: verdict };
}
