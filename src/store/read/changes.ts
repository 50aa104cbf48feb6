// What changed between two instants, read for `tesync diff` from the functions
// src/store/sql/changes.sql makes: the bounds a command line names (an instant, a run, the last
// runs) as instants on the warehouse's clock, each table's counts, its first changes for a
// person, and every change as a JSON line. Values leave Postgres as text (JSON text, numbers
// as strings where a column is a decimal): nothing here reads a number into a JS number.
import { getTableColumns, sql } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { VERSIONED } from '../../schema/warehouse/history.ts';
import { rulesOf } from '../../schema/warehouse/table-rules.ts';
import type { Warehouse } from '../connection.ts';
import { quoteLiteral as lit } from '../quote.ts';

/** A versioned table as the changes are read from it. */
export interface ChangedTable {
  /** `schema.table` */
  name: string;
  /** Its key's columns, in the key's order. */
  key: readonly string[];
  /** Its decimal columns: their values leave as strings. */
  decimals: readonly string[];
}

function changedTable(t: PgTable): ChangedTable {
  const c = getTableConfig(t);
  const decimals = Object.values(getTableColumns(t) as Record<string, PgColumn>)
    .filter((col) => col.getSQLType().startsWith('numeric'))
    .map((col) => col.name);
  return { name: `${c.schema}.${c.name}`, key: rulesOf(t).key.map((k) => k.name), decimals };
}

/** Every versioned table, in name order (sync.change_summary's). */
export const CHANGED_TABLES: readonly ChangedTable[] = VERSIONED.map(changedTable);

/** A bound as a command line gives it: an instant (ISO, UTC), a run id, or the n-th last finished run (`last` is 0). */
export type Bound = { instant: string } | { run: string } | { last: number };

