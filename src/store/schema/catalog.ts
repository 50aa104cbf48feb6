// The warehouse's catalog: every schema, table, column, view and function with what it says,
// from the descriptions (src/schema/warehouse/descriptions/) and the declarations
// (src/schema/warehouse/*.ts). It gives the database its comments (comments.ts), which psql's
// `\d+` and BI tools read, and the per-table reference of docs/warehouse.md (reference-doc.ts).
import { Column, getTableColumns, is, SQL } from 'drizzle-orm';
import { getMaterializedViewConfig, getTableConfig, getViewConfig, isPgMaterializedView, isPgView, PgTable, type PgColumn } from 'drizzle-orm/pg-core';
import * as declarations from '../../schema/warehouse/index.ts';
import { DAILY_ARCHIVES, dataTimeColumn, VERSIONED } from '../../schema/warehouse/history.ts';
import {
  ARCHIVE_COLUMNS,
  asOfFunction,
  asOfView,
  changesFunction,
  dailyArchive,
  EVERY_ROW,
  HISTORY_COLUMNS,
  historyTable,
  SCHEMAS,
  SHARED_COLUMNS,
  type RelationDescription,
  type SchemaDescription,
  type ViewDescription,
} from '../../schema/warehouse/descriptions/index.ts';
import { rulesOf } from '../../schema/warehouse/table-rules.ts';

export interface CatalogColumn {
  name: string;
  /** The SQL type, where declared (a view created by raw SQL has none here). */
  type?: string;
  /** Markdown; undefined when nothing describes it (a test names it). */
  text?: string;
  /** Where its text comes from: its table's own line, a shared line, or the rule of a derived table. */
  from: 'own' | 'every-row' | 'shared' | 'rule' | 'base';
}

export interface CatalogRelation {
  kind: 'table' | 'view' | 'materialized view';
  schema: string;
  name: string;
  /** The description, when there is one (derived tables: their rule's text in `comment`). */
  description?: RelationDescription;
  /** The columns telling a row apart (primary key, or a view's `key`). */
  key: string[];
  columns: CatalogColumn[];
  /** The relation's comment, Markdown; undefined when nothing describes it. */
  comment?: string;
  /** A table derived by rule from another: its earlier versions, or its daily archive. */
  derived?: { rule: 'history' | 'archive'; base: string; universe?: string };
  /** It has `name_as_of(at)` (and, a table, `name_history` and `name_changes(from_at, to_at)`). */
  versioned: boolean;
  /** A versioned table's data-time column, when it is a series of points (its revisions are read by it). */
  dataTime?: string;
}

export interface CatalogFunction {
  schema: string;
  name: string;
  /** The arguments as written, names included: `at timestamptz`. */
  args: string;
  /** The argument types alone, for `to_regprocedure`: `timestamptz`. */
  argTypes: string;
  comment: string;
  /** `T_as_of` or `T_changes`, derived from its table `base`. */
  base?: string;
}

export interface CatalogSchema {
  description: SchemaDescription;
  relations: CatalogRelation[];
  functions: CatalogFunction[];
}

export interface WarehouseCatalog {
  schemas: CatalogSchema[];
  /** What is declared but not described, or described but not declared: each names its object. */
  problems: string[];
}

const qualified = (schema: string, name: string) => `${schema}.${name}`;

/** `timestamp with time zone` as people write it. */
function shortType(type: string): string {
  return type.replace(/^timestamp with time zone/, 'timestamptz').replace(/^timestamp without time zone/, 'timestamp');
}

/** The columns every `T_history` adds to `T`'s, with their types (src/store/sql/history.sql). */
const HISTORY_COLUMN_TYPES: Record<string, string> = { known_from: 'timestamptz', known_to: 'timestamptz', closing_raw_response_id: 'bigint' };

