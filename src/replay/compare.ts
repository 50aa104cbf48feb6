// Two warehouses compared, as `tesync replay --check` compares a warehouse with its replay:
// every table of `app` and `gateway` (the mirrored tables, their histories with `known_from`
// and `known_to`, the daily archives), row by row and value by value, bookkeeping columns
// included (known times, runs, bodies: a replay must give them back too). A table is first
// compared by a digest of its rows; only one whose digests differ is read key by key, both sides
// in key order at once, and its differing keys named with the columns that differ. Where a
// versioned table or its history differs, `T_as_of` at each run's end says which ends it
// changed (equal tables and histories make equal as-of reads, so no other is read).
import type postgres from 'postgres';
import { sql } from 'drizzle-orm';
import { parseJson, stringifyJson } from '../lib/json.ts';
import { BOOKKEEPING_COLUMNS } from '../schema/warehouse/columns.ts';
import { quoteIdentifier as quote, quoteLiteral as lit } from '../store/quote.ts';
import type { Warehouse } from '../store/connection.ts';

export interface Difference {
  table: string;
  /** The key, `column=value, ...` in the key's order. */
  key: string;
  /** `changed`: the key in both, values differ; `missing`: in the warehouse only; `extra`: in the replay only. */
  kind: 'changed' | 'missing' | 'extra';
  /** For `changed`, the columns whose values differ. */
  columns: string[];
}

export interface TableComparison {
  table: string;
  rows: number;
  changed: number;
  missing: number;
  extra: number;
}

export interface Comparison {
  equal: boolean;
  /** Tables compared. */
  tables: number;
  /** Every table that differs, with its counts. */
  differing: TableComparison[];
  /** The first differences of each table that differs. */
  differences: Difference[];
  /** The run ends at which a differing versioned table's `T_as_of` differs. */
  asOf: { table: string; run: string; at: string }[];
  /** Tables in one warehouse only. */
  onlyIn: { table: string; in: 'warehouse' | 'replay' }[];
}

interface Table {
  name: string;
  /** The key's columns: the primary key; a history's, its table's key and the version's period. */
  key: string[];
  /** The versioned table it is or whose history it is (null: neither), and its as-of function. */
  versioned: string | null;
  asOf: string | null;
}

async function tablesOf(w: Warehouse): Promise<Table[]> {
  const rows = await w.query<{ name: string; key: string[] | null; base_key: string[] | null; versioned: string | null; as_of: string | null }>(sql`
    with t as (
      select n.nspname as s, c.relname as r, c.oid,
             case when right(c.relname, 8) = '_history' then left(c.relname, -8)
                  when to_regclass(format('%I.%I', n.nspname, c.relname || '_history')) is not null then c.relname end as base
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname in ('app', 'gateway') and c.relkind in ('r', 'p'))
    select format('%I.%I', s, r) as name, sync.primary_key(oid) as key,
           case when base <> r then sync.primary_key(to_regclass(format('%I.%I', s, base))) end as base_key,
           case when base is not null then format('%I.%I', s, base) end as versioned,
           case when base is not null then format('%I.%I', s, base || '_as_of') end as as_of
      from t order by 1`);
  return rows.map((r) => ({ name: r.name, key: r.key ?? [...(r.base_key ?? []), 'known_from', 'known_to'], versioned: r.versioned, asOf: r.as_of }));
}

/** The columns that say when, by which run and from which body a row or version was written. */
const WRITTEN_WHEN = new Set([...BOOKKEEPING_COLUMNS, 'first_seen_at', 'known_from', 'known_to', 'closing_raw_response_id']);

/** A row's digest: `to_jsonb` keys its columns by name, so the columns' order on disk does not count. */
const ROW_HASH = `md5(to_jsonb(t)::text)`;
const keyText = (t: Table) => `jsonb_build_array(${t.key.map((k) => `t.${quote(k)}`).join(', ')})::text`;

async function digest(w: Warehouse, from: string): Promise<string> {
  const [r] = await w.query<{ d: string }>(
    sql.raw(`select count(*)::text || ':' || coalesce(sum(('x' || left(${ROW_HASH}, 15))::bit(60)::bigint), 0)::text as d from ${from} t`),
  );
  return r!.d;
}

/** UTF-8 byte order: the order of `collate "C"`, which both sides sort the keys by. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Each key and its row's digest, in key order, a batch at a time. */
async function* keyed(s: postgres.Sql, t: Table): AsyncGenerator<{ k: string; h: string }> {
  const q = `select ${keyText(t)} as k, ${ROW_HASH} as h from ${t.name} t order by (${keyText(t)}) collate "C"`;
  for await (const rows of s.unsafe<{ k: string; h: string }[]>(q).cursor(2000)) yield* rows;
}

