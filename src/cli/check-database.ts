// `tesync check`'s look at the warehouse: reached as `tesync status` reaches it, and only read.
// No migration, no binding, no embedded cluster made where none is yet: a check before the first
// sync leaves the database (and TE_DATA_DIR) as it found them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Config } from '../lib/config.ts';
import { ConfigError } from '../lib/errors.ts';
import { describePostgresUrl, openWarehouse, type Warehouse } from '../store/connection.ts';
import type { SessionRoute } from '../store/sessions.ts';
import { layoutOf } from '../store/server/embedded-folder.ts';
import { readMigrationState, type MigrationState } from '../store/schema/migration-state.ts';
import { describeUpstream, identityFromText, sameUpstream, upstreamIdentity } from '../store/books/upstream-identity.ts';
import { SOURCE_URL_VARIABLE } from '../upstream/connect-errors.ts';
import type { Source } from '../upstream/routes.ts';
import type { CheckResult } from './check-upstream.ts';

const database = (variable: string, status: CheckResult['status'], message: string): CheckResult => ({ check: 'database', variable, status, message });
/** A failure sync and status refuse as bad configuration (exit 2). */
const misconfigured = (variable: string, message: string): CheckResult => ({ ...database(variable, 'failed', message), configuration: true });

export async function checkDatabase(config: Pick<Config, 'databaseUrl' | 'databaseSessionUrl' | 'dataDir' | 'app' | 'gateway'>): Promise<CheckResult[]> {
  const variable = config.databaseUrl ? 'DATABASE_URL' : 'TE_DATA_DIR';
  if (!config.databaseUrl && !existsSync(path.join(layoutOf(config.dataDir).data, 'PG_VERSION'))) {
    return [database(variable, 'ok', `no embedded warehouse in ${path.resolve(config.dataDir)} yet: the first sync, demo or migrate makes one`)];
  }
  let warehouse: Warehouse;
  try {
    warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, maxConnections: 2 });
  } catch (err) {
    // A refused login or a missing database is a ConfigError naming its variable; its message, without the name.
    if (err instanceof ConfigError) return [misconfigured(err.variable, err.problem)];
    return [database(variable, 'failed', err instanceof Error ? err.message : String(err))];
  }
  try {
    const state = await readMigrationState(warehouse);
    const out = [judgeSchema(state, warehouse.location, variable)];
    const sessions = sessionsCheck(warehouse.sessions);
    if (sessions) out.push(sessions);
    if (state.state !== 'none') out.push(...judgeBindings(await readBindings(warehouse), config));
    return out;
  } finally {
    await warehouse.close();
  }
}

/**
 * Pure: where tesync's sessions go when that is not simply DATABASE_URL reached directly
 * (src/store/sessions.ts): past a transaction pooler, or through a pooler in session mode.
 */
export function sessionsCheck(route: SessionRoute | undefined): CheckResult | undefined {
  if (route?.variable === 'TE_DATABASE_SESSION_URL') {
    return database('TE_DATABASE_SESSION_URL', 'ok', `Postgres at ${describePostgresUrl(route.url)} keeps sessions and is DATABASE_URL's database: locks, LISTEN, COPY and the Postgres queue backend go there, the rest through DATABASE_URL`);
  }
  if (route?.pool?.kind === 'session pooler') {
    return database('DATABASE_URL', 'ok', 'goes through a pooler in session mode, which keeps a server session per connection: tesync uses it as a direct connection (the Postgres queue backend needs TE_DATABASE_SESSION_URL where the pooler refuses BullMQ\'s startup parameter `options`)');
  }
  return undefined;
}

/** Pure: what the warehouse's schema means for the next sync. */
export function judgeSchema(m: MigrationState & { sqlFilesInStep?: boolean }, location: string, variable: string): CheckResult {
  if (m.state === 'none') return database(variable, 'ok', `${location} reached; no tesync schema in it yet: the first sync (or tesync migrate) makes it`);
  if (m.state === 'ahead') {
    return misconfigured(variable, `${location} holds a newer tesync's schema (migration ${m.applied}; this tesync knows ${m.expected}): run a tesync as new as the one that migrated it`);
  }
  if (m.state === 'behind') return database(variable, 'ok', `${location} reached; a tesync warehouse at migration ${m.applied} of ${m.expected}: the next sync (or tesync migrate) brings it up to date`);
  const views = m.sqlFilesInStep === false ? "; its SQL views differ from this tesync's: tesync migrate brings them in step" : '';
  return database(variable, 'ok', `${location} reached; a tesync warehouse at this tesync's migration ${m.applied} (${m.expectedTag})${views}`);
}

/** The upstream each source of the warehouse is bound to (sync.upstream_bindings), when that table exists. */
async function readBindings(w: Warehouse): Promise<Map<string, string>> {
  const [t] = await w.query<{ table: string | null }>(sql`select to_regclass('sync.upstream_bindings')::text as table`);
  if (!t?.table) return new Map();
  const rows = await w.query<{ source: string; upstream: string }>(sql`select source, upstream from sync.upstream_bindings`);
  return new Map(rows.map((r) => [r.source, r.upstream]));
}

/**
 * Pure: a configured source whose base URL is not the upstream the warehouse is bound to:
 * sync, worker and enqueue would refuse it (exit 2) unless `--force` rebinds the warehouse.
 */
export function judgeBindings(bound: ReadonlyMap<string, string>, config: Pick<Config, 'app' | 'gateway'>): CheckResult[] {
  const out: CheckResult[] = [];
  for (const source of ['app', 'gateway'] as const satisfies readonly Source[]) {
    const url = config[source]?.url;
    const upstream = bound.get(source);
    if (!url || upstream === undefined) continue;
    const configured = upstreamIdentity(url);
    if (sameUpstream(identityFromText(upstream), configured)) continue;
    out.push({
      check: 'binding',
      variable: SOURCE_URL_VARIABLE[source],
      status: 'failed',
      configuration: true,
      message: `the warehouse's ${source} source is bound to ${describeUpstream(upstream)}, not ${configured.upstream}: sync, worker and enqueue refuse it (exit 2) unless --force rebinds it`,
    });
  }
  return out;
}
