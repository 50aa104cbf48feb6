// The SQL files are repeatable migrations: a migrated warehouse holds every file's state and
// a second migrate runs none; a file runs again when its text, its objects or the schema
// changed. history.sql makes a versioned table's history from the table itself: a table it
// never saw gets its history, trigger, constraint and as-of function, and a column the table
// gains later reaches its history (nullable: the versions before it had none).
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySqlFiles, fingerprint, SQL_FILES } from '../../../src/store/schema/sql-files.ts';
import { patience } from '../../helpers/patience.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

describe('fingerprint', () => {
  it('changes with the text, the objects and the schema, and with nothing else', () => {
    const base = fingerprint('select 1;', [['f', 'app', 't']], '0015_x');
    expect(fingerprint('select 1;', [['f', 'app', 't']], '0015_x')).toBe(base);
    expect(fingerprint('select 2;', [['f', 'app', 't']], '0015_x')).not.toBe(base);
    expect(fingerprint('select 1;', [['f', 'app', 'u']], '0015_x')).not.toBe(base);
    expect(fingerprint('select 1;', [['f', 'app', 't']], '0016_y')).not.toBe(base);
  });
});

describe('SQL files on a warehouse', () => {
  const w = useTestWarehouse();
  let sql: postgres.Sql;
  beforeAll(async () => {
    sql = postgres(w.databaseUrl, { max: 1, onnotice: () => {} });
  }, patience(60_000));
  afterAll(async () => {
    await sql?.end();
  });

  it('a migrated warehouse holds every file; the same state runs nothing again, another schema runs them all', async () => {
    const applied = await sql<{ name: string }[]>`select name from drizzle.__tesync_sql_files order by name`;
    expect(applied.map((r) => r.name)).toEqual(SQL_FILES.map((f) => f.name).sort());
    const state = (await sql<{ fingerprint: string }[]>`select fingerprint from drizzle.__tesync_sql_files where name = 'history.sql'`)[0]!.fingerprint;
    // migrate() passes the last drizzle migration's tag; the files were applied for it.
    const { readFileSync } = await import('node:fs');
    const journal = JSON.parse(readFileSync(new URL('../../../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as { entries: { tag: string }[] };
    const tag = journal.entries.at(-1)!.tag;
    expect(await applySqlFiles(sql, tag)).toEqual([]);
    expect(await applySqlFiles(sql, `${tag}+1`)).toEqual(SQL_FILES.map((f) => f.name));
    expect((await sql<{ fingerprint: string }[]>`select fingerprint from drizzle.__tesync_sql_files where name = 'history.sql'`)[0]!.fingerprint).not.toBe(state);
    await applySqlFiles(sql, tag);
  });

  it('history.sql versions a table it has not seen, and follows its columns', async () => {
    await sql.unsafe(`create table app.sql_files_probe (slug text primary key, value numeric not null, note text,
      fetched_at timestamptz not null default sync.known_at(), raw_response_id bigint)`);
    await sql.unsafe(`create index sql_files_probe_value_idx on app.sql_files_probe (value)`);
    const files = [{ name: 'history.sql', perObject: () => [['sync.keep_history', 'app', 'sql_files_probe']] }];
    expect(await applySqlFiles(sql, 'probe-1', files)).toEqual(['history.sql']);

    const columns = async () =>
      (await sql<{ column_name: string; data_type: string; is_nullable: string }[]>`
        select column_name, data_type, is_nullable from information_schema.columns
         where table_schema = 'app' and table_name = 'sql_files_probe_history' order by ordinal_position`).map((c) => `${c.column_name} ${c.data_type} ${c.is_nullable}`);
    expect(await columns()).toEqual([
      'slug text NO',
      'value numeric NO',
      'note text YES',
      'fetched_at timestamp with time zone NO',
      'raw_response_id bigint YES',
      'known_from timestamp with time zone NO',
      'known_to timestamp with time zone NO',
      'closing_raw_response_id bigint YES',
    ]);
    const indexes = await sql<{ indexname: string }[]>`select indexname from pg_indexes where schemaname = 'app' and tablename = 'sql_files_probe_history' order by 1`;
    expect(indexes.map((i) => i.indexname)).toEqual(['sql_files_probe_history_key_idx', 'sql_files_probe_history_no_overlap', 'sql_files_probe_history_value_idx']);

    // Versions: written on three transactions, read back as known at each.
    const at = async (statement: string) =>
      sql.begin(async (tx) => {
        // As text, and sent as text: a Date would drop the microseconds known time has.
        const [row] = await tx<{ known: string }[]>`select sync.begin_write(null)::text as known`;
        await tx.unsafe(statement);
        return row!.known;
      });
    const t1 = await at(`insert into app.sql_files_probe (slug, value) values ('a', 1.10)`);
    const t2 = await at(`update app.sql_files_probe set value = 2.20 where slug = 'a'`);
    const t3 = await at(`delete from app.sql_files_probe where slug = 'a'`);
    const asOf = async (t: string) => (await sql<{ value: string }[]>`select value::text from app.sql_files_probe_as_of(${t}::text::timestamptz)`).map((r) => r.value);
    expect(await asOf(t1)).toEqual(['1.10']);
    expect(await asOf(t2)).toEqual(['2.20']);
    expect(await asOf(t3)).toEqual([]);
    // The constraint refuses an overlapping version.
    await expect(sql.unsafe(`insert into app.sql_files_probe_history (slug, value, fetched_at, known_from, known_to) values ('a', 9, now(), '${t1}', '${t3}')`)).rejects.toThrow(/no_overlap/);

    // A column the table gains, and one it lets be null: the history follows.
    await sql.unsafe(`alter table app.sql_files_probe add column extra integer, alter column value drop not null`);
    expect(await applySqlFiles(sql, 'probe-2', files)).toEqual(['history.sql']);
    expect(await columns()).toEqual(expect.arrayContaining(['value numeric YES', 'extra integer YES']));
    await at(`insert into app.sql_files_probe (slug, value, extra) values ('b', null, 7)`);
    const t5 = await at(`update app.sql_files_probe set extra = 8 where slug = 'b'`);
    expect(await sql<{ extra: number }[]>`select extra from app.sql_files_probe_as_of(${t5}::text::timestamptz - interval '1 microsecond')`).toEqual([{ extra: 7 }]);
  });
});
