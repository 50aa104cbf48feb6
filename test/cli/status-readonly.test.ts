// `tesync status` only reads. Pointed at a database that is not a tesync warehouse (empty, or
// another application's drizzle migrations), or at one of another tesync release, it says so
// in one line and exits 2, and the database is left exactly as it was: no schema created, no
// migration applied. `tesync sql` with DATABASE_URL does not touch the database either. Bad
// numbers for the checks exit 2 naming the flag, before anything is opened.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/store/schema/migration-state.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase, type BlockDatabase } from '../helpers/mirror-fixture.ts';

const PASSWORD = 'not-shown-anywhere';
const journal = readJournal();
const expected = journal.length;
const expectedTag = journal.at(-1)!.tag;

/** The URL with a password (the test server trusts local connections and ignores it). */
const withPassword = (url: string) => {
  const u = new URL(url);
  u.password = PASSWORD;
  return u.toString();
};

/** The schemas and tables a database holds beside Postgres's own. */
async function contents(url: string): Promise<{ schemas: string[]; tables: string[] }> {
  const c = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const schemas = await c<{ nspname: string }[]>`select nspname from pg_namespace where nspname not like 'pg\\_%' and nspname not in ('information_schema', 'public') order by 1`;
    const tables = await c<{ t: string }[]>`select table_schema || '.' || table_name as t from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema') order by 1`;
    return { schemas: schemas.map((r) => r.nspname), tables: tables.map((r) => r.t) };
  } finally {
    await c.end();
  }
}

async function onDatabase<T>(url: string, f: (c: postgres.Sql) => Promise<T>): Promise<T> {
  const c = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await f(c);
  } finally {
    await c.end();
  }
}

const oneLine = (stderr: string) => {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0]!;
};

describe('a database without tesync schema', () => {
  const empty = useTestDatabase();
  const foreign = useTestDatabase();
  beforeAll(async () => {
    // Another application's drizzle migrations: the same table, none of tesync's.
    await onDatabase(foreign.databaseUrl, async (c) => {
      await c.unsafe('create schema drizzle');
      await c.unsafe('create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)');
      await c.unsafe("insert into drizzle.__drizzle_migrations (hash, created_at) values ('theirs', 1700000000000)");
    });
  });

  it.each([[['status']], [['status', '--max-age', '24']], [['status', '--json', '--max-unconfirmed', '24']]])('%j on an empty database: exit 2, says so, creates nothing', async (args) => {
    const r = await runCli(args, { DATABASE_URL: withPassword(empty.databaseUrl) });
    expect(r.code, r.stdout).toBe(2);
    expect(r.stdout).toBe('');
    const line = oneLine(r.stderr);
    expect(line).toBe(
      `tesync: not a tesync warehouse: Postgres at 127.0.0.1:${new URL(empty.databaseUrl).port || '5432'}/${empty.name} has no tesync schema; point DATABASE_URL at your tesync warehouse, or run \`tesync migrate\` to make this database one`,
    );
    expect(line).not.toContain(PASSWORD);
    expect(await contents(empty.databaseUrl)).toEqual({ schemas: [], tables: [] });
  });

  it('`tesync sql` with DATABASE_URL: exit 2, nothing created', async () => {
    const r = await runCli(['sql'], { DATABASE_URL: withPassword(empty.databaseUrl) });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/^tesync: DATABASE_URL is set: query Postgres at .+ directly; `tesync sql` serves only the embedded warehouse$/);
    expect(r.stderr).not.toContain(PASSWORD);
    expect(await contents(empty.databaseUrl)).toEqual({ schemas: [], tables: [] });
  });

  it("another application's drizzle migrations: not a tesync warehouse, left as they were", async () => {
    const r = await runCli(['status'], { DATABASE_URL: foreign.databaseUrl });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/^tesync: not a tesync warehouse: Postgres at .+ has no tesync schema;/);
    expect(await contents(foreign.databaseUrl)).toEqual({ schemas: ['drizzle'], tables: ['drizzle.__drizzle_migrations'] });
    expect(await onDatabase(foreign.databaseUrl, (c) => c`select hash, created_at::text from drizzle.__drizzle_migrations`)).toEqual([{ hash: 'theirs', created_at: '1700000000000' }]);
  });
});

describe('a warehouse of another tesync release', () => {
  const older = useTestDatabase({ migrated: true });
  const newer = useTestDatabase({ migrated: true });
  const recorded = (db: BlockDatabase) => onDatabase(db.databaseUrl, async (c) => Number((await c<{ n: string }[]>`select count(*)::text as n from drizzle.__drizzle_migrations`)[0]!.n));
  beforeAll(async () => {
    // As an older tesync left it: its record ends at the twelfth migration.
    await onDatabase(older.databaseUrl, (c) => c`delete from drizzle.__drizzle_migrations where created_at > ${journal[11]!.when}`);
    // As a newer one left it: one migration this tesync does not know.
    await onDatabase(newer.databaseUrl, (c) => c`insert into drizzle.__drizzle_migrations (hash, created_at) values ('newer', ${journal.at(-1)!.when + 86_400_000})`);
  });

  it('older: names both migrations and says to run `tesync migrate`; migrates nothing', async () => {
    const r = await runCli(['status', '--max-age', '24'], { DATABASE_URL: older.databaseUrl });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      `tesync: warehouse is at migration 12 (${journal[11]!.tag}), this tesync expects ${expected} (${expectedTag}): run \`tesync migrate\` (Postgres at 127.0.0.1:5432/${older.name})`,
    );
    expect(await recorded(older)).toBe(12);
  });

  it('newer: says so; migrates nothing', async () => {
    const r = await runCli(['status'], { DATABASE_URL: newer.databaseUrl });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(
      `tesync: warehouse is at migration ${expected + 1}, newer than this tesync, which expects ${expected} (${expectedTag}): run a tesync as new as the one that migrated it (Postgres at 127.0.0.1:5432/${newer.name})`,
    );
    expect(await recorded(newer)).toBe(expected + 1);
  });
});

describe('bad numbers for the checks', () => {
  const empty = useTestDatabase();

  // [arguments, the flag the message names]
  // The rest of the refused forms are tested on the parser itself (status-format.test.ts).
  const cases: [string[], string][] = [
    [['--max-age', 'abc'], '--max-age'],
    [['--max-age', '-3'], '--max-age'],
    [['--max-age=-3'], '--max-age'],
    [['--max-age', '0'], '--max-age'],
    [['--max-age', ''], '--max-age'],
    [['--max-age'], '--max-age'],
    [['--max-age', '--json'], '--max-age'],
    [['--max-unconfirmed', 'abc'], '--max-unconfirmed'],
    [['--max-unconfirmed', '-1.5'], '--max-unconfirmed'],
    [['--max-age', '24', '--max-unconfirmed', '0'], '--max-unconfirmed'],
  ];
  it.concurrent.each(cases)('status %j: exit 2, one line naming %s, before opening anything', async (args, flag) => {
    const r = await runCli(['status', ...args], { DATABASE_URL: empty.databaseUrl });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const line = oneLine(r.stderr);
    // With --json, the error is a JSON line (src/cli/commands.ts); otherwise `tesync: ...`.
    const message = line.startsWith('{') ? (JSON.parse(line) as { error: { message: string } }).error.message : line.replace(/^tesync: /, '');
    expect(message).toMatch(new RegExp(`^${flag} (must be|needs) a number of hours greater than 0`));
  });

  afterAll(async () => {
    // Refused before the database was opened: still empty.
    expect(await contents(empty.databaseUrl)).toEqual({ schemas: [], tables: [] });
  });
});
