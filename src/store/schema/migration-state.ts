// Which of tesync's migrations a database has, read without changing anything. Read-only
// commands (`tesync status`) must never migrate: a database they were pointed at by mistake
// stays as it was, and a warehouse of another tesync release is named as such instead of
// being moved to this one's schema behind its owner's back.
//
// drizzle records each applied migration in `drizzle.__drizzle_migrations` with the journal's
// `when` as `created_at` and applies those whose `when` is after the newest recorded one; the
// SQL files (sql-files.ts) keep their fingerprints in `drizzle.__tesync_sql_files`.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { MIGRATIONS_FOLDER, type Warehouse } from '../connection.ts';
import { SQL_FILES, sqlFileWork, type SqlFile } from './sql-files.ts';

export interface JournalEntry {
  tag: string;
  /** drizzle's `folderMillis`: what `created_at` records for this migration. */
  when: number;
}

export type MigrationState =
  /** No migration of tesync's recorded (no tesync schema, or another application's drizzle table): not a tesync warehouse. */
  | { state: 'none' }
  | {
      /** `behind`: an older tesync's schema; `ahead`: a newer one's; `current`: this tesync's. */
      state: 'behind' | 'current' | 'ahead';
      /** Migrations recorded. */
      applied: number;
      /** The newest recorded migration's tag; null when this tesync does not know it (`ahead`). */
      appliedTag: string | null;
      /** This tesync's migrations. */
      expected: number;
      expectedTag: string;
    };

export function readJournal(folder = MIGRATIONS_FOLDER): JournalEntry[] {
  const journal = JSON.parse(readFileSync(`${folder}/meta/_journal.json`, 'utf8')) as { entries: JournalEntry[] };
  return journal.entries.map((e) => ({ tag: e.tag, when: Number(e.when) }));
}

/**
 * Pure: where the recorded migrations (`created_at` of each) stand against this tesync's
 * journal. A record none of whose entries this journal knows is another application's.
 */
export function judgeMigrations(recorded: readonly number[], journal: readonly JournalEntry[]): MigrationState {
  const known = new Map(journal.map((e) => [e.when, e.tag]));
  const last = journal.at(-1);
  if (!last || !recorded.some((w) => known.has(w))) return { state: 'none' };
  const newest = Math.max(...recorded);
  const state = newest < last.when ? 'behind' : newest > last.when ? 'ahead' : 'current';
  return { state, applied: recorded.length, appliedTag: known.get(newest) ?? null, expected: journal.length, expectedTag: last.tag };
}

/** What applying `files` on top of `schemaTag` would record for each: as applySqlFiles computes it. */
export function expectedSqlFingerprints(schemaTag: string, files: readonly SqlFile[] = SQL_FILES): Map<string, string> {
  return new Map(files.map((f) => [f.name, sqlFileWork(f, schemaTag).print]));
}

/** Pure: whether every SQL file's recorded fingerprint is the one this tesync would apply. */
export function sqlFilesInStep(recorded: ReadonlyMap<string, string>, expected: ReadonlyMap<string, string>): boolean {
  return [...expected].every(([name, print]) => recorded.get(name) === print);
}

/**
 * The database's migration state, and (for a warehouse at this tesync's migrations) whether
 * its SQL functions and views are this tesync's too. Only reads: `to_regclass` looks a table
 * up without creating anything.
 */
export async function readMigrationState(w: Warehouse, journal: readonly JournalEntry[] = readJournal()): Promise<MigrationState & { sqlFilesInStep?: boolean }> {
  const [tables] = await w.query<{ migrations: string | null; sql_files: string | null }>(
    sql`select to_regclass('drizzle.__drizzle_migrations')::text as migrations, to_regclass('drizzle.__tesync_sql_files')::text as sql_files`,
  );
  if (!tables?.migrations) return { state: 'none' };
  const rows = await w.query<{ created_at: string | null }>(sql`select created_at::text as created_at from drizzle.__drizzle_migrations`);
  const judged = judgeMigrations(
    rows.flatMap((r) => (r.created_at === null ? [] : [Number(r.created_at)])),
    journal,
  );
  if (judged.state !== 'current') return judged;
  const recorded = tables.sql_files ? await w.query<{ name: string; fingerprint: string }>(sql`select name, fingerprint from drizzle.__tesync_sql_files`) : [];
  return { ...judged, sqlFilesInStep: sqlFilesInStep(new Map(recorded.map((r) => [r.name, r.fingerprint])), expectedSqlFingerprints(judged.expectedTag)) };
}
