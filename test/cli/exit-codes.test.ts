// Exit codes that tell, as a person runs the CLI: a DATABASE_URL that cannot be read is bad
// configuration (exit 2, named, its password never printed, nothing recorded); a --token that
// no stored token list holds is refused before a run is opened (exit 2, no run, no request);
// a source whose key was refused on every request fails the run (exit 1), while a refused app
// key that only costs the bundles leaves it partial (exit 0, with its warning).
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { finalRunStatus } from '../../src/engine/run/run-stats.ts';
import { emptyStats } from '../../src/ports/run-ledger.ts';
import { databaseUrlProblem } from '../../src/lib/config.ts';
import type { RequestSummary } from '../../src/store/books/request-summary.ts';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { freshDatabase, useSimulator } from '../helpers/mirror-fixture.ts';
import { canaryKey, type TestDatabase } from '../helpers/services.ts';
import { commandEnv } from '../helpers/sync.ts';

const APP_KEY = canaryKey('exit_app');
const GW_KEY = canaryKey('exit_gw');
const WRONG_APP_KEY = canaryKey('exit_app_wrong');
const WRONG_GW_KEY = canaryKey('exit_gw_wrong');

/** The rows of sync.runs in a database (read on a connection of the test's own). */
async function runsIn(databaseUrl: string): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from sync.runs`;
    return row!.n;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

describe('databaseUrlProblem (pure)', () => {
  it.each([
    ['postgres://u:p%zz@127.0.0.1/db', /^its password is not percent-encoded right/],
    ['postgres://u%zz:p@127.0.0.1/db', /^its user name is not percent-encoded right/],
    ['postgres://u:p@h%zz/db', /^its host is not percent-encoded right/],
    ['postgres://u:p@[::1/db', /its host has a "\[" with no "\]"/],
    ['postgres://u:p@host:99999/db', /^is not a URL that can be read: check the host and port/],
  ])('%s: %s, never the password', (url, problem) => {
    const said = databaseUrlProblem(url);
    expect(said).toMatch(problem);
    expect(said).not.toMatch(/\bp%zz\b|u:p/);
  });

  it.each(['postgres://u:p@127.0.0.1:5432/db', 'postgres://u:p%25@[::1]:5432/db', 'postgres://u:p@h1:5432,h2:5432/db', 'postgres:///db?host=/var/run/postgresql', 'postgresql://u@%2Fvar%2Frun%2Fpostgresql/db'])('%s reads', (url) => {
    expect(databaseUrlProblem(url)).toBeUndefined();
  });
});

describe('finalRunStatus of a refused key (pure)', () => {
  const requests = (keyRefusals: RequestSummary['keyRefusals']): RequestSummary => ({ total: 20, byStatus: { '200': 10, '401': 10 }, rateLimited: 0, failedAttempts: 0, keyRefusals });
  const refusal = (source: 'app' | 'gateway') => ({ variable: source === 'app' ? ('TE_APP_API_KEY' as const) : ('TE_GATEWAY_API_KEY' as const), source, bucket: source === 'app' ? 'app-key' : 'gateway', refused: 10, answers: { '401 unauthorized': 10 } });

  it('failed when the refused key left its source without data; partial when the source gave some', () => {
    const gatewayRefused = { ...emptyStats(), planned: 11, done: 10, failed: 1, byGroup: { 'app.tokens': { ok: 10 }, 'gateway.tokens': { failed: 1 } } };
    expect(finalRunStatus(gatewayRefused, requests([refusal('gateway')]))).toBe('failed');
    const bundlesRefused = { ...emptyStats(), planned: 20, done: 20, byGroup: { 'app.tokens': { ok: 1 }, 'app.history': { unchanged: 9 }, 'app.bundle': { unauthorized: 10 } } };
    expect(finalRunStatus(bundlesRefused, requests([refusal('app')]))).toBe('partial');
    expect(finalRunStatus({ ...bundlesRefused, byGroup: { 'app.bundle': { unauthorized: 10 }, 'gateway.tokens': { ok: 10 } } }, requests([refusal('app')]))).toBe('failed');
    expect(finalRunStatus(bundlesRefused, requests([]))).toBe('succeeded');
  });
});

describe('exit codes that tell', () => {
  const fx = useSimulator({ tokens: 3, historyDays: 3, chartsPerToken: 1, seed: 45, appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [GW_KEY] });
  /** A migrated database of the case's own. */
  const database = () => freshDatabase({ migrated: true });
  const env = (db: TestDatabase, over: Record<string, string> = {}) => commandEnv(fx.sim, { appKey: APP_KEY, gatewayKey: GW_KEY }, db.databaseUrl, { TE_REQUEST_TIMEOUT_MS: '5000', ...over });
  const printed = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr;
  const noKeyPrinted = (r: { stdout: string; stderr: string }) => {
    for (const key of [APP_KEY, GW_KEY, WRONG_APP_KEY, WRONG_GW_KEY]) expect(printed(r)).not.toContain(key);
  };


  it('a DATABASE_URL that cannot be read: exit 2 naming it and what is wrong, never its password, nothing recorded', async () => {
    const db = await database();
    const requests = fx.sim.requests.length;
    const u = new URL(db.databaseUrl);
    const where = `${u.hostname}:${u.port || '5432'}${u.pathname}`;
    const password = 'pw_canary_7f3a';
    const cases = [
      { url: `postgres://${u.username || 'postgres'}:${password}%zz@${where}`, problem: /^tesync: configuration error: DATABASE_URL: its password is not percent-encoded right: each "%" must be followed by two hex digits \(write a literal % as %25/ },
      { url: `postgres://${u.username || 'postgres'}:${password}@[::1${u.pathname}`, problem: /^tesync: configuration error: DATABASE_URL: is not a URL that can be read: its host has a "\[" with no "\]"/ },
      { url: `postgres://${u.username || 'postgres'}:${password}@${u.hostname}:99999${u.pathname}`, problem: /^tesync: configuration error: DATABASE_URL: is not a URL that can be read: check the host and port/ },
      { url: `garbage ${password}`, problem: /^tesync: configuration error: DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/ },
    ];
    for (const c of cases) {
      for (const command of ['sync', 'migrate', 'status']) {
        const r = await runCli([command], env(db, { DATABASE_URL: c.url }), { timeoutMs: 30_000 });
        expect(r.code, `${command} ${c.url}: ${printed(r)}`).toBe(2);
        expect(r.stderr.trim().split('\n'), c.url).toHaveLength(1);
        expect(r.stderr, c.url).toMatch(c.problem);
        expect(r.stderr).not.toContain('URI malformed');
        expect(printed(r), c.url).not.toContain(password);
        expect(r.stdout).toBe('');
        noKeyPrinted(r);
      }
    }
    expect(await runsIn(db.databaseUrl)).toBe(0);
    expect(fx.sim.requests.length, 'no request sent').toBe(requests);
  }, patience(120_000));

  it('sync --token naming no listed token, once the lists are stored: exit 2 naming it and what was meant, no run, no request', async () => {
    const db = await database();
    const first = await runCli(['sync', '--only', 'tokens'], env(db), { timeoutMs: 60_000 });
    expect(first.code, printed(first)).toBe(0);
    const runs = await runsIn(db.databaseUrl);
    expect(runs).toBe(1);
    const requests = fx.sim.requests.length;

    const r = await runCli(['sync', '--token', 'does-not-exist', '--token', 'Aurora'], env(db), { timeoutMs: 60_000 });
    expect(r.code, printed(r)).toBe(2);
    expect(r.stderr.trim()).toBe(
      'tesync: --token: "does-not-exist", "Aurora" (did you mean aurora?) are in neither token list; nothing was fetched for them (the lists as last fetched; `tesync sync --only tokens` fetches them again)',
    );
    expect(r.stdout).toBe('');
    expect(printed(r)).not.toMatch(/Sync succeeded/);
    noKeyPrinted(r);
    expect(await runsIn(db.databaseUrl), 'no run recorded').toBe(runs);
    expect(fx.sim.requests.length, 'no request sent').toBe(requests);

    // A listed slug beside an unknown one walks the listed one, and names the other after it.
    const mixed = await runCli(['sync', '--token', 'aurora', '--token', 'does-not-exist', '--only', 'tokens'], env(db), { timeoutMs: 60_000 });
    expect(mixed.code, printed(mixed)).toBe(2);
    expect(mixed.stderr).toMatch(/^tesync: --token: "does-not-exist" is in neither token list; nothing was fetched for it$/m);
    expect(await runsIn(db.databaseUrl)).toBe(runs + 1);
  }, patience(150_000));

  it('sync --token naming no token on a warehouse with no list yet: the lists are read, never "Sync succeeded", exit 2 naming it', async () => {
    const db = await database();
    const r = await runCli(['sync', '--token', 'does-not-exist'], env(db), { timeoutMs: 60_000 });
    expect(r.code, printed(r)).toBe(2);
    expect(r.stdout).not.toMatch(/Sync succeeded/);
    expect(r.stdout).toMatch(/^Sync found no token asked for by --token: only the token lists were fetched, in [\d.]+ s \(run [0-9a-f-]+, recorded succeeded\)$/m);
    expect(r.stderr).toMatch(/^tesync: --token: "does-not-exist" is in neither token list; nothing was fetched for it$/m);
    noKeyPrinted(r);
  }, patience(150_000));

  it('a gateway key refused on every request: the run failed, exit 1, the warning names the variable, never the key', async () => {
    const db = await database();
    const r = await runCli(['sync'], env(db, { TE_GATEWAY_API_KEY: WRONG_GW_KEY }), { timeoutMs: 120_000 });
    expect(r.code, printed(r)).toBe(1);
    expect(r.stdout).toMatch(/^Sync failed in /);
    expect(r.stdout).toMatch(/warning: the gateway refused the key in TE_GATEWAY_API_KEY on every request that needs it \(\d+ requests?; 401 unauthorized: \d+\): no gateway resource was fetched; check the key/);
    noKeyPrinted(r);
    const sql = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ status: string }[]>`select status from sync.runs`;
      expect(rows.map((x) => x.status)).toEqual(['failed']);
      const [app] = await sql<{ n: number }[]>`select count(*)::int as n from app.tokens`;
      expect(app!.n, 'the app source was still walked').toBeGreaterThan(0);
      const [gw] = await sql<{ n: number }[]>`select count(*)::int as n from gateway.tokens`;
      expect(gw!.n).toBe(0);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }, patience(150_000));

  it('an app key refused that only costs the bundles: partial, exit 0, with its warning', async () => {
    const db = await database();
    const r = await runCli(['sync'], env(db, { TE_APP_API_KEY: WRONG_APP_KEY }), { timeoutMs: 120_000 });
    expect(r.code, printed(r)).toBe(0);
    expect(r.stdout).toMatch(/^Sync partial in /);
    expect(r.stdout).toMatch(/warning: the app host refused the key in TE_APP_API_KEY on every request that needs it \(3 requests; 401 unauthorized: 3\): research bundles were not fetched; check the key/);
    noKeyPrinted(r);
  }, patience(150_000));
});
