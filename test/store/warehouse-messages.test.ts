// A warehouse that cannot be used says why in one line, naming the variable to fix and where
// it points (never a password): a TE_DATA_DIR on a read-only file system, one this user may
// not write or whose warehouse another user made, one under a file; a DATABASE_URL with a wrong password, naming a missing
// database, or pointing where nothing answers. Each runs the real CLI.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, WarehouseError } from '../../src/lib/errors.ts';
import { databaseUrlFailure } from '../../src/store/connection.ts';
import { patience } from '../helpers/patience.ts';
import { runCli } from '../helpers/cli.ts';
import { freePort, startOwnPostgres, type OwnPostgres } from '../helpers/own-servers.ts';

const asRoot = userInfo().uid === 0;

/**
 * Runs the command in a mount namespace of its own where `dir` is a file system mounted
 * read-only, holding one folder `data` made before it turned read-only (as a read-only
 * TE_DATA_DIR is found). Root may mount; another user does it in a user namespace.
 */
function readOnlyAt(dir: string): string[] {
  const script = `mount -t tmpfs tmpfs '${dir}' && mkdir '${dir}/data' && mount -o remount,ro '${dir}' && exec "$0" "$@"`;
  return ['unshare', ...(asRoot ? ['-m'] : ['-r', '-m']), 'sh', '-c', script];
}

/** Runs the command as an ordinary user (nobody), as on a laptop: root passes every permission check. */
const AS_A_USER = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];

interface Case {
  name: string;
  command: string;
  env: () => Record<string, string>;
  wrap?: () => string[];
  code: number;
  /** The one line on stderr. */
  line: () => RegExp;
}

describe('a warehouse that cannot be used: one line naming the cause and the variable', () => {
  let pg: OwnPostgres;
  let scratch: string;
  let readOnly: string;
  let rootOwned: string;
  let password: string;
  let refusedPort = 0;
  // No English word of 8 letters in it: the scrub of secrets (src/lib/secrets.ts) would blank that word in tesync's own message too.
  const WRONG = 'wr0ng-pw-canary-7f3a';
  beforeAll(async () => {
    pg = await startOwnPostgres('tesync-messages');
    password = decodeURIComponent(new URL(pg.url).password);
    scratch = mkdtempSync(path.join(tmpdir(), 'tesync-messages-'));
    readOnly = path.join(scratch, 'ro');
    mkdirSync(readOnly);
    // A folder owned by root, readable by everyone: the ordinary user may not create in it.
    rootOwned = path.join(scratch, 'owned');
    mkdirSync(rootOwned, { mode: 0o755 });
    // ...holding an embedded warehouse folder that user made, private to them.
    mkdirSync(path.join(rootOwned, 'postgres'), { mode: 0o700 });
    // Not root: this user made them, so take its own write permission away instead.
    if (!asRoot) {
      chmodSync(path.join(rootOwned, 'postgres'), 0o500);
      chmodSync(rootOwned, 0o555);
    }
    writeFileSync(path.join(scratch, 'a-file'), 'not a folder\n');
    // mkdtemp makes it 0700: the ordinary user must reach the folders in it.
    chmodSync(scratch, 0o755);
    refusedPort = await freePort();
  }, patience(120_000));
  afterAll(async () => {
    await pg?.cleanup();
    if (!scratch) return;
    if (!asRoot) {
      chmodSync(rootOwned, 0o755);
      chmodSync(path.join(rootOwned, 'postgres'), 0o700);
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The server's URL with another password, user or database. */
  const withUrl = (change: (u: URL) => void) => {
    const u = new URL(pg.url);
    change(u);
    return u.toString();
  };
  const where = () => `127\\.0\\.0\\.1:${new URL(pg.url).port}`;

  const cases: Case[] = [
    {
      name: 'read-only TE_DATA_DIR',
      command: 'status',
      env: () => ({ TE_DATA_DIR: path.join(readOnly, 'data') }),
      wrap: () => readOnlyAt(readOnly),
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: TE_DATA_DIR: ${esc(readOnly)}/data cannot hold the embedded warehouse: cannot create ${esc(readOnly)}/data/postgres: read-only file system \\(EROFS\\); `),
    },
    {
      name: 'missing TE_DATA_DIR whose parent cannot be created (read-only file system)',
      command: 'migrate',
      env: () => ({ TE_DATA_DIR: path.join(readOnly, 'new', 'data') }),
      wrap: () => readOnlyAt(readOnly),
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: TE_DATA_DIR: ${esc(readOnly)}/new/data cannot hold the embedded warehouse: cannot create ${esc(readOnly)}/new: read-only file system \\(EROFS\\); `),
    },
    {
      name: 'TE_DATA_DIR this user may not create (not root)',
      command: 'status',
      env: () => ({ TE_DATA_DIR: path.join(rootOwned, 'data') }),
      wrap: () => AS_A_USER,
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: TE_DATA_DIR: ${esc(rootOwned)}/data cannot hold the embedded warehouse: cannot create ${esc(rootOwned)}/data: permission denied for (user|uid) \\S+ \\(EACCES\\); `),
    },
    {
      name: 'TE_DATA_DIR whose warehouse another user made (not root)',
      command: 'migrate',
      env: () => ({ TE_DATA_DIR: rootOwned }),
      wrap: () => AS_A_USER,
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: TE_DATA_DIR: ${esc(rootOwned)} cannot hold the embedded warehouse: cannot write in ${esc(rootOwned)}/postgres: permission denied for (user|uid) \\S+ \\(EACCES\\); `),
    },
    {
      name: 'TE_DATA_DIR under a file',
      command: 'migrate',
      env: () => ({ TE_DATA_DIR: path.join(scratch, 'a-file', 'data') }),
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: TE_DATA_DIR: ${esc(scratch)}/a-file/data cannot hold the embedded warehouse: ${esc(scratch)}/a-file is a file, not a folder \\(ENOTDIR\\); `),
    },
    {
      name: 'DATABASE_URL with a wrong password',
      command: 'status',
      env: () => ({ DATABASE_URL: withUrl((u) => (u.password = WRONG)) }),
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: DATABASE_URL: Postgres at ${where()}/tesync was reached but refused the login: password authentication failed for user "tesync" \\(28P01\\); check the user name and password in DATABASE_URL$`),
    },
    {
      name: 'DATABASE_URL without the password the server asks for',
      command: 'migrate',
      env: () => ({ DATABASE_URL: withUrl((u) => (u.password = '')) }),
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: DATABASE_URL: Postgres at ${where()}/tesync was reached but refused the login: .*\\(28P01\\)`),
    },
    {
      name: 'DATABASE_URL naming a missing database',
      command: 'migrate',
      env: () => ({ DATABASE_URL: withUrl((u) => (u.pathname = '/no_such_warehouse')) }),
      code: 2,
      line: () => new RegExp(`^tesync: configuration error: DATABASE_URL: Postgres at ${where()} was reached, but database "no_such_warehouse" does not exist \\(3D000\\): create it, or name an existing database in DATABASE_URL$`),
    },
    {
      name: 'DATABASE_URL at a port nothing listens on',
      command: 'status',
      env: () => ({ DATABASE_URL: `postgres://tesync:${password}@127.0.0.1:${refusedPort}/tesync` }),
      code: 1,
      line: () => new RegExp(`^tesync: warehouse: cannot reach Postgres at 127\\.0\\.0\\.1:${refusedPort}/tesync \\(DATABASE_URL\\): connection refused \\(ECONNREFUSED\\): nothing listens on that host and port$`),
    },
    {
      name: 'DATABASE_URL at a host that does not exist',
      command: 'migrate',
      env: () => ({ DATABASE_URL: `postgres://tesync:${password}@db.example.invalid:5432/tesync` }),
      code: 1,
      line: () => /^tesync: warehouse: cannot reach Postgres at db\.example\.invalid:5432\/tesync \(DATABASE_URL\): no such host "db\.example\.invalid" \(ENOTFOUND\)$/,
    },
  ];

  it.concurrent.each(cases)('$name: tesync $command exits $code with one line', async (c) => {
    const r = await runCli([c.command], c.env(), { cwd: scratch, wrap: c.wrap?.() ?? [], timeoutMs: 30_000 });
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(c.line());
    expect(r.code, r.stderr).toBe(c.code);
    expect(r.stdout).toBe('');
    // Never a password: the server's, nor the wrong one tried.
    for (const secret of [password, WRONG]) expect(r.stderr).not.toContain(secret);
  });
});

