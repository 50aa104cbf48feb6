// Field-level schema drift: the field names each route's responses carry, in
// sync.resource_fields (whose column `kind` holds the route name), and a sync.contract_changes
// row (`change = 'fields'`) plus one warn line containing "drift" when they change.
//
// - Baseline: the first run that receives a route establishes its fields; nothing is drift.
// - Added: a field first seen on a route in a later run than its baseline, or a field recorded
//   removed that comes back.
// - Removed: a field missing from every response of two consecutive runs that received the
//   route, judged when the route is received in the run after those two. Comparing whole runs'
//   unions keeps an optional field that some responses leave out from counting as removed; two
//   runs keep a form that changed for one run only from reporting removed-then-added. Runs
//   differ in how much they fetch (`--token`, unchanged resources skipped): the absence counts
//   only when one of those two runs received at least as many distinct responses of the route
//   (sync.requests) as the run that last saw the field, and only once both have finished.
//   Judged on the next run, not at the end of a run: sync.runs is finished in two places
//   (`tesync sync`, the BullMQ finish job), neither with a logger for this.
//
// Cost: each process keeps the fields known per route (loaded once per route) and the ones it
// has marked seen in each run. A response whose fields are all known and already marked in its
// run costs no query. Per process, run and route: one claim of the route (plus one query when a
// removal may be due) and one update marking its fields seen; then writes only for new fields.
// Several processes seeing one new field at once record it once (`on conflict do nothing`,
// row locks). Errors are logged and swallowed: drift bookkeeping never fails a job.
import { and, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import { contractChanges, resourceFields, resourceKinds, runs } from '../../schema/warehouse/sync.ts';
import type { Logger } from '../../lib/logger.ts';
import { rowsOf, type Db, type Warehouse } from '../connection.ts';

export interface FieldSighting {
  source: string;
  /** A route name, e.g. `app.history`. */
  route: string;
  /** The route's path template (`/api/v1/tokens/{slug}`): counts a run's responses of the route in sync.requests. */
  template: string;
  runId: string;
  at: Date;
  /** The response's field names (src/engine/fetch/fields.ts). */
  fields: readonly string[];
  /** The response (path and query, no host) and its body hash, kept with added fields. */
  path: string;
  sha256: string | null;
}

export interface FieldDrift {
  source: string;
  route: string;
  added: string[];
  removed: string[];
}

/** How many runs a field must be missing from, in a row, to count as removed. */
const ABSENT_RUNS = 2;
/** Runs whose per-run marks a process keeps per route (runs may overlap under BullMQ). */
const RUNS_KEPT = 4;

interface RunMarks {
  /** The route's claim for this run (and any removal judged with it), once per process. */
  started: Promise<void>;
  /** Fields this process has marked seen in this run. */
  marked: Set<string>;
}

interface RouteCache {
  loaded: Promise<void>;
  baselineRunId: string | null;
  /** Known fields; true when recorded removed. */
  known: Map<string, boolean>;
  runs: Map<string, RunMarks>;
}

const caches = new WeakMap<Warehouse, Map<string, RouteCache>>();

/** Records the fields of one validated response; logs and returns what drifted. Never throws. */
export async function recordFieldDrift(warehouse: Warehouse, logger: Logger, s: FieldSighting): Promise<FieldDrift[]> {
  let perRoute = caches.get(warehouse);
  if (!perRoute) caches.set(warehouse, (perRoute = new Map()));
  const key = `${s.source}\u0000${s.route}`;
  const drifts: FieldDrift[] = [];
  try {
    let cache = perRoute.get(key);
    if (!cache) {
      const fresh: RouteCache = { loaded: Promise.resolve(), baselineRunId: null, known: new Map(), runs: new Map() };
      fresh.loaded = load(warehouse.db, s, fresh);
      perRoute.set(key, (cache = fresh));
    }
    await cache.loaded;
    let marks = cache.runs.get(s.runId);
    if (!marks) {
      marks = { started: startRun(warehouse.db, s, cache, drifts), marked: new Set() };
      cache.runs.set(s.runId, marks);
      for (const old of cache.runs.keys()) if (cache.runs.size > RUNS_KEPT && old !== s.runId) cache.runs.delete(old);
    }
    await marks.started;
    const unmarked = s.fields.filter((f) => !marks.marked.has(f));
    if (unmarked.length > 0) {
      // Claimed before the write: concurrent responses of the route do not write them again
      // (on an error the whole cache of the route is dropped, so nothing is lost).
      for (const f of unmarked) marks.marked.add(f);
      const added = await markSeen(warehouse.db, s, cache, unmarked);
      if (added.length > 0) drifts.push({ source: s.source, route: s.route, added, removed: [] });
    }
  } catch (err) {
    // Forget what this process knows of the route: the next response loads it again.
    perRoute.delete(key);
    logger.error({ err, source: s.source, kind: s.route }, 'could not record field drift; the response is kept as usual');
  }
  for (const d of drifts) {
    const fields = d.added.length > 0 ? { added: d.added } : { removed: d.removed };
    // The log field keeps its name (`kind`), as sync.contract_changes does: what operators match on.
    logger.warn({ source: d.source, kind: d.route, ...fields }, `schema drift: ${d.route} fields ${d.added.length > 0 ? 'added' : 'removed'}`);
  }
  return drifts;
}

async function load(db: Db, s: FieldSighting, cache: RouteCache): Promise<void> {
  const [seen] = await db
    .select({ baselineRunId: resourceKinds.baselineRunId })
    .from(resourceKinds)
    .where(and(eq(resourceKinds.source, s.source), eq(resourceKinds.route, s.route)));
  cache.baselineRunId = seen?.baselineRunId ?? null;
  const fields = await db
    .select({ field: resourceFields.field, removedAt: resourceFields.removedAt })
    .from(resourceFields)
    .where(and(eq(resourceFields.source, s.source), eq(resourceFields.route, s.route)));
  for (const f of fields) cache.known.set(f.field, f.removedAt !== null);
}

/**
 * The route's first sighting in this run, in this process: the route's baseline when it is new,
 * else this run joins its recent runs; the process that adds it judges removals.
 */
async function startRun(db: Db, s: FieldSighting, cache: RouteCache, drifts: FieldDrift[]): Promise<void> {
  if (cache.baselineRunId === null) {
    const created = await db
      .insert(resourceKinds)
      .values({ source: s.source, route: s.route, firstSeenAt: s.at, baselineRunId: s.runId, lastSeenAt: s.at, recentRunIds: [s.runId] })
      .onConflictDoNothing()
      .returning({ baselineRunId: resourceKinds.baselineRunId });
    if (created[0]) {
      cache.baselineRunId = created[0].baselineRunId;
      return;
    }
  }
  const claimed = rowsOf<{ recent: string[]; baseline: string }>(
    await db.execute(sql`
      update ${resourceKinds}
      set recent_run_ids = (array[${s.runId}::uuid] || recent_run_ids)[1:${sql.raw(String(ABSENT_RUNS + 1))}], last_seen_at = ${s.at.toISOString()}
      where source = ${s.source} and kind = ${s.route} and not (${s.runId}::uuid = any(recent_run_ids))
      returning recent_run_ids::text[] as recent, baseline_run_id::text as baseline`),
  );
  if (cache.baselineRunId === null) {
    const [seen] = await db
      .select({ baselineRunId: resourceKinds.baselineRunId })
      .from(resourceKinds)
      .where(and(eq(resourceKinds.source, s.source), eq(resourceKinds.route, s.route)));
    cache.baselineRunId = seen?.baselineRunId ?? null;
  }
  const recent = claimed[0]?.recent;
  if (recent && recent.length > ABSENT_RUNS) {
    const removed = await judgeRemovals(db, s, cache, recent.slice(1, ABSENT_RUNS + 1));
    if (removed.length > 0) drifts.push({ source: s.source, route: s.route, added: [], removed });
  }
}

/** Fields missing from every response of `absent` (the runs before this one that received the route). */
async function judgeRemovals(db: Db, s: FieldSighting, cache: RouteCache, absent: string[]): Promise<string[]> {
  const notSince = [s.runId, ...absent];
  const live = and(eq(resourceFields.source, s.source), eq(resourceFields.route, s.route), isNull(resourceFields.removedAt), notInArray(resourceFields.lastSeenRunId, notSince));
  const candidates = await db.select({ field: resourceFields.field, lastSeenRunId: resourceFields.lastSeenRunId }).from(resourceFields).where(live);
  if (candidates.length === 0) return [];
  const unfinished = await db.select({ id: runs.id }).from(runs).where(and(inArray(runs.id, absent), eq(runs.status, 'running')));
  if (unfinished.length > 0) return [];
  const lastSeen = [...new Set(candidates.map((c) => c.lastSeenRunId))];
  const counts = await responsesPerRun(db, s, [...absent, ...lastSeen]);
  const broadest = Math.max(...absent.map((r) => counts.get(r) ?? 0));
  const gone = candidates.filter((c) => broadest >= (counts.get(c.lastSeenRunId) ?? 0)).map((c) => c.field);
  if (gone.length === 0) return [];
  return db.transaction(async (tx) => {
    const marked = await tx
      .update(resourceFields)
      .set({ removedAt: s.at })
      .where(and(live, inArray(resourceFields.field, gone)))
      .returning({ field: resourceFields.field });
    const removed = marked.map((m) => m.field).sort();
    if (removed.length === 0) return removed;
    await tx.insert(contractChanges).values({
      runId: s.runId,
      source: s.source,
      change: 'fields',
      route: s.route,
      detectedAt: s.at,
      removedFields: removed,
      details: { absentFromRuns: absent, responses: Object.fromEntries(counts) },
    });
    for (const f of removed) cache.known.set(f, true);
    return removed;
  });
}

/** Distinct 2xx responses of the route per run, from sync.requests. */
async function responsesPerRun(db: Db, s: FieldSighting, runIds: string[]): Promise<Map<string, number>> {
  const rows = rowsOf<{ run_id: string; n: number | string }>(
    await db.execute(sql`
      select run_id::text as run_id, count(distinct path)::int as n from sync.requests
      where run_id in ${runIds} and source = ${s.source} and http_status between 200 and 299 and path ~ ${templatePattern(s.template)}
      group by run_id`),
  );
  return new Map(rows.map((r) => [r.run_id, Number(r.n)]));
}

/** A POSIX regex matching the template's paths (any path parameter, any query), from its end. */
export function templatePattern(template: string): string {
  const literal = (t: string) => t.replace(/[.*+?^$()[\]{}|\\]/g, '\\$&');
  return `${template.split(/\{[A-Za-z]+\}/).map(literal).join('[^/?]+')}(\\?|$)`;
}

/**
 * Marks fields seen in this run: inserts the new ones, moves the rest to this run. Returns the
 * fields that count as added: new since the baseline run, or back after being removed.
 */
async function markSeen(db: Db, s: FieldSighting, cache: RouteCache, fields: string[]): Promise<string[]> {
  const fresh = fields.filter((f) => !cache.known.has(f));
  const added = await db.transaction(async (tx) => {
    const inserted =
      fresh.length === 0
        ? []
        : (
            await tx
              .insert(resourceFields)
              .values(fresh.map((field) => ({ source: s.source, route: s.route, field, firstSeenAt: s.at, firstRunId: s.runId, lastSeenAt: s.at, lastSeenRunId: s.runId })))
              .onConflictDoNothing()
              .returning({ field: resourceFields.field })
          ).map((r) => r.field);
    const insertedSet = new Set(inserted);
    const others = fields.filter((f) => !insertedSet.has(f));
    // Locked first, so that of several processes moving one field to this run, one sees its old removed_at.
    const moved =
      others.length === 0
        ? []
        : rowsOf<{ field: string; revived: boolean }>(
            await tx.execute(sql`
              with prev as (
                select field, removed_at from ${resourceFields}
                where source = ${s.source} and kind = ${s.route} and field in ${others} and last_seen_run_id <> ${s.runId}
                for update
              )
              update ${resourceFields} f set last_seen_at = ${s.at.toISOString()}, last_seen_run_id = ${s.runId}, removed_at = null
              from prev where f.source = ${s.source} and f.kind = ${s.route} and f.field = prev.field
              returning f.field, prev.removed_at is not null as revived`),
          );
    const result = [...(cache.baselineRunId === s.runId ? [] : inserted), ...moved.filter((m) => m.revived).map((m) => m.field)].sort();
    if (result.length > 0) {
      await tx.insert(contractChanges).values({
        runId: s.runId,
        source: s.source,
        change: 'fields',
        route: s.route,
        path: s.path,
        detectedAt: s.at,
        sha256: s.sha256,
        addedFields: result,
      });
    }
    return result;
  });
  for (const f of fields) cache.known.set(f, false);
  return added;
}
