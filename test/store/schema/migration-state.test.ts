// Which of tesync's migrations a database has, read without changing anything: the judgement
// is pure (recorded `created_at`s against the journal); reading it on Postgres creates no
// schema, no table and no row.
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { judgeMigrations, readJournal, readMigrationState, sqlFilesInStep } from '../../../src/store/schema/migration-state.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const journal = [
  { tag: '0000_init', when: 1000 },
  { tag: '0001_more', when: 2000 },
  { tag: '0002_last', when: 3000 },
];

describe('judgeMigrations', () => {
  it('nothing recorded, or only what this journal does not know: not a tesync warehouse', () => {
    expect(judgeMigrations([], journal)).toEqual({ state: 'none' });
    expect(judgeMigrations([1_700_000_000_000], journal)).toEqual({ state: 'none' });
  });

  it('behind, current and ahead of this journal, with the count and the tags', () => {
    expect(judgeMigrations([1000, 2000], journal)).toEqual({ state: 'behind', applied: 2, appliedTag: '0001_more', expected: 3, expectedTag: '0002_last' });
    expect(judgeMigrations([3000, 1000, 2000], journal)).toEqual({ state: 'current', applied: 3, appliedTag: '0002_last', expected: 3, expectedTag: '0002_last' });
    expect(judgeMigrations([1000, 2000, 3000, 4000], journal)).toEqual({ state: 'ahead', applied: 4, appliedTag: null, expected: 3, expectedTag: '0002_last' });
  });

  it('the SQL files are in step when every one carries the fingerprint this tesync would apply', () => {
    const expected = new Map([
      ['a.sql', 'x'],
      ['b.sql', 'y'],
    ]);
    expect(sqlFilesInStep(new Map(expected), expected)).toBe(true);
    expect(sqlFilesInStep(new Map([['a.sql', 'x']]), expected)).toBe(false);
    expect(sqlFilesInStep(new Map([...expected, ['b.sql', 'older']]), expected)).toBe(false);
  });
});

describe('readMigrationState on Postgres', () => {
  // Opened as they are: a state is read, never made.
  const empty = useTestWarehouse({ empty: true, migrate: false, maxConnections: 2 });
  const migrated = useTestWarehouse({ migrate: false, maxConnections: 2 });

  it('an empty database: none, and it stays empty', async () => {
    expect(await readMigrationState(empty)).toEqual({ state: 'none' });
    const c = postgres(empty.databaseUrl, { max: 1 });
    try {
      expect(await c`select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname not in ('information_schema', 'public')`).toEqual([]);
    } finally {
      await c.end();
    }
  });

  it("a warehouse tesync migrated: current, SQL files in step; a changed file's fingerprint is not", async () => {
    const all = readJournal();
    expect(await readMigrationState(migrated)).toEqual({ state: 'current', applied: all.length, appliedTag: all.at(-1)!.tag, expected: all.length, expectedTag: all.at(-1)!.tag, sqlFilesInStep: true });
    await migrated.query(sql`update drizzle.__tesync_sql_files set fingerprint = 'an older one' where name = 'analytics.sql'`);
    expect(await readMigrationState(migrated)).toMatchObject({ state: 'current', sqlFilesInStep: false });
  });
});