/** Declared tables and views of the declaration modules, by `schema.name`. */
function declared(modules: readonly Record<string, unknown>[]): Map<string, { kind: CatalogRelation['kind']; columns: { name: string; type?: string }[]; table?: PgTable }> {
  const out = new Map<string, { kind: CatalogRelation['kind']; columns: { name: string; type?: string }[]; table?: PgTable }>();
  for (const value of modules.flatMap((m) => Object.values(m))) {
    if (is(value, PgTable)) {
      const { schema, name } = getTableConfig(value);
      const columns = Object.values(getTableColumns(value) as Record<string, PgColumn>).map((c) => ({ name: c.name, type: shortType(c.getSQLType()) }));
      out.set(qualified(schema ?? 'public', name), { kind: 'table', columns, table: value });
    } else if (isPgView(value) || isPgMaterializedView(value)) {
      const config = isPgView(value) ? getViewConfig(value) : getMaterializedViewConfig(value);
      const columns = Object.entries(config.selectedFields as Record<string, unknown>).map(([prop, f]) =>
        is(f, Column) ? { name: f.name, type: shortType(f.getSQLType()) } : { name: is(f, SQL.Aliased) ? f.fieldAlias : prop },
      );
      out.set(qualified(config.schema ?? 'public', config.name), { kind: isPgView(value) ? 'view' : 'materialized view', columns });
    }
  }
  return out;
}

