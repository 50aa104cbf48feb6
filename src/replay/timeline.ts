// What a replay repeats, in the order the warehouse knew it, read from the write record
// (sync.writes) and the runs: each write at its known time; each try that refused what it read
// at the instant its bodies were received (when they were first received in its run; else when
// it ended); each run's end, where the daily archives were filled. And what cannot be
// repeated, counted: bodies no record names, records whose bodies are gone, tries that wrote
// nothing for another reason, versions no archived body carried.
import type postgres from 'postgres';
import { getTableColumns, sql } from 'drizzle-orm';
import type { WriteHow } from '../store/books/write-record.ts';
import type { Warehouse } from '../store/connection.ts';
import { VERSIONED } from '../schema/warehouse/history.ts';
import { getTableConfig } from 'drizzle-orm/pg-core';
import type { ArchivedBody } from './archive-upstream.ts';

/** A recorded try to repeat. `knownAt`: ISO, UTC, to the microsecond, as the server wrote it. */
export interface WriteEvent {
  kind: 'write';
  id: number;
  knownAt: string;
  runId: string | null;
  /** The run's `--full`: what the reads of its jobs asked depends on it. */
  full: boolean;
  /** The settings its run's reads ran with, as the run recorded them (null: a run before they were). */
  settings: Record<string, unknown> | null;
  source: string;
  resource: string;
  job: string;
  payload: unknown;
  how: Exclude<WriteHow, 'unwritten'>;
  bodies: number[];
}

/** A run's end: the daily archives are filled through it. */
export interface RunEnd {
  kind: 'end';
  runId: string;
  knownAt: string;
}

export type ReplayEvent = WriteEvent | RunEnd;

interface EventRow {
  kind: 'write' | 'end';
  at: string;
  id: string | null;
  run_id: string | null;
  full_run: boolean | null;
  settings: string | null;
  source: string | null;
  resource: string | null;
  job: string | null;
  payload: string | null;
  how: string | null;
  bodies: string[] | null;
}

// Ordered by the instant, to the microsecond; at one instant a write before a run's end.
const EVENTS = `
with events as (
  select 'write' as kind,
         case when w.how = 'refused'
              then coalesce((select max(r.fetched_at) from sync.raw_responses r where r.id = any (w.bodies) and r.run_id = w.run_id), w.known_at)
              else w.known_at end as at,
         w.id, w.run_id, coalesce((u.options->>'full')::boolean, false) as full_run, (u.options->'settings')::text as settings, w.source, w.resource, w.job, w.payload::text as payload, w.how, w.bodies::text[] as bodies
    from sync.writes w left join sync.runs u on u.id = w.run_id
   where w.how <> 'unwritten'
  union all
  select 'end', r.finished_at, null, r.id, null, null, null, null, null, null, null, null
    from sync.runs r where r.finished_at is not null
)
select kind, to_char(events.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, id::text as id, run_id::text as run_id, full_run, settings, source, resource, job, payload, how, bodies
  from events order by events.at, kind desc, events.id`;

/** The events in order, a batch at a time from a cursor on `session`; `visit` is awaited before the next. */
export async function forEachEvent(session: postgres.Sql, visit: (e: ReplayEvent) => Promise<void>): Promise<void> {
  for await (const rows of session.unsafe<EventRow[]>(EVENTS).cursor(200)) {
    for (const r of rows) {
      if (r.kind === 'end') await visit({ kind: 'end', runId: r.run_id!, knownAt: r.at });
      else
        await visit({
          kind: 'write',
          id: Number(r.id),
          knownAt: r.at,
          runId: r.run_id,
          full: r.full_run === true,
          settings: r.settings === null ? null : (JSON.parse(r.settings) as Record<string, unknown>),
          source: r.source!,
          resource: r.resource!,
          job: r.job!,
          payload: JSON.parse(r.payload!) as unknown,
          how: r.how as WriteEvent['how'],
          bodies: (r.bodies ?? []).map(Number),
        });
    }
  }
}

/** The bodies `ids` names, from the archive, in that order (an id twice, twice); those it lacks left out. */
export async function loadBodies(source: Warehouse, ids: readonly number[]): Promise<ArchivedBody[]> {
  if (ids.length === 0) return [];
  const rows = await source.query<{ id: string; path: string; sha256: string; http_status: number; content_type: string | null; bytes: Buffer }>(
    sql`select id::text as id, path, sha256, http_status, content_type,
               coalesce(body_bytes, convert_to(coalesce(body::text, body_text, ''), 'UTF8')) as bytes
          from sync.raw_responses where id = any (${`{${[...new Set(ids)].join(',')}}`}::bigint[])`,
  );
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [{ id, path: r.path, sha256: r.sha256, httpStatus: r.http_status, contentType: r.content_type, bytes: new Uint8Array(r.bytes) }] : [];
  });
}

/** What the archive cannot repeat, counted before the replay. */
export interface Unreplayable {
  /** Bodies (2xx and refusals, as received) that no record names: read before the write record began, or never used. */
  bodiesUnrecorded: number;
  /** Records naming a body the archive no longer holds (removed by hand: the archive refuses DELETE). */
  recordsMissingBodies: number;
  /** Tries that read bodies and wrote nothing but for a refusal (a failure, a superseded response): not repeated. */
  triesUnwritten: number;
  /** Rows and versions of the versioned tables whose values no archived body carried (written by a marker's skip or a 304): repeated from their write's record, not from a body. */
  versionsWithoutBody: number;
}

export async function countUnreplayable(source: Warehouse): Promise<Unreplayable> {
  // Anti-joins against the ids the records name, each list read once (never a scan per body).
  const [w] = await source.query<{ unrecorded: number; missing: number; unwritten: number }>(sql`
    with named as (select distinct b as id from sync.writes w cross join unnest(w.bodies) b)
    select (select count(*) from sync.raw_responses r left join named n on n.id = r.id where r.status <> 'invalid' and n.id is null)::int as unrecorded,
           (select count(distinct w.id) from sync.writes w cross join unnest(w.bodies) b left join sync.raw_responses r on r.id = b where r.id is null)::int as missing,
           (select count(*) from sync.writes w where w.how = 'unwritten')::int as unwritten`);
  let versions = 0;
  for (const t of VERSIONED) {
    if (!Object.values(getTableColumns(t)).some((c) => c.name === 'raw_response_id')) continue;
    const { schema, name } = getTableConfig(t);
    const [v] = await source.query<{ n: number }>(
      sql.raw(`select ((select count(*) from "${schema}"."${name}" where raw_response_id is null) + (select count(*) from "${schema}"."${name}_history" where raw_response_id is null))::int as n`),
    );
    versions += v!.n;
  }
  return { bodiesUnrecorded: w!.unrecorded, recordsMissingBodies: w!.missing, triesUnwritten: w!.unwritten, versionsWithoutBody: versions };
}
