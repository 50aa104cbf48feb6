// One warehouse interface, one way to reach it: postgres.js, to the user's Postgres when
// DATABASE_URL is set, otherwise to the embedded Postgres server tesync runs in TE_DATA_DIR
// (embedded-server.ts), which every command started without DATABASE_URL shares. Sessions
// (locks, LISTEN, COPY) go where sessions.ts routes them: TE_DATABASE_SESSION_URL when a
// transaction pooler stands in DATABASE_URL's way.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import * as schema from '../schema/warehouse/index.ts';
import { databaseUrlProblem, urlSecrets } from '../lib/config.ts';
import { ConfigError, WarehouseError } from '../lib/errors.ts';
import { scrub } from '../lib/logger.ts';
import { applyComments } from './schema/comments.ts';
import { acquireEmbeddedServer } from './server/embedded-server.ts';
import { applySqlFiles } from './schema/sql-files.ts';
import { keepSessionDefaults } from './schema/session-defaults.ts';
import { routeSessions, type SessionRoute } from './sessions.ts';
import type { WarehouseSessionOptions } from '../ports/warehouse-session.ts';

export type WarehouseSchema = typeof schema;
export type Db = PgDatabase<PgQueryResultHKT, WarehouseSchema>;

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

const EMBEDDED_POOL = 4;
const CONNECT_TIMEOUT_S = 10;

// Any fixed 64-bit number: every tesync process migrating the same database takes it.
const MIGRATION_LOCK = 7_281_190_437_355_201n;

export interface Warehouse {
  /** `postgres`: the user's own (DATABASE_URL); `embedded`: the server tesync runs in TE_DATA_DIR. */
  readonly kind: 'postgres' | 'embedded';
  /** Where it is, for messages: host/port/database or the folder; never a password. */
  readonly location: string;
  readonly db: Db;
  /** Runs raw SQL and returns plain row objects. */
  query<T = Record<string, unknown>>(statement: SQL): Promise<T[]>;
  /**
   * Applies the drizzle migrations, then the SQL files that changed (sql-files.ts), then the
   * tables' descriptions (`COMMENT ON`, comments.ts); idempotent, and safe when several
   * processes start at once.
   */
  migrate(): Promise<void>;
  /** Closes the pool (and leaves the embedded server: the last process to leave stops it). */
  close(): Promise<void>;
  /** The embedded server's complete URL, password included: for `tesync sql` to print, never a log. */
  readonly embeddedUrl?: string;
  /**
   * A connection of its own, outside the pool, for session state that must last (an advisory
   * lock held for a whole run): never handed to another caller, never closed for its age or
   * idleness. postgres.js reconnects it lazily when it drops, as a new session: a caller that
   * holds session state watches `onClose` and checks its backend pid. Close it before close().
   */
  session(options: WarehouseSessionOptions): postgres.Sql;
  /** Where sessions go (a user's Postgres only): DATABASE_URL, or TE_DATABASE_SESSION_URL; its URL holds the password, never a log. */
  readonly sessions?: SessionRoute;
}

export interface WarehouseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** postgres.js pool size, whichever the Postgres. */
  maxConnections?: number;
  /** The pool size for `databaseUrl` (TE_DATABASE_POOL); the embedded server keeps its own. */
  databasePool?: number;
  /** TE_DATABASE_SESSION_URL: a direct URL of `databaseUrl`'s database, for sessions. */
  sessionUrl?: string | undefined;
}

export async function openWarehouse(options: WarehouseOptions): Promise<Warehouse> {
  if (options.databaseUrl) {
    const url = options.databaseUrl;
    // loadConfig refuses such a URL already; a caller that did not load one is told the same,
    // not the driver's `URI malformed`.
    const wrong = databaseUrlProblem(url);
    if (wrong) throw new ConfigError('DATABASE_URL', wrong);
    const sessionUrl = options.sessionUrl;
    const sessionWrong = sessionUrl ? databaseUrlProblem(sessionUrl) : undefined;
    if (sessionWrong) throw new ConfigError('TE_DATABASE_SESSION_URL', sessionWrong);
    return openPostgres(url, options.maxConnections ?? options.databasePool ?? 10, `Postgres at ${describePostgresUrl(url)}`, (err) => databaseUrlFailure(err, url), { sessionUrl });
  }
  const server = await acquireEmbeddedServer(options.dataDir);
  try {
    // Each connection is a server process on the user's machine: fewer than for a Postgres of
    // one's own, where writes are not what a sync waits for either.
    const w = await openPostgres(server.url, options.maxConnections ?? EMBEDDED_POOL, server.location, (err) => embeddedFailure(err, server.location, server.url));
    return {
      ...w,
      kind: 'embedded',
      embeddedUrl: server.url,
      async close() {
        try {
          await w.close();
        } finally {
          await server.release();
        }
      },
    };
  } catch (err) {
    await server.release();
    throw err;
  }
}