/** The arguments' types of `at timestamptz, n int`: every argument is written `name type`. */
function argTypes(args: string): string {
  return args
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean)
    .map((a) => a.replace(/^("[^"]+"|\S+)\s+/, ''))
    .join(', ');
}

const sentence = (summary: string) => `${summary.charAt(0).toUpperCase()}${summary.slice(1)}.`;

/** A described relation's comment: what a row is, then what the reference says before and after its columns. */
function relationComment(d: RelationDescription): string {
  return [sentence(d.summary), d.description, d.notes].filter(Boolean).join(' ');
}

/**
 * Every schema, relation, column and function the descriptions and declarations say exists,
 * with its text. Pure: no database. `modules`: the declaration modules (src/schema/warehouse).
 */
export function warehouseCatalog(described: readonly SchemaDescription[] = SCHEMAS, modules: readonly Record<string, unknown>[] = [declarations]): WarehouseCatalog {
  const tables = declared(modules);
  const problems: string[] = [];
  const seen = new Set<string>();
  const versioned = new Map(VERSIONED.map((t) => [qualified(getTableConfig(t).schema ?? 'public', getTableConfig(t).name), t]));
  const archives = new Map(
    DAILY_ARCHIVES.map((a) => {
      const name = (t: PgTable) => qualified(getTableConfig(t).schema ?? 'public', getTableConfig(t).name);
      return [name(a.archive), { source: name(a.source), universe: name(a.universe) }];
    }),
  );
  const keyOf = (table: PgTable | undefined) => {
    if (!table) return [];
    try {
      return rulesOf(table).key.map((c) => c.name);
    } catch {
      return [];
    }
  };

  const schemas = described.map((s): CatalogSchema => {
    const relations: CatalogRelation[] = [];
    const functions: CatalogFunction[] = [];
    const ownText = (d: RelationDescription, column: string): Pick<CatalogColumn, 'text' | 'from'> => {
      const own = d.columns[column];
      if (own !== undefined) return { text: own, from: 'own' };
      if (s.sharedColumns && EVERY_ROW[column] !== undefined) return { text: EVERY_ROW[column], from: 'every-row' };
      if (s.sharedColumns && SHARED_COLUMNS[column] !== undefined) return { text: SHARED_COLUMNS[column], from: 'shared' };
      return { from: 'own' };
    };

    const describe = (name: string, d: RelationDescription | ViewDescription, kind: CatalogRelation['kind']) => {
      const id = qualified(s.name, name);
      seen.add(id);
      const decl = tables.get(id);
      if (!decl && kind === 'table') problems.push(`${id}: described, but no such table is declared in src/schema/warehouse`);
      if (decl && decl.kind !== kind) problems.push(`${id}: described as a ${kind}, declared as a ${decl.kind}`);
      const columnNames = decl ? decl.columns : Object.keys(d.columns).map((n) => ({ name: n }));
      for (const c of Object.keys(d.columns)) {
        if (decl && !decl.columns.some((x) => x.name === c)) problems.push(`${id}.${c}: described, but ${id} declares no such column`);
      }
      const columns = columnNames.map((c): CatalogColumn => ({ ...c, ...ownText(d, c.name) }));
      const view = d as ViewDescription;
      const isVersioned = versioned.has(id) || (kind !== 'table' && view.hasAsOf === true);
      const dataTime = versioned.has(id) ? dataTimeColumn(versioned.get(id)!) : undefined;
      const relation: CatalogRelation = {
        kind,
        schema: s.name,
        name,
        description: d,
        key: view.key ? [...view.key] : keyOf(decl?.table),
        columns,
        comment: relationComment(d),
        versioned: isVersioned,
        ...(dataTime ? { dataTime } : {}),
      };
      relations.push(relation);
      if (isVersioned && kind !== 'table') {
        functions.push({ schema: s.name, name: `${name}_as_of`, args: 'at timestamptz', argTypes: 'timestamptz', comment: asOfView(id, d.asOf), base: id });
      } else if (isVersioned) {
        // The database makes `T_history` from `T` (src/store/sql/history.sql): `T`'s columns, then the version's.
        relations.push({
          kind: 'table',
          schema: s.name,
          name: `${name}_history`,
          key: [],
          columns: [
            ...columns.map((c): CatalogColumn => ({ ...c, from: 'base' })),
            ...Object.entries(HISTORY_COLUMN_TYPES).map(([c, type]): CatalogColumn => ({ name: c, type, text: HISTORY_COLUMNS[c], from: 'rule' })),
          ],
          comment: historyTable(id, d.summary),
          derived: { rule: 'history', base: id },
          versioned: false,
        });
        functions.push({ schema: s.name, name: `${name}_as_of`, args: 'at timestamptz', argTypes: 'timestamptz', comment: asOfFunction(id, d.asOf), base: id });
        // The database makes `T_changes` from `T` too (src/store/sql/changes.sql).
        functions.push({ schema: s.name, name: `${name}_changes`, args: 'from_at timestamptz, to_at timestamptz', argTypes: 'timestamptz, timestamptz', comment: changesFunction(id, dataTime), base: id });
      }
      for (const [archive, { source, universe }] of archives) {
        if (source !== id) continue;
        const [archiveSchema, archiveName] = archive.split('.') as [string, string];
        seen.add(archive);
        const decl = tables.get(archive);
        relations.push({
          kind: 'table',
          schema: archiveSchema,
          name: archiveName,
          key: keyOf(decl?.table),
          columns: (decl?.columns ?? []).map((c) => {
            const fromBase = columns.find((b) => b.name === c.name);
            if (fromBase) return { ...c, text: fromBase.text, from: 'base' };
            return { ...c, text: ARCHIVE_COLUMNS[c.name], from: 'rule' };
          }),
          comment: dailyArchive(source, universe),
          derived: { rule: 'archive', base: source, universe },
          versioned: false,
        });
      }
    };

    for (const [name, d] of Object.entries(s.tables ?? {})) describe(name, d, 'table');
    for (const [name, d] of Object.entries(s.views ?? {})) describe(name, d, d.materialized ? 'materialized view' : 'view');
    for (const [signature, comment] of Object.entries(s.functions ?? {})) {
      const m = /^([\w$]+)\((.*)\)$/s.exec(signature.trim());
      if (!m) {
        problems.push(`${s.name}.${signature}: a function is described as name(arg type, ...)`);
        continue;
      }
      functions.push({ schema: s.name, name: m[1]!, args: m[2]!.trim(), argTypes: argTypes(m[2]!), comment });
    }
    // Declared in this schema but described nowhere: listed, without text, so that the tests name them.
    for (const [id, decl] of tables) {
      if (!id.startsWith(`${s.name}.`) || seen.has(id)) continue;
      seen.add(id);
      problems.push(`${id}: declared in src/schema/warehouse, but src/schema/warehouse/descriptions/${s.name}.ts does not describe it`);
      relations.push({
        kind: decl.kind,
        schema: s.name,
        name: id.slice(s.name.length + 1),
        key: keyOf(decl.table),
        columns: decl.columns.map((c) => ({ ...c, from: 'own' })),
        versioned: false,
      });
    }
    return { description: s, relations, functions };
  });

  for (const id of tables.keys()) {
    if (!seen.has(id)) problems.push(`${id}: declared in src/schema/warehouse, in a schema no SchemaDescription covers (src/schema/warehouse/descriptions/index.ts SCHEMAS)`);
  }
  for (const s of schemas) {
    if (!s.description.description.trim()) problems.push(`${s.description.name}: the schema has no description`);
    for (const r of s.relations) {
      for (const c of r.columns) {
        if (!c.text?.trim()) problems.push(`${r.schema}.${r.name}.${c.name}: no description (add it to src/schema/warehouse/descriptions/${r.schema}.ts)`);
      }
    }
  }
  return { schemas, problems };
}
