// What the write path knows of a declared table, worked out once per table: its qualified name
// and, per column, its quoted name, its array type and whether a default or generation fills it.
import { getTableColumns } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../connection.ts';
import { quoteIdentifier as quote } from '../quote.ts';

/** A transaction or the database itself: both can run statements. */
export type Executor = Pick<Db, 'insert' | 'update' | 'delete' | 'select' | 'execute' | 'transaction'>;

export interface ColumnInfo {
  prop: string;
  column: PgColumn;
  /** Quoted column name. */
  name: string;
  /** The type of its array parameter, e.g. `numeric[]`. */
  arrayType: string;
  hasDefault: boolean;
  generated: boolean;
}

export interface TableShape {
  qualified: string;
  columns: ColumnInfo[];
  /** The columns by their SQL name (a conflict target's columns are named so). */
  byName: Map<string, ColumnInfo>;
  /** No array-typed column: every column can travel as one unnest array. */
  unnestable: boolean;
}

const shapes = new WeakMap<PgTable, TableShape>();

export function shapeOf(table: PgTable): TableShape {
  let shape = shapes.get(table);
  if (shape) return shape;
  const config = getTableConfig(table);
  const columns = Object.entries(getTableColumns(table) as Record<string, PgColumn>).map(([prop, column]): ColumnInfo => ({
    prop,
    column,
    name: quote(column.name),
    arrayType: `${column.getSQLType()}[]`,
    hasDefault: column.hasDefault,
    generated: column.generated !== undefined || column.generatedIdentity !== undefined,
  }));
  shape = {
    qualified: config.schema ? `${quote(config.schema)}.${quote(config.name)}` : quote(config.name),
    columns,
    byName: new Map(columns.map((c) => [c.column.name, c])),
    // `text[]` columns: an array of arrays would be flattened by unnest. Values computed in
    // JS (drizzle's $defaultFn/$onUpdateFn) exist only in its query builder.
    unnestable: columns.every((c) => !c.column.getSQLType().endsWith(']') && !c.column.defaultFn && !c.column.onUpdateFn),
  };
  shapes.set(table, shape);
  return shape;
}

/** The rows a statement inserted, changed or deleted (an upsert that found a row unchanged does not count it). */
export function countOf(result: unknown): number {
  const r = result as { count?: number; rowCount?: number };
  return r.count ?? r.rowCount ?? 0;
}