/** A key as people read it: `column=value` in the key's order. */
function keyLabel(t: Table, k: string): string {
  const values = parseJson(k) as unknown[];
  // An instant as jsonb writes it, in UTC: `+00:00` said as `Z`.
  const text = (v: unknown) => (typeof v === 'string' ? v.replace(/^(\d{4}-\d\d-\d\dT[\d:.]+)\+00:00$/, '$1Z') : stringifyJson(v));
  // A version is told by its key and start: its end is a value like the others.
  return t.key.flatMap((c, i) => (c === 'known_to' ? [] : [`${c}=${text(values[i])}`])).join(', ');
}

/** Rows of `keys` as column → JSON text. */
async function rowsAt(w: Warehouse, t: Table, keys: readonly string[]): Promise<Map<string, Record<string, string>>> {
  const rows = await w.query<{ k: string; r: string }>(sql.raw(`select ${keyText(t)} as k, to_jsonb(t)::text as r from ${t.name} t where ${keyText(t)} in (${keys.map(lit).join(', ')})`));
  return new Map(rows.map(({ k, r }) => [k, Object.fromEntries(Object.entries(parseJson(r) as Record<string, unknown>).map(([c, v]) => [c, stringifyJson(v)]))]));
}

/** One table, key by key; at most `first` differences kept, all counted. */
async function compareTable(a: Warehouse, b: Warehouse, t: Table, first: number): Promise<{ counts: TableComparison; found: Difference[] }> {
  const counts: TableComparison = { table: t.name, rows: 0, changed: 0, missing: 0, extra: 0 };
  const found: Difference[] = [];
  const [sa, sb] = [a.session({ name: 'tesync replay (compare)' }), b.session({ name: 'tesync replay (compare)' })];
  try {
    const [ia, ib] = [keyed(sa, t), keyed(sb, t)];
    let [x, y] = [await ia.next(), await ib.next()];
    while (!x.done || !y.done) {
      const c = x.done ? 1 : y.done ? -1 : byBytes(x.value.k, y.value.k);
      if (c === 0 && x.value!.h === y.value!.h) {
        counts.rows++;
        [x, y] = [await ia.next(), await ib.next()];
        continue;
      }
      const kind = c === 0 ? 'changed' : c < 0 ? 'missing' : 'extra';
      counts[kind]++;
      if (c <= 0) counts.rows++;
      const k = c <= 0 ? x.value!.k : y.value!.k;
      if (found.length < first) found.push({ table: t.name, key: k, kind, columns: [] });
      if (c <= 0) x = await ia.next();
      if (c >= 0) y = await ib.next();
    }
  } finally {
    await Promise.all([sa.end({ timeout: 5 }), sb.end({ timeout: 5 })]);
  }
  const changed = found.filter((d) => d.kind === 'changed');
  if (changed.length > 0) {
    const keys = changed.map((d) => d.key);
    const [ra, rb] = [await rowsAt(a, t, keys), await rowsAt(b, t, keys)];
    for (const d of changed) {
      const [x, y] = [ra.get(d.key) ?? {}, rb.get(d.key) ?? {}];
      const differ = [...new Set([...Object.keys(x), ...Object.keys(y)])].filter((c) => x[c] !== y[c]);
      // What a row holds first, then when and from what it was written.
      d.columns = [...differ.filter((c) => !WRITTEN_WHEN.has(c)), ...differ.filter((c) => WRITTEN_WHEN.has(c))];
    }
  }
  for (const d of found) d.key = keyLabel(t, d.key);
  return { counts, found };
}

/**
 * `a` (the warehouse) against `b` (its replay). `first`: the differences named per table.
 * `runEnds`: the instants (ISO) at which a differing versioned table is read as of.
 */
export async function compareWarehouses(a: Warehouse, b: Warehouse, runEnds: readonly { run: string; at: string }[], first = 20): Promise<Comparison> {
  const [ta, tb] = [await tablesOf(a), await tablesOf(b)];
  const names = new Set(tb.map((t) => t.name));
  const out: Comparison = { equal: true, tables: 0, differing: [], differences: [], asOf: [], onlyIn: [] };
  for (const t of tb) if (!ta.some((x) => x.name === t.name)) out.onlyIn.push({ table: t.name, in: 'replay' });
  /** Versioned table → its as-of function, for each that differs (or whose history does). */
  const versionedDiffering = new Map<string, string>();
  for (const t of ta) {
    if (!names.has(t.name)) {
      out.onlyIn.push({ table: t.name, in: 'warehouse' });
      continue;
    }
    out.tables++;
    if ((await digest(a, t.name)) === (await digest(b, t.name))) continue;
    const { counts, found } = await compareTable(a, b, t, first);
    if (counts.changed + counts.missing + counts.extra === 0) continue;
    out.differing.push(counts);
    out.differences.push(...found);
    if (t.versioned && t.asOf) versionedDiffering.set(t.versioned, t.asOf);
  }
  for (const [table, fn] of versionedDiffering) {
    for (const end of runEnds) {
      const from = `${fn}(${lit(end.at)}::timestamptz)`;
      if ((await digest(a, from)) !== (await digest(b, from))) out.asOf.push({ table, run: end.run, at: end.at });
    }
  }
  out.equal = out.differing.length === 0 && out.onlyIn.length === 0 && out.asOf.length === 0;
  return out;
}