/** The tag of the last drizzle migration: the schema state the SQL files stand on. */
function lastMigration(): string {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS_FOLDER}/meta/_journal.json`, 'utf8')) as { entries: { tag: string }[] };
  return journal.entries.at(-1)?.tag ?? '';
}

/** host:port/database of a Postgres URL, without user or password. */
export function describePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'an unparseable DATABASE_URL';
  }
}

// Every connection tesync opens works in UTC, whatever the server's or the database's
// TimeZone: a day is a UTC day, and no DST change moves one.
const UTC = { TimeZone: 'UTC' };

/** `route`: a user's Postgres, whose sessions are routed (sessions.ts); the embedded server is reached directly. */
async function openPostgres(url: string, max: number, location: string, failure: (err: unknown) => Error, route?: { sessionUrl: string | undefined }): Promise<Warehouse> {
  const sessionUrl = route?.sessionUrl;
  const client = postgres(url, {
    // migrate() holds one connection for its lock while the migrator runs on another.
    max: Math.max(2, max),
    onnotice: () => {},
    connect_timeout: CONNECT_TIMEOUT_S,
    // Nothing but us reads these; keep numeric/bigint exact as strings (the default).
    connection: UTC,
    // Past a transaction pooler each transaction runs on any server session: a statement
    // prepared on one is unknown to the next (PgBouncer before 1.21 keeps none), and a
    // statement sent before the last one's answer (postgres.js pipelines up to 100) is lost
    // when the pooler hands the server session on at that answer: the query never returns.
    // (`max_pipeline` is postgres.js's own option, missing from its types.)
    ...(sessionUrl ? { prepare: false, ...{ max_pipeline: 0 } } : {}),
  });
  let sessions: SessionRoute | undefined;
  try {
    const first = await client<{ pid: number }[]>`select pg_backend_pid() as pid`;
    if (route) sessions = await routeSessions(client, first, url, sessionUrl, describePostgresUrl);
  } catch (err) {
    await client.end({ timeout: 1 }).catch(() => {});
    throw err instanceof ConfigError ? err : failure(err);
  }
  const sessionsUrl = sessions?.url ?? url;
  const db = drizzlePostgres({ client, schema }) as unknown as Db;
  return {
    kind: 'postgres',
    location,
    db,
    ...(sessions ? { sessions } : {}),
    query: async <T>(statement: SQL) => rowsOf<T>(await db.execute(statement)),
    async migrate() {
      // The drizzle migrator takes no lock of its own: hold an advisory lock on one
      // reserved connection while the migrator runs on the pool (the session URL's, when
      // sessions go elsewhere: the lock is a session's).
      const own = sessionsUrl === url ? undefined : postgres(sessionsUrl, { max: 2, onnotice: () => {}, connect_timeout: CONNECT_TIMEOUT_S, connection: UTC });
      const base = own ?? client;
      const lock = await base.reserve();
      try {
        await lock`select pg_advisory_lock(${MIGRATION_LOCK.toString()}::bigint)`;
        await migratePostgres(drizzlePostgres({ client: base }), { migrationsFolder: MIGRATIONS_FOLDER });
        await applySqlFiles(lock, lastMigration());
        // Descriptions are metadata: kept in step at every migrate, no migration per wording.
        await applyComments(lock);
        // So are the database's session defaults (jit = off), which no dump or template carries.
        await keepSessionDefaults(lock);
      } finally {
        await lock`select pg_advisory_unlock(${MIGRATION_LOCK.toString()}::bigint)`.catch(() => {});
        lock.release();
        await own?.end({ timeout: 5 });
      }
    },
    session: (options) => openSession(sessionsUrl, options),
    close: () => client.end({ timeout: 5 }),
  };
}

function openSession(url: string, options: WarehouseSessionOptions): postgres.Sql {
  return postgres(url, {
    max: 1,
    // postgres.js ends a connection after 30-60 min by default, and with it its session (0: never).
    max_lifetime: 0,
    idle_timeout: 0,
    connect_timeout: CONNECT_TIMEOUT_S,
    onnotice: () => {},
    connection: { ...UTC, application_name: options.name.slice(0, 63) },
    ...(options.onClose ? { onclose: () => options.onClose?.() } : {}),
    // postgres.js's own option (its sql.listen uses it), missing from its types.
    ...(options.onNotify ? { onnotify: options.onNotify } : {}),
  });
}

// --- Why the first connection failed ---------------------------------------------------
//
// One line naming the variable to look at and where it points (host:port/database, never the
// password), and the cause: the server refused the login, has no such database, or was not
// reached at all. A login or database that is wrong is bad configuration (exit 2); a server
// that does not answer may answer later (exit 1).

/** SQLSTATEs of a server that was reached and refused the login (invalid_password, invalid_authorization_specification). */
const LOGIN_REFUSED = new Set(['28P01', '28000']);
/** invalid_catalog_name: the database named does not exist. */
const NO_DATABASE = '3D000';

/** Why a connection to a server was not made, as a few words (the error's code kept, in brackets). */
export function unreachableCause(err: unknown): string {
  const e = err as { code?: unknown; hostname?: unknown; address?: unknown; port?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED): nothing listens on that host and port';
    case 'ENOTFOUND':
      return `no such host${typeof e?.hostname === 'string' ? ` "${e.hostname}"` : ''} (ENOTFOUND)`;
    case 'EAI_AGAIN':
      return `the host name could not be looked up now${typeof e?.hostname === 'string' ? ` ("${e.hostname}")` : ''} (EAI_AGAIN)`;
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return `no answer within ${CONNECT_TIMEOUT_S} s (${code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to the host (${code})`;
    case 'ECONNRESET':
    case 'CONNECTION_CLOSED':
    case 'CONNECTION_ENDED':
    case 'CONNECTION_DESTROYED':
      return `the connection was closed before a Postgres server answered (${code}): is it a Postgres server on that port?`;
    default:
      return reason(err);
  }
}

function sqlState(err: unknown): string | undefined {
  const e = err as { name?: unknown; code?: unknown } | null;
  return e?.name === 'PostgresError' && typeof e.code === 'string' ? e.code : undefined;
}

/** `text` without the URL's password, in any form it may take. */
function withoutPassword(text: string, url: string): string {
  return scrub(text, urlSecrets(url));
}

/** The first connection to DATABASE_URL failed: a configuration error (login, database) or a server not reached. */
export function databaseUrlFailure(err: unknown, url: string): Error {
  const where = describePostgresUrl(url);
  const state = sqlState(err);
  const said = withoutPassword(reason(err), url);
  if (state && LOGIN_REFUSED.has(state)) {
    const what = state === '28P01' ? 'check the user name and password in DATABASE_URL' : 'check the user name in DATABASE_URL (and the server\'s pg_hba.conf)';
    return new ConfigError('DATABASE_URL', `Postgres at ${where} was reached but refused the login: ${said}; ${what}`);
  }
  if (state === NO_DATABASE) {
    const slash = where.indexOf('/');
    const hostPort = slash === -1 ? where : where.slice(0, slash);
    return new ConfigError('DATABASE_URL', `Postgres at ${hostPort} was reached, but ${said}: create it, or name an existing database in DATABASE_URL`);
  }
  if (state) return new WarehouseError(withoutPassword(`Postgres at ${where} (DATABASE_URL) was reached but refused the connection: ${said}`, url));
  return new WarehouseError(withoutPassword(`cannot reach Postgres at ${where} (DATABASE_URL): ${unreachableCause(err)}`, url));
}

/** The first connection to the embedded server failed: it runs (it was just started or found), so this is a server fault, not configuration. */
function embeddedFailure(err: unknown, location: string, url: string): Error {
  const state = sqlState(err);
  const cause = state ? reason(err) : unreachableCause(err);
  return new WarehouseError(withoutPassword(`cannot connect to ${location} (TE_DATA_DIR): ${cause}`, url));
}

/** The rows of a drizzle `execute` result (postgres.js: the array itself; others: `rows`). */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

export function reason(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