describe('the cause of a failed first connection, for the cases a test cannot make quickly', () => {
  const url = 'postgres://alice:pa%24%24word-canary@db.internal:6543/wh';

  it('a server that does not answer in time: cannot reach, exit 1, the variable named', () => {
    const err = databaseUrlFailure(Object.assign(new Error('write CONNECT_TIMEOUT db.internal:6543'), { code: 'CONNECT_TIMEOUT' }), url);
    expect(err).toBeInstanceOf(WarehouseError);
    expect(err.message).toBe('cannot reach Postgres at db.internal:6543/wh (DATABASE_URL): no answer within 10 s (CONNECT_TIMEOUT)');
  });

  it('a login refused by pg_hba.conf or an unknown role (28000): configuration, naming DATABASE_URL', () => {
    const refused = Object.assign(new Error('no pg_hba.conf entry for host "10.0.0.5", user "alice", database "wh", no encryption'), { name: 'PostgresError', code: '28000' });
    const err = databaseUrlFailure(refused, url);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(
      'DATABASE_URL: Postgres at db.internal:6543/wh was reached but refused the login: no pg_hba.conf entry for host "10.0.0.5", user "alice", database "wh", no encryption (28000); check the user name in DATABASE_URL (and the server\'s pg_hba.conf)',
    );
  });

  it('never repeats the password, even when an error message carries it', () => {
    for (const code of ['ECONNRESET', undefined]) {
      const err = databaseUrlFailure(Object.assign(new Error('bad things near pa$$word-canary and pa%24%24word-canary'), { code }), url);
      expect(err.message).not.toContain('word-canary');
      expect(err.message).toContain('(DATABASE_URL)');
    }
  });
});

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
