// The warehouse describes itself: `COMMENT ON` every object of its catalog (catalog.ts).
//
// Comments are metadata, not schema: `migrate()` applies them after the drizzle migrations,
// each time, so a change of wording needs no migration. One query compares them all with
// what the database holds; only those that differ are written (a second round trip), so a
// warehouse already in step costs one query and writes nothing.
import type { Sql } from 'postgres';
import { warehouseCatalog, type WarehouseCatalog } from './catalog.ts';
import { quoteIdentifier as ident, quoteLiteral as literal } from '../quote.ts';

/** What one `COMMENT ON` is about, and what it says (plain text). */
export interface CommentTarget {
  kind: 'schema' | 'table' | 'view' | 'materialized view' | 'column' | 'function';
  schema: string;
  /** Table, view or function name. */
  name?: string;
  column?: string;
  /** A function's argument types: `timestamptz`. */
  argTypes?: string;
  text: string;
}

/** Markdown as a comment says it: code spans lose their backticks. */
export function plainText(markdown: string): string {
  return markdown.replace(/`([^`]*)`/g, '$1').trim();
}

/** Every comment the catalog holds (objects without a text are left out: a test names them). */
export function commentTargets(catalog: WarehouseCatalog = warehouseCatalog()): CommentTarget[] {
  const out: CommentTarget[] = [];
  for (const s of catalog.schemas) {
    const schema = s.description.name;
    out.push({ kind: 'schema', schema, text: plainText(s.description.description) });
    for (const r of s.relations) {
      if (r.comment) out.push({ kind: r.kind, schema: r.schema, name: r.name, text: plainText(r.comment) });
      for (const c of r.columns) {
        if (c.text?.trim()) out.push({ kind: 'column', schema: r.schema, name: r.name, column: c.name, text: plainText(c.text) });
      }
    }
    for (const f of s.functions) out.push({ kind: 'function', schema, name: f.name, argTypes: f.argTypes, text: plainText(f.comment) });
  }
  return out;
}

/** The object a target names, as `COMMENT ON` writes it. */
function objectName(t: CommentTarget): string {
  switch (t.kind) {
    case 'schema':
      return `SCHEMA ${ident(t.schema)}`;
    case 'column':
      return `COLUMN ${ident(t.schema)}.${ident(t.name!)}.${ident(t.column!)}`;
    case 'function':
      return `FUNCTION ${ident(t.schema)}.${ident(t.name!)}(${t.argTypes})`;
    default:
      return `${t.kind.toUpperCase()} ${ident(t.schema)}.${ident(t.name!)}`;
  }
}

export const commentStatement = (t: CommentTarget): string => `COMMENT ON ${objectName(t)} IS ${literal(t.text)};`;

/** Every `COMMENT ON` statement, in order: what `migrate()` keeps the database in step with. */
export function commentStatements(): string[] {
  return commentTargets().map(commentStatement);
}

// Each target with the comment the database holds for it now, in one query: the indexes of
// those that differ, and whether their object exists.
const COMPARE = `
with d as (
  select * from jsonb_to_recordset(cast($1::text as jsonb)) as d(i int, k text, s text, r text, c text, f text, x text)
), o as (
  select d.*,
         case d.k when 'schema' then (select n.oid from pg_namespace n where n.nspname = d.s)
                  when 'function' then to_regprocedure(d.f)::oid
                  else to_regclass(format('%I.%I', d.s, d.r))::oid end as oid
  from d
), a as (
  select o.*, att.attnum
  from o left join pg_attribute att
    on o.k = 'column' and att.attrelid = o.oid and att.attname = o.c and att.attnum > 0 and not att.attisdropped
)
select i, (oid is not null and (k <> 'column' or attnum is not null)) as present
from a
where x is distinct from case k when 'schema' then obj_description(oid, 'pg_namespace')
                                when 'function' then obj_description(oid, 'pg_proc')
                                when 'column' then col_description(oid, attnum)
                                else obj_description(oid, 'pg_class') end`;

/** The targets as the compare query's parameter. */
function compareParameter(targets: readonly CommentTarget[]): string {
  return JSON.stringify(
    targets.map((t, i) => ({
      i,
      k: t.kind,
      s: t.schema,
      r: t.name ?? null,
      c: t.column ?? null,
      f: t.kind === 'function' ? `${ident(t.schema)}.${ident(t.name!)}(${t.argTypes})` : null,
      x: t.text,
    })),
  );
}

// The descriptions do not change while a process runs: built once, at its first migrate.
let current: { list: readonly CommentTarget[]; json: string } | undefined;
function currentTargets() {
  if (!current) {
    const list = commentTargets();
    current = { list, json: compareParameter(list) };
  }
  return current;
}

export interface CommentsApplied {
  /** Comments written (they differed from the database's). */
  written: number;
  /** Comments already as described. */
  unchanged: number;
  /** Described objects the database does not have (a test keeps this empty). */
  missing: string[];
  /** Set when writing was refused for want of privilege (the objects belong to another role): left as they were. */
  refused?: string;
  ms: number;
}

export function targetLabel(t: CommentTarget): string {
  if (t.kind === 'schema') return `schema ${t.schema}`;
  if (t.kind === 'column') return `column ${t.schema}.${t.name}.${t.column}`;
  if (t.kind === 'function') return `function ${t.schema}.${t.name}(${t.argTypes})`;
  return `${t.kind} ${t.schema}.${t.name}`;
}

/**
 * Brings the database's comments in step with the descriptions: one query when they already
 * are, two when some differ (those are written together, in one implicit transaction).
 */
export async function applyComments(sql: Sql, targets?: readonly CommentTarget[]): Promise<CommentsApplied> {
  const started = performance.now();
  const { list, json } = targets ? { list: targets, json: compareParameter(targets) } : currentTargets();
  const stale = await sql.unsafe<{ i: number; present: boolean }[]>(COMPARE, [json]);
  const missing = stale.filter((r) => !r.present).map((r) => targetLabel(list[r.i]!));
  const statements = stale.filter((r) => r.present).map((r) => commentStatement(list[r.i]!));
  let refused: string | undefined;
  if (statements.length > 0) {
    try {
      // No parameters: the simple protocol, every statement in one round trip.
      await sql.unsafe(statements.join('\n'));
    } catch (err) {
      // A role that may write rows but does not own the tables cannot comment on them; the
      // descriptions are not worth refusing a sync for. The owner's next migrate writes them.
      if ((err as { code?: string }).code !== '42501') throw err;
      refused = (err as Error).message;
    }
  }
  return {
    written: refused ? 0 : statements.length,
    unchanged: list.length - stale.length,
    missing,
    ...(refused ? { refused } : {}),
    ms: performance.now() - started,
  };
}
