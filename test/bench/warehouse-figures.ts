// What the bench reads back from a warehouse after a run: the run's request log (for the
// 429 figures and the split by bucket), the rows of the big tables, what a run wrote to each
// versioned table, and the CPU time of the Postgres processes serving it. Shared by the sync process (sync-process.ts) and the
// orchestrator, which reads the distributed leg's run from outside the workers (worker-leg.ts).
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { rulesOf } from '../../src/schema/warehouse/table-rules.ts';
import { CLOCK_TICK_MS } from './machine.ts';
import { emptyBuckets, type PerBucket, type RequestRow, type TableWrites } from './figures.ts';
import type { BucketName } from './scenario.ts';

export function byBucket(rows: readonly RequestRow[]): PerBucket {
  const n = emptyBuckets();
  for (const r of rows) if (r.bucket in n) n[r.bucket as BucketName]++;
  return n;
}

export function byStatus(rows: readonly RequestRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    const k = r.httpStatus === null ? 'network' : String(r.httpStatus);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

export async function requestRows(w: Warehouse, runId: string): Promise<RequestRow[]> {
  const rows = await w.query<{ bucket: string; http_status: number | null; started_ms: string; duration_ms: number; rate_limit_remaining: number | null }>(
    sql`select bucket, http_status, (extract(epoch from started_at) * 1000)::bigint::text as started_ms, duration_ms, rate_limit_remaining from sync.requests where run_id = ${runId}`,
  );
  return rows.map((r) => ({
    bucket: r.bucket,
    httpStatus: r.http_status === null ? null : Number(r.http_status),
    startedAtMs: Number(r.started_ms),
    durationMs: Number(r.duration_ms),
    rateLimitRemaining: r.rate_limit_remaining === null ? null : Number(r.rate_limit_remaining),
  }));
}

const BIG_TABLES = ['app.metric_history', 'app.chart_points', 'gateway.chart_points', 'gateway.trend_points', 'sync.raw_responses'];

export async function tableRows(w: Warehouse): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of BIG_TABLES) {
    const [r] = await w.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${t}`));
    out[t] = Number(r?.n ?? 0);
  }
  return out;
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/** A versioned table's names for the queries below: `T`, `T_history`, its key and compared columns. */
function versionedShape(table: PgTable): { name: string; qualified: string; history: string; key: string[]; compared: string[] } {
  const { schema, name } = getTableConfig(table);
  const s = schema ?? 'public';
  const rules = rulesOf(table);
  // By name: `T_history` has `T`'s column names (src/schema/warehouse/history.ts).
  return { name: `${s}.${name}`, qualified: `${quote(s)}.${quote(name)}`, history: `${quote(s)}.${quote(`${name}_history`)}`, key: rules.key.map((c) => c.name), compared: rules.compared.map((c) => c.name) };
}

/**
 * What run `runId`, started at `since`, wrote to every versioned table (src/schema/warehouse/history.ts),
 * for the tables where any count is not 0.
 *
 * Cost: `T` has no index on run_id, so `written` is a sequential scan of `T`, one count per
 * table (as tableRows does for the big tables); `T_history`'s index leads with the key, not
 * known_to, so `versions` scans `T_history`, which holds only what later runs changed. The
 * unchanged check starts from the versions closed since `since` and reaches `T` by its primary
 * key, so it touches only the run's rows. The caller measures the time (outside the phase).
 */
export async function tableWrites(w: Warehouse, runId: string, since: Date): Promise<Record<string, TableWrites>> {
  const out: Record<string, TableWrites> = {};
  const at = since.toISOString();
  for (const table of VERSIONED) {
    const t = versionedShape(table);
    const [written] = await w.query<{ n: string }>(sql`select count(*)::text as n from ${sql.raw(t.qualified)} where run_id = ${runId}::uuid`);
    const [versions] = await w.query<{ n: string }>(sql`select count(*)::text as n from ${sql.raw(t.history)} where known_to >= ${at}::timestamptz`);
    const counts: TableWrites = { written: Number(written?.n ?? 0), versions: Number(versions?.n ?? 0), rewrittenUnchanged: 0, onlyAsOf: 0 };
    if (counts.written > 0 && counts.versions > 0) {
      const on = t.key.map((k) => `t.${quote(k)} = h.${quote(k)}`).join(' and ');
      const same = (columns: readonly string[]) =>
        columns.length === 0 ? 'true' : `row(${columns.map((c) => `t.${quote(c)}::text`).join(', ')}) is not distinct from row(${columns.map((c) => `h.${quote(c)}::text`).join(', ')})`;
      const asOf = t.compared.includes('as_of');
      const onlyAsOf = asOf ? `${same(t.compared.filter((c) => c !== 'as_of'))} and t."as_of" is distinct from h."as_of"` : 'false';
      const [r] = await w.query<{ unchanged: string; only_as_of: string }>(
        sql`select count(*) filter (where ${sql.raw(same(t.compared))})::text as unchanged, count(*) filter (where ${sql.raw(onlyAsOf)})::text as only_as_of
            from ${sql.raw(t.history)} h join ${sql.raw(t.qualified)} t on ${sql.raw(on)}
            where h.known_to >= ${at}::timestamptz and t.run_id = ${runId}::uuid and t.fetched_at = h.known_to`,
      );
      counts.rewrittenUnchanged = Number(r?.unchanged ?? 0);
      counts.onlyAsOf = Number(r?.only_as_of ?? 0);
    }
    if (counts.written || counts.versions || counts.rewrittenUnchanged) out[t.name] = counts;
  }
  return out;
}

/**
 * Clock ticks of each Postgres process serving this database, read from /proc (same machine):
 * the backends of this database on a shared server; every process pg_stat_activity lists (the
 * checkpointer, the WAL writer... included) on the embedded server, which is tesync's alone.
 */
export async function postgresCpu(w: Warehouse): Promise<Map<number, number> | null> {
  try {
    const rows = await w.query<{ pid: number }>(w.kind === 'postgres' ? sql`select pid from pg_stat_activity where datname = current_database()` : sql`select pid from pg_stat_activity`);
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      const ticks = processTicks(Number(pid));
      if (ticks !== null) out.set(Number(pid), ticks);
    }
    return out;
  } catch {
    return null;
  }
}

/** User and system clock ticks of a process so far; null when it is gone. */
export function processTicks(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    // Gone since it was listed (an autovacuum worker, a closed connection): not counted.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return ticks * CLOCK_TICK_MS;
}

/** The upstream's response bytes run `runId` logged (sync.requests.bytes; a request with no body counts 0). */
export async function responseBytes(w: Warehouse, runId: string): Promise<number> {
  const [r] = await w.query<{ n: string | null }>(sql`select coalesce(sum(bytes), 0)::text as n from sync.requests where run_id = ${runId}`);
  return Number(r?.n ?? 0);
}

/** The database's size on disk (pg_database_size: tables, indexes, TOAST; not the server's WAL) and the archive's (sync.raw_responses with its TOAST and indexes). */
export async function databaseBytes(w: Warehouse): Promise<{ database: number; archive: number }> {
  const [r] = await w.query<{ database: string; archive: string }>(
    sql`select pg_database_size(current_database())::text as database, pg_total_relation_size('sync.raw_responses')::text as archive`,
  );
  return { database: Number(r?.database ?? 0), archive: Number(r?.archive ?? 0) };
}

/**
 * The most sessions on this database at once, sampled every `everyMs` until `stop()` (the
 * sampler's own session not counted): what the workers hold of `max_connections`.
 */
export function sessionPeak(w: Warehouse, everyMs = 250): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const [r] = await w.query<{ n: string }>(sql`select count(*)::text as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
        peak = Math.max(peak, Number(r?.n ?? 0));
      } catch {
        // A reading missed (the server busy): the next one counts.
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}
