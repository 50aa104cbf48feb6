// SQL that drizzle does not generate lives in src/store/sql/ as plain files, applied as
// repeatable migrations, and so is SQL generated from declarations (the analytics views): made
// when applied, under a file name of its own, and stored nowhere, so that the declarations are
// its one source. After the drizzle migrations, a file runs again whenever its text or the
// schema it stands on changed (the last drizzle migration, the versioned tables), and is
// skipped otherwise, so a warehouse in step pays one read. Each file can run again; what it
// replaces is never re-emitted as a numbered migration. Their state is kept beside drizzle's
// own (`drizzle.__tesync_sql_files`).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { ARCHIVE_DAY_COLUMN } from '../../schema/warehouse/columns.ts';
import { changeRules, DAILY_ARCHIVES, VERSIONED } from '../../schema/warehouse/history.ts';
import { analyticsSqlFile } from './analytics-sql.ts';

export const SQL_FOLDER = fileURLToPath(new URL('../sql/', import.meta.url));

export interface SqlFile {
  /** The file under src/store/sql/, or the name generated SQL is applied and recorded under. */
  name: string;
  /** Generated SQL: its text, made from declarations when applied instead of read from a file. */
  generated?: () => string;
  /** Calls that apply it to each object it serves, after it ran: `[function, ...arguments]`. */
  perObject?: () => readonly (readonly string[])[];
}

const qualifiedName = (t: PgTable) => {
  const { schema, name } = getTableConfig(t);
  return [schema ?? 'public', name] as const;
};

/** In order: the others read the as-of functions the history file makes. */
export const SQL_FILES: readonly SqlFile[] = [
  { name: 'history.sql', perObject: () => VERSIONED.map((t) => ['sync.keep_history', ...qualifiedName(t)]) },
  {
    name: 'changes.sql',
    perObject: () =>
      VERSIONED.map((t) => {
        const { dataTime, bookkeeping } = changeRules(t);
        return ['sync.create_changes', ...qualifiedName(t), dataTime, bookkeeping];
      }),
  },
  { name: 'daily-archive.sql', perObject: () => DAILY_ARCHIVES.map((a) => ['sync.track_archive_days', ...qualifiedName(a.archive), ARCHIVE_DAY_COLUMN]) },
  { name: 'analytics.sql', generated: analyticsSqlFile },
  // The outbox's triggers and transitions (on the tables of the drizzle migrations).
  { name: 'notifications.sql' },
];

const sqlText = (file: SqlFile) => file.generated?.() ?? readFileSync(`${SQL_FOLDER}${file.name}`, 'utf8');

/** What a file is applied as on top of `schema`: its text, its per-object calls, and the fingerprint recorded for them. */
export function sqlFileWork(file: SqlFile, schema: string): { text: string; calls: readonly (readonly string[])[]; print: string } {
  const text = sqlText(file);
  const calls = file.perObject?.() ?? [];
  return { text, calls, print: fingerprint(text, calls, schema) };
}

/** What a file's application depends on: its text, its per-object calls and the schema (`schema`: the last drizzle migration). Pure. */
export function fingerprint(text: string, calls: readonly (readonly string[])[], schema: string): string {
  return createHash('sha256').update(JSON.stringify([text, calls, schema])).digest('hex');
}

const STATE = 'CREATE TABLE IF NOT EXISTS "drizzle"."__tesync_sql_files" (name text PRIMARY KEY, fingerprint text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())';

/**
 * Applies every SQL file whose fingerprint changed, on `sql` (a connection the caller holds
 * the migration lock on). `schema` names the state the drizzle migrations left.
 */
export async function applySqlFiles(sql: Sql, schema: string, files: readonly SqlFile[] = SQL_FILES): Promise<string[]> {
  await sql.unsafe('CREATE SCHEMA IF NOT EXISTS "drizzle"');
  await sql.unsafe(STATE);
  const applied = new Map((await sql<{ name: string; fingerprint: string }[]>`select name, fingerprint from "drizzle"."__tesync_sql_files"`).map((r) => [r.name, r.fingerprint]));
  const ran: string[] = [];
  for (const file of files) {
    const { text, calls, print } = sqlFileWork(file, schema);
    if (applied.get(file.name) === print) continue;
    // One transaction per file, on the caller's connection (a reserved one has no `begin`).
    await sql.unsafe('begin');
    try {
      await sql.unsafe(text);
      for (const [fn, ...args] of calls) await sql.unsafe(`select ${fn}(${args.map((_, i) => `$${i + 1}`).join(', ')})`, [...args]);
      await sql`insert into "drizzle"."__tesync_sql_files" (name, fingerprint) values (${file.name}, ${print})
                on conflict (name) do update set fingerprint = excluded.fingerprint, applied_at = now()`;
      await sql.unsafe('commit');
    } catch (err) {
      await sql.unsafe('rollback').catch(() => {});
      throw err;
    }
    ran.push(file.name);
  }
  return ran;
}
