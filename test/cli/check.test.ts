// `tesync check`: the configuration judged before a sync binds a warehouse to it. Real
// processes against the simulator over HTTP and a fresh, unmigrated Postgres database: one
// request per source and key, the variable that is wrong named, keys never printed, and
// nothing written (no schema, no embedded cluster). The judges are pure and tested alone.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeBindings, judgeSchema } from '../../src/cli/check-database.ts';
import { judgeAppKey, judgeGateway, judgeTokenList, listedSlugs, type Answer } from '../../src/cli/check-upstream.ts';
import { checkExitCode, formatChecks } from '../../src/cli/check.ts';
import { InvalidResponseError } from '../../src/lib/errors.ts';
import { UpstreamRefusedError } from '../../src/upstream/connect-errors.ts';
import { parseProblem, problemError } from '../../src/upstream/problem.ts';
import type { UpstreamResponse } from '../../src/upstream/request.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { useSimulator, useTestDatabase } from '../helpers/mirror-fixture.ts';
import { canaryKey } from '../helpers/services.ts';
import { commandEnv } from '../helpers/sync.ts';

const APP_KEY = canaryKey('check_app');
const GW_KEY = canaryKey('check_gw');
const WRONG_GW_KEY = canaryKey('check_gw_wrong');

const answered = (path: string, body: unknown, status = 200): Answer => ({ path, res: { status, body } as UpstreamResponse });
const refused = (path: string, status: number, doc: Record<string, unknown>): Answer => ({
  path,
  err: problemError(parseProblem({ status, headers: new Headers({ 'content-type': 'application/problem+json' }), text: JSON.stringify(doc), path })),
});

