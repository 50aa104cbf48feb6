// Per-resource bookkeeping. A success is written in the same transaction as the rows it
// describes, so a crash never leaves rows without state or state without rows.
import { and, eq, like, sql } from 'drizzle-orm';
import { resourceState } from '../../schema/warehouse/sync.ts';
import type { Db } from './connection.ts';
import type { Executor } from './upsert.ts';

export type ResourceStateRow = typeof resourceState.$inferSelect;

export interface ResourceKey {
  source: string;
  resource: string;
}

export interface SuccessState extends ResourceKey {
  kind: string;
  status: string;
  runId: string;
  at: Date;
  freshness?: string | null;
  asOf?: Date | null;
  hash?: string | null;
  etag?: string | null;
  rowCount?: number | null;
  details?: unknown;
}

export async function readState(db: Executor, key: ResourceKey): Promise<ResourceStateRow | undefined> {
  const rows = await db
    .select()
    .from(resourceState)
    .where(and(eq(resourceState.source, key.source), eq(resourceState.resource, key.resource)))
    .limit(1);
  return rows[0];
}

/** Every state of a source whose resource starts with `prefix`, by resource. */
export async function readStates(db: Executor, source: string, prefix: string): Promise<Map<string, ResourceStateRow>> {
  const rows = await db
    .select()
    .from(resourceState)
    .where(and(eq(resourceState.source, source), like(resourceState.resource, `${prefix.replace(/[\\%_]/g, '\\$&')}%`)));
  return new Map(rows.map((r) => [r.resource, r]));
}

/** Records a successful fetch; call inside the transaction that wrote the rows. */
export async function writeSuccess(db: Executor, s: SuccessState): Promise<void> {
  const values = {
    source: s.source,
    resource: s.resource,
    kind: s.kind,
    status: s.status,
    lastAttemptAt: s.at,
    lastSuccessAt: s.at,
    verifiedAt: s.at,
    lastError: null,
    lastRunId: s.runId,
    freshness: s.freshness ?? null,
    asOf: s.asOf ?? null,
    hash: s.hash ?? null,
    etag: s.etag ?? null,
    rowCount: s.rowCount ?? null,
    consecutiveFailures: 0,
    details: s.details ?? null,
    active: true,
  };
  await db
    .insert(resourceState)
    .values(values)
    .onConflictDoUpdate({ target: [resourceState.source, resourceState.resource], set: values });
}

/** Records a failed attempt; the last success and its markers are kept. */
export async function writeFailure(
  db: Db,
  f: ResourceKey & { kind: string; status: string; error: string; runId: string; at: Date; details?: unknown },
): Promise<void> {
  await db
    .insert(resourceState)
    .values({
      source: f.source,
      resource: f.resource,
      kind: f.kind,
      status: f.status,
      lastAttemptAt: f.at,
      lastError: f.error,
      lastRunId: f.runId,
      consecutiveFailures: 1,
      details: f.details ?? null,
    })
    .onConflictDoUpdate({
      target: [resourceState.source, resourceState.resource],
      set: {
        kind: f.kind,
        status: f.status,
        lastAttemptAt: f.at,
        lastError: f.error,
        lastRunId: f.runId,
        consecutiveFailures: sql`${resourceState.consecutiveFailures} + 1`,
        details: f.details === undefined ? sql`${resourceState.details}` : (f.details as never),
      },
    });
}

/** The marker said nothing changed: confirmed current without a fetch; the last fetch's markers stay. */
export async function writeUnchanged(db: Executor, key: ResourceKey & { runId: string; at: Date }): Promise<void> {
  await db
    .update(resourceState)
    .set({ status: 'unchanged', lastAttemptAt: key.at, verifiedAt: key.at, lastRunId: key.runId, lastError: null, consecutiveFailures: 0 })
    .where(and(eq(resourceState.source, key.source), eq(resourceState.resource, key.resource)));
}