/** A bound as the instant it stands for (ISO, UTC, to the microsecond), and the run it names. */
export interface ResolvedBound {
  at: string;
  run?: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/**
 * `b` as an instant: a run's end (`sync.runs.finished_at`); `last-n`, the end of the n-th
 * last finished walk (exports, which are runs too, left out: they change no table). A string
 * says why it stands for none.
 */
export async function resolveBound(w: Warehouse, b: Bound): Promise<ResolvedBound | string> {
  if ('instant' in b) return { at: b.instant };
  const [r] =
    'run' in b
      ? await w.query<{ id: string; at: string | null }>(sql.raw(`select id::text as id, to_char(finished_at at time zone 'UTC', ${ISO}) as at from sync.runs where id = ${lit(b.run)}::uuid`))
      : await w.query<{ id: string; at: string | null }>(
          sql.raw(`select id::text as id, to_char(finished_at at time zone 'UTC', ${ISO}) as at from sync.runs
                    where finished_at is not null and cardinality(sources) > 0 order by finished_at desc, id offset ${b.last} limit 1`),
        );
  if (!r) {
    if ('run' in b) return `no run ${b.run} in sync.runs`;
    const [n] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.runs where finished_at is not null and cardinality(sources) > 0`);
    return `the warehouse holds ${n!.n} finished sync run${n!.n === 1 ? '' : 's'}`;
  }
  if (r.at === null) return `run ${r.id} has not finished: it has no end to stand for an instant`;
  return { at: r.at, run: r.id };
}

/** What to read: one table's changes (or net changes, or revisions) in (from, to]. */
export interface ChangeQuery {
  table: ChangedTable;
  from: string;
  to: string;
  net?: boolean;
  revisionsOnly?: boolean;
}

/** A row's columns as jsonb, each decimal column's value a string (`->>` gives its text, digit for digit). */
function decimalsAsText(column: string, decimals: readonly string[]): string {
  if (decimals.length === 0) return column;
  return `case when ${column} is not null then ${column} || jsonb_build_object(${decimals.map((d) => `${lit(d)}, ${column} ->> ${lit(d)}`).join(', ')}) end`;
}

/**
 * The FROM clause of a query's rows: the function's columns, `before` and `after` with their
 * decimals as strings, `table` beside them. Pure.
 */
export function changesFrom(q: ChangeQuery): string {
  const fn = q.net ? 'sync.changes_net' : 'sync.changes';
  const where = q.revisionsOnly ? ' where c.revision' : '';
  return `(select ${lit(q.table.name)}::text as "table", c.change_type, c.key, c.known_at, c.run_id, c.raw_response_id,
      ${decimalsAsText('c.before', q.table.decimals)} as before, ${decimalsAsText('c.after', q.table.decimals)} as after,
      c.changed, c.data_time, c.revision
    from ${fn}(${lit(q.table.name)}::regclass, ${lit(q.from)}::timestamptz, ${lit(q.to)}::timestamptz) c${where}) x`;
}

export interface ChangeCounts {
  table: string;
  inserts: number;
  updates: number;
  deletes: number;
  revisions: number;
}

/** A table's changes counted by type. */
export async function countChanges(w: Warehouse, q: ChangeQuery): Promise<ChangeCounts> {
  const fn = q.net ? 'sync.changes_net' : 'sync.changes';
  const [r] = await w.query<Omit<ChangeCounts, 'table'>>(
    sql.raw(`select count(*) filter (where change_type = 'insert')::int as inserts, count(*) filter (where change_type = 'update')::int as updates,
                    count(*) filter (where change_type = 'delete')::int as deletes, count(*) filter (where revision)::int as revisions
               from ${fn}(${lit(q.table.name)}::regclass, ${lit(q.from)}::timestamptz, ${lit(q.to)}::timestamptz)${q.revisionsOnly ? ' where revision' : ''}`),
  );
  return { table: q.table.name, ...r! };
}

/** A change for a person: the rows as JSON text (decimals as strings), never parsed here. */
export interface ListedChange {
  type: 'insert' | 'update' | 'delete';
  key: string;
  knownAt: string;
  before: string | null;
  after: string | null;
  changed: string[];
  revision: boolean;
}

/** A table's first `limit` changes, in the order they became known. */
export async function listChanges(w: Warehouse, q: ChangeQuery, limit: number): Promise<ListedChange[]> {
  return w.query<ListedChange>(
    sql.raw(`select change_type as type, key::text as key, to_char(known_at at time zone 'UTC', ${ISO}) as "knownAt", before::text as before, after::text as after, changed, revision
               from ${changesFrom(q)} order by known_at, key limit ${Math.max(0, Math.floor(limit))}`),
  );
}

/** The SELECT of a query's changes as JSON lines (`kind` "change"), in the order they became known. Pure. */
export function changeLinesSelect(q: ChangeQuery): string {
  return `select jsonb_build_object('kind', 'change', 'table', x."table", 'change_type', x.change_type, 'key', x.key,
      'known_at', to_char(x.known_at at time zone 'UTC', ${ISO}), 'run_id', x.run_id, 'raw_response_id', x.raw_response_id::text,
      'before', x.before, 'after', x.after, 'changed', to_jsonb(x.changed),
      'data_time', to_char(x.data_time at time zone 'UTC', ${ISO}), 'revision', x.revision)::text as line
    from ${changesFrom(q)} order by x.known_at, x.key`;
}

/**
 * Streams a query's changes as JSON lines to `line`, a batch at a time (a cursor on `session`,
 * a connection of the caller's): a first sync's thousands of changes never sit in memory whole.
 */
export async function streamChangeLines(session: postgres.Sql, q: ChangeQuery, line: (text: string) => Promise<void> | void): Promise<number> {
  let n = 0;
  await session.begin('isolation level repeatable read read only', async (tx) => {
    await tx.unsafe<{ line: string }[]>(changeLinesSelect(q)).cursor(500, async (rows) => {
      for (const r of rows) {
        await line(r.line);
        n++;
      }
    });
  });
  return n;
}