describe('the judges (pure)', () => {
  it('a token list is `data[].slug`; anything else is another API', () => {
    expect(listedSlugs({ data: [{ slug: 'a' }, { slug: 'b', x: 1 }], meta: {} })).toEqual(['a', 'b']);
    expect(listedSlugs({ data: [] })).toEqual([]);
    expect(listedSlugs({ status: 'ok' })).toBeNull();
    expect(listedSlugs({ data: [{ id: 1 }] })).toBeNull();
    expect(listedSlugs([{ slug: 'a' }])).toBeNull();
  });

  it('the app URL: ok, another shape, a 404, unreachable', () => {
    const url = 'http://127.0.0.1:1';
    expect(judgeTokenList('app', url, answered('/api/v1/tokens', { data: [{ slug: 'a' }] }))).toMatchObject({ variable: 'TE_APP_URL', status: 'ok' });
    expect(judgeTokenList('app', url, answered('/api/v1/tokens', { hello: 'world' }))).toMatchObject({ variable: 'TE_APP_URL', status: 'failed', message: expect.stringMatching(/JSON of another shape .*not this API$/) });
    expect(judgeTokenList('app', url, refused('/api/v1/tokens', 404, { title: 'Not Found' }))).toMatchObject({
      status: 'failed',
      message: expect.stringMatching(/has no \/api\/v1\/tokens \(404 Not Found\): not this API; is TE_APP_URL the base URL, without \/api\/v1\?$/),
    });
    expect(judgeTokenList('app', url, { path: '/api/v1/tokens', err: new InvalidResponseError('GET /api/v1/tokens: not JSON') })).toMatchObject({ status: 'failed', message: expect.stringMatching(/but not as this API: not JSON$/) });
    const unreachable = judgeTokenList('app', url, { path: '/api/v1/tokens', err: new UpstreamRefusedError('/api/v1/tokens', '127.0.0.1:1', 'TE_APP_URL') });
    expect(unreachable).toMatchObject({ variable: 'TE_APP_URL', status: 'failed', message: 'cannot reach the app host at http://127.0.0.1:1: connection refused by 127.0.0.1:1' });
  });

  it('the app key: 401 and 403 refuse it, 402 knows it', () => {
    const path = '/api/v1/tokens/a/full';
    expect(judgeAppKey(answered(path, { data: {} }), 'a')).toMatchObject({ variable: 'TE_APP_API_KEY', status: 'ok' });
    expect(judgeAppKey(refused(path, 401, { code: 'unauthorized' }), 'a')).toMatchObject({ status: 'failed', message: 'the app host refused the key (401 unauthorized): check the key' });
    expect(judgeAppKey(refused(path, 403, { code: 'missing_scope', scope: 'tokens:read:a' }), 'a')).toMatchObject({ status: 'failed', message: expect.stringContaining('it lacks the scope tokens:read:a') });
    expect(judgeAppKey(refused(path, 402, { code: 'no_credits_for_token' }), 'a')).toMatchObject({ status: 'ok' });
  });

  it('the gateway: one answer judges its URL and its key', () => {
    const url = 'http://127.0.0.1:1';
    expect(judgeGateway(url, answered('/v1/tokens', { data: [{ slug: 'a' }] })).map((r) => [r.variable, r.status])).toEqual([
      ['TE_GATEWAY_URL', 'ok'],
      ['TE_GATEWAY_API_KEY', 'ok'],
    ]);
    expect(judgeGateway(url, refused('/v1/tokens', 401, { code: 'unauthorized' })).map((r) => [r.variable, r.status])).toEqual([
      ['TE_GATEWAY_URL', 'ok'],
      ['TE_GATEWAY_API_KEY', 'failed'],
    ]);
    expect(judgeGateway(url, answered('/v1/tokens', '<html>')).map((r) => [r.variable, r.status])).toEqual([
      ['TE_GATEWAY_URL', 'failed'],
      ['TE_GATEWAY_API_KEY', 'skipped'],
    ]);
  });

  it('the warehouse: a schema ahead of this tesync fails; a binding to another upstream names the URL variable', () => {
    const at = { applied: 9, appliedTag: null, expected: 8, expectedTag: '0008_x' };
    expect(judgeSchema({ state: 'none' }, 'Postgres at h:5432/db', 'DATABASE_URL')).toMatchObject({ status: 'ok', message: expect.stringContaining('no tesync schema in it yet') });
    expect(judgeSchema({ state: 'ahead', ...at }, 'Postgres at h:5432/db', 'DATABASE_URL')).toMatchObject({ status: 'failed', variable: 'DATABASE_URL' });
    expect(judgeSchema({ state: 'behind', ...at, applied: 7 }, 'Postgres at h:5432/db', 'DATABASE_URL')).toMatchObject({ status: 'ok' });
    const config = { app: { url: 'http://127.0.0.1:8080/', apiKey: undefined }, gateway: { url: 'https://gw.example.com', apiKey: 'k' } };
    expect(judgeBindings(new Map([['app', 'http://127.0.0.1:8080'], ['gateway', 'https://gw.example.com']]), config)).toEqual([]);
    expect(judgeBindings(new Map([['app', 'simulator']]), config)).toEqual([
      expect.objectContaining({ check: 'binding', variable: 'TE_APP_URL', status: 'failed', message: expect.stringMatching(/bound to tesync demo's bundled simulator, not http:\/\/127\.0\.0\.1:8080: .*--force/) }),
    ]);
  });

  it('the exit code: 0 all passed, 1 a failure, 2 when one is bad configuration (as sync and status say it)', () => {
    const ok = { check: 'source', variable: 'TE_APP_URL', status: 'ok', message: 'answers' } as const;
    const refusedKey = { check: 'key', variable: 'TE_GATEWAY_API_KEY', status: 'failed', message: 'refused' } as const;
    const refusedLogin = { check: 'database', variable: 'DATABASE_URL', status: 'failed', message: 'refused the login', configuration: true } as const;
    expect(checkExitCode([ok])).toBe(0);
    expect(checkExitCode([ok, refusedKey])).toBe(1);
    expect(checkExitCode([refusedLogin, ok, refusedKey])).toBe(2);
    expect(judgeSchema({ state: 'ahead', applied: 9, appliedTag: null, expected: 8, expectedTag: '0008_x' }, 'Postgres at h:5432/db', 'DATABASE_URL').configuration).toBe(true);
    expect(judgeBindings(new Map([['app', 'simulator']]), { app: { url: 'http://127.0.0.1:8080/', apiKey: undefined }, gateway: undefined })[0]!.configuration).toBe(true);
  });

  it('one line per check: verdict, variable, what was found', () => {
    const text = formatChecks([
      { check: 'database', variable: 'DATABASE_URL', status: 'ok', message: 'reached' },
      { check: 'key', variable: 'TE_GATEWAY_API_KEY', status: 'failed', message: 'refused' },
      { check: 'key', variable: 'TE_APP_API_KEY', status: 'skipped', message: 'unset' },
    ]);
    expect(text).toBe('ok    DATABASE_URL        reached\nFAIL  TE_GATEWAY_API_KEY  refused\nskip  TE_APP_API_KEY      unset\n');
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A web server that is not this API: a page for every path, 404 under /api. */
async function otherServer(): Promise<{ server: Server; url: string }> {
  const server = createHttpServer((req, res) => {
    res.writeHead(req.url?.startsWith('/api/') ? 404 : 200, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe('tesync check', () => {
  const fx = useSimulator({ tokens: 2, historyDays: 3, chartsPerToken: 1, seed: 47, appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [GW_KEY] });
  // Empty: a check migrates nothing.
  const db = useTestDatabase();
  let other: { server: Server; url: string };
  let dir: string;
  beforeAll(async () => {
    [other, dir] = await Promise.all([otherServer(), mkdtemp(path.join(tmpdir(), 'tesync-check-'))]);
  }, patience(60_000));
  afterAll(async () => {
    await Promise.allSettled([new Promise((r) => other?.server.close(r)), dir ? rm(dir, { recursive: true, force: true }) : undefined]);
  });

  const env = (over: Record<string, string | undefined> = {}) => commandEnv(fx.sim, { appKey: APP_KEY, gatewayKey: GW_KEY }, db.databaseUrl, { TE_REQUEST_TIMEOUT_MS: '5000', ...over });
  const said = (r: CliResult) => r.stdout + r.stderr;
  // A check's line, its continuation lines (broken at 80 columns off a terminal) joined back.
  const line = (r: CliResult, variable: string) =>
    r.stdout
      .replace(/\n {6,}/g, ' ')
      .split('\n')
      .find((l) => new RegExp(`^\\S+\\s+${variable}\\s`).test(l));

  it('right configuration: exit 0, a line per check, one request per source and key, and no schema made', async () => {
    fx.sim.resetRequests();
    const r = await runCli(['check'], env());
    expect(r.code, said(r)).toBe(0);
    for (const variable of ['DATABASE_URL', 'TE_APP_URL', 'TE_APP_API_KEY', 'TE_GATEWAY_URL', 'TE_GATEWAY_API_KEY']) expect(line(r, variable), r.stdout).toMatch(/^ok\s/);
    expect(line(r, 'DATABASE_URL')).toContain('no tesync schema in it yet');
    expect(fx.sim.requests.map((q) => q.path)).toEqual(['/api/v1/tokens', expect.stringMatching(/^\/api\/v1\/tokens\/[a-z0-9-]+\/full$/), '/v1/tokens']);
    // The key only where a route needs it, and only in the header.
    expect(fx.sim.requests.map((q) => q.headers.authorization !== undefined)).toEqual([false, true, true]);
    expect(said(r)).not.toContain(APP_KEY);
    expect(said(r)).not.toContain(GW_KEY);

    const c = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const schemas = await c<{ nspname: string }[]>`select nspname from pg_namespace where nspname in ('sync', 'app', 'gateway', 'drizzle') or nspname like 'bullmq\\_%'`;
      expect(schemas).toEqual([]);
      const tables = await c<{ n: number }[]>`select count(*)::int as n from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')`;
      expect(tables[0]!.n).toBe(0);
    } finally {
      await c.end({ timeout: 5 });
    }
  }, patience(60_000));

  it('a wrong gateway key: exit 1 naming TE_GATEWAY_API_KEY, asked once, never printed', async () => {
    fx.sim.resetRequests();
    const r = await runCli(['check'], env({ TE_GATEWAY_API_KEY: WRONG_GW_KEY }));
    expect(r.code, said(r)).toBe(1);
    expect(line(r, 'TE_GATEWAY_API_KEY')).toMatch(/^FAIL\s+TE_GATEWAY_API_KEY\s+the gateway refused the key \(401 unauthorized\): check the key$/);
    expect(line(r, 'TE_APP_API_KEY')).toMatch(/^ok\s/);
    expect(fx.sim.requests.filter((q) => q.path.startsWith('/v1/')).map((q) => q.status)).toEqual([401]);
    expect(said(r)).not.toContain(WRONG_GW_KEY);
  }, patience(60_000));

  it('a wrong port in TE_APP_URL: exit 1 naming TE_APP_URL; no embedded warehouse made', async () => {
    const port = await closedPort();
    const dataDir = path.join(dir, 'never');
    const r = await runCli(['check'], { TE_APP_URL: `http://127.0.0.1:${port}`, TE_APP_API_KEY: APP_KEY, TE_DATA_DIR: dataDir, TE_REQUEST_TIMEOUT_MS: '5000' });
    expect(r.code, said(r)).toBe(1);
    expect(line(r, 'TE_APP_URL')).toBe(`FAIL  TE_APP_URL      cannot reach the app host at http://127.0.0.1:${port}: connection refused by 127.0.0.1:${port}`);
    expect(line(r, 'TE_APP_API_KEY')).toMatch(/^skip\s+TE_APP_API_KEY\s+not checked/);
    expect(line(r, 'TE_DATA_DIR')).toMatch(/^ok\s+TE_DATA_DIR\s+no embedded warehouse in .* yet/);
    expect(existsSync(dataDir)).toBe(false);
    expect(said(r)).not.toContain(APP_KEY);
  }, patience(60_000));

  it('--json: URLs that answer, but not as this API, named; exit 1', async () => {
    const r = await runCli(['check', '--json'], { TE_APP_URL: other.url, TE_GATEWAY_URL: other.url, TE_GATEWAY_API_KEY: GW_KEY, DATABASE_URL: db.databaseUrl, TE_REQUEST_TIMEOUT_MS: '5000' });
    expect(r.code, said(r)).toBe(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; checks: { variable: string; status: string; message: string }[] };
    expect(out.ok).toBe(false);
    const check = (variable: string) => out.checks.find((c) => c.variable === variable);
    expect(check('TE_APP_URL')).toMatchObject({ status: 'failed', message: expect.stringMatching(/has no \/api\/v1\/tokens \(404[^)]*\): not this API/) });
    expect(check('TE_GATEWAY_URL')).toMatchObject({ status: 'failed', message: expect.stringMatching(/answers GET \/v1\/tokens, but not as this API/) });
    expect(check('TE_GATEWAY_API_KEY')).toMatchObject({ status: 'skipped' });
    expect(check('DATABASE_URL')).toMatchObject({ status: 'ok' });
    expect(said(r)).not.toContain(GW_KEY);
  }, patience(60_000));

  it('a refused login or a missing database: exit 2, as status and sync exit for the same URL (the README\'s one rule)', async () => {
    const url = new URL(db.databaseUrl);
    const noRole = Object.assign(new URL(url), { username: 'tesync_no_such_role' }).href;
    const noDatabase = Object.assign(new URL(url), { pathname: '/tesync_no_such_database' }).href;
    for (const [databaseUrl, why] of [
      [noRole, /refused the login/],
      [noDatabase, /tesync_no_such_database.*does not exist/],
    ] as const) {
      const check = await runCli(['check'], env({ DATABASE_URL: databaseUrl }));
      expect(check.code, said(check)).toBe(2);
      expect(line(check, 'DATABASE_URL')).toMatch(new RegExp(`^FAIL\\s+DATABASE_URL\\s+.*${why.source}`));
      // The upstream checks still ran: every line a person needs, in one go.
      expect(line(check, 'TE_APP_URL')).toMatch(/^ok\s/);
      for (const command of ['status', 'sync']) {
        const r = await runCli([command], env({ DATABASE_URL: databaseUrl }));
        expect(r.code, `${command}: ${said(r)}`).toBe(2);
        expect(r.stderr).toMatch(why);
      }
    }
  }, patience(120_000));

  it('at 80 columns (off a terminal) no line is longer; a long finding continues under its text', async () => {
    const port = await closedPort();
    const r = await runCli(['check'], { TE_GATEWAY_URL: `http://127.0.0.1:${port}/a/long/path/to/a/gateway/that/is/not/there`, TE_GATEWAY_API_KEY: GW_KEY, TE_DATA_DIR: path.join(dir, 'never'), TE_REQUEST_TIMEOUT_MS: '5000' });
    expect(r.code, said(r)).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => l.length > 80)).toEqual([]);
    expect(lines.length).toBeGreaterThan(3);
    // Continuations sit under the text of the first line (after `FAIL  TE_GATEWAY_API_KEY  `).
    expect(lines.filter((l) => l.startsWith(' ')).every((l) => /^ {26}\S/.test(l))).toBe(true);
  }, patience(60_000));

  it('bad configuration: exit 2 naming the variable, nothing asked', async () => {
    fx.sim.resetRequests();
    const r = await runCli(['check'], { TE_GATEWAY_URL: fx.sim.url, DATABASE_URL: db.databaseUrl });
    expect(r.code, said(r)).toBe(2);
    expect(r.stderr.trim()).toMatch(/^tesync: configuration error: TE_GATEWAY_API_KEY: is required when TE_GATEWAY_URL is set/);
    expect(r.stdout).toBe('');
    expect(fx.sim.requests).toEqual([]);
  }, patience(60_000));
});
