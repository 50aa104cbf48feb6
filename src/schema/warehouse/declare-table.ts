// A mirrored table is declared once: its drizzle table (columns, key: what migrations are made
// of) and, beside it, what the rest of tesync must know of it and would otherwise restate in
// registries of its own: the resource group that fills it (`sync.resource_state.kind`, which
// `analytics.data_age` and `tesync status` report by table), and the sets its rows leave by.
//
// Absence is not emptiness (contract: "Forms the seeds leave open"): a stored row leaves its
// table (deleted, or delisted) only when a response stated the whole set it belongs to. A set
// is declared by the columns that name one (`scope`: a token's sections are the set of one
// token) and, in words, the response that states it (for docs and reviewers); a resource says
// only whether its response stated it (src/engine/kit/stated-set.ts).
//
// `declareTable` returns the drizzle table itself, so drizzle-kit and every query see the table
// as declared; the rest is kept beside it, keyed by the table. The tables are listed from the
// modules asked about, not from whatever was loaded: a test that declares a table of its own
// (the walkthrough of docs/adding-a-resource.md) adds it to no other file's list.
import { is, type SQL } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';

/** A column of `T`, by the property rows name it by. */
type ColumnOf<T extends PgTable> = keyof T['$inferInsert'] & string;

export interface SetRule<T extends PgTable = PgTable> {
  /** The columns whose values name one set; empty: the whole table is one set. */
  scope: readonly ColumnOf<T>[];
  /** Which response states the whole set. */
  statedBy: string;
  /**
   * A window that slides (a trend period, a chart timeframe): the response states the set from
   * its earliest value of this column on, and nothing about what came before.
   */
  from?: ColumnOf<T>;
  /**
   * A set stated by a response that lists its members by some key columns only (a catalog
   * lists charts, not their points): written without rows, the members kept named by these
   * columns (`keptMembers`).
   */
  keptBy?: readonly ColumnOf<T>[];
  /** A stored member also stays while this holds of it (SQL on the table's qualified name). */
  keptWhile?: SQL;
}

export interface TableDeclaration<T extends PgTable = PgTable> {
  /** The resource groups (job groups of the table's source) whose jobs write it. */
  groups: readonly string[];
  /** The sets whose rows can leave the table; none: a row, once written, stays. */
  sets?: readonly SetRule<T>[];
}

/** A declared table with what is declared of it; `source` is its schema (`app`, `gateway`). */
export interface DeclaredTable extends TableDeclaration {
  table: PgTable;
  /** `schema.name`. */
  name: string;
  source: string;
  sets: readonly SetRule[];
}

/** By table, with the order it was declared in (module namespaces list exports in an order that depends on the loader). */
const declared = new WeakMap<PgTable, DeclaredTable & { order: number }>();
let declaredSoFar = 0;

/** The table, with its groups and sets kept beside it. */
export function declareTable<T extends PgTable>(table: T, declaration: TableDeclaration<NoInfer<T>>): T {
  const { schema, name } = getTableConfig(table);
  if (declared.has(table)) throw new Error(`${schema}.${name} is declared twice`);
  if (declaration.groups.length === 0) throw new Error(`${schema}.${name} names no resource group that fills it`);
  const sets = (declaration.sets ?? []) as readonly SetRule[];
  declared.set(table, { table, name: `${schema}.${name}`, source: schema ?? 'public', groups: declaration.groups, sets, order: declaredSoFar++ });
  return table;
}

/** What is declared of `table`; undefined for a table not declared with `declareTable`. */
export function declarationOf(table: PgTable): DeclaredTable | undefined {
  return declared.get(table);
}

/**
 * The declared tables the modules export (src/schema/warehouse/app.ts, gateway.ts), by source
 * and then in the order each source's module declares them: a fixed order, whichever loader.
 */
export function declaredTables(...modules: readonly Record<string, unknown>[]): DeclaredTable[] {
  const tables = new Set(modules.flatMap((m) => Object.values(m).filter((v): v is PgTable => is(v, PgTable))));
  return [...tables]
    .flatMap((t) => declared.get(t) ?? [])
    .sort((a, b) => (a.source === b.source ? a.order - b.order : a.source < b.source ? -1 : 1))
    .map(({ order: _, ...d }) => d);
}

/** Every set the modules' tables declare, each with its table. */
export function declaredSets(...modules: readonly Record<string, unknown>[]): (SetRule & { table: PgTable })[] {
  return declaredTables(...modules).flatMap((d) => d.sets.map((s) => ({ ...s, table: d.table })));
}
