// `npx tesync sim --port 0`, as a user runs it: it prints where it listens and which keys it
// accepts, and serves every route of both seeds there until it is stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/context.ts';
import { banner, runSim } from '../../src/cli/sim.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { apiKeyProblem } from '../../src/lib/variables.ts';
import { BIN, childEnv, runCli, type CliResult } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import { freshDatabase } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';

/** resolves with everything printed up to the banner's last line */
function bannerOf(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ctrl-C')) resolve(out);
    });
    child.on('exit', (code) => reject(new Error(`tesync sim exited ${code}`)));
  });
}

/**
 * `tesync sim ARGS` refusing its command line, run in this process: every check of a flag
 * happens before the simulator listens, and main (src/cli/main.ts reportFailure) prints a
 * UsageError or a parseArgs error as `tesync: <message>` with exit 2 (each test below runs one
 * of its cases as the real command, which shows that). A command line it wrongly accepts comes
 * back as a simulator listening (exit code null).
 */
async function simRefusal(argv: string[]): Promise<CliResult> {
  const usage = (err: unknown) => err instanceof UsageError || String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  const ran = runSim({ argv, config: loadConfig({}), logger: createTestLogger().logger }).then(
    (code): CliResult => ({ code, signal: null, stdout: '', stderr: '' }),
    (err: unknown): CliResult => ({ code: usage(err) ? 2 : 1, signal: null, stdout: '', stderr: `tesync: ${(err as Error).message}\n` }),
  );
  // Accepted, it would serve until a signal: say so instead of waiting for one.
  const listening = new Promise<CliResult>((resolve) => setTimeout(() => resolve({ code: null, signal: null, stdout: 'listening (the command line was accepted)', stderr: '' }), patience(5_000)).unref());
  return Promise.race([ran, listening]);
}

/** The variables the banner's "Point tesync at it" lines set, one a line. */
const bannerEnv = (banner: string) => Object.fromEntries([...banner.matchAll(/^ {2}(TE_\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));

/** `tesync sim --help`, run once for the tests that read it. */
let help: Promise<CliResult> | undefined;
const simHelp = () => (help ??= runCli(['sim', '--help'], {}));

describe('tesync sim', () => {
  it('serves both APIs on the port it prints, and stops cleanly on SIGINT', async () => {
    const child = spawn(process.execPath, [BIN, 'sim', '--port', '0', '--tokens', '4', '--app-key', 'sim_app_key_0001', '--gateway-key', 'sim_gw_key_0001'], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const banner = await bannerOf(child);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]!;
      expect(banner).toContain(`TE_APP_URL=${url}`);
      const slug = ((await (await fetch(`${url}/api/v1/tokens`)).json()) as { data: { slug: string }[] }).data[0]!.slug;
      const gw = { headers: { authorization: 'Bearer sim_gw_key_0001' } };
      const routes: [string, RequestInit?][] = [
        ['/api/v1/metrics'],
        ['/api/v1/screener'],
        [`/api/v1/tokens/${slug}`],
        [`/api/v1/tokens/${slug}/metrics/history?stream=all`],
        [`/api/v1/tokens/${slug}/charts`],
        [`/api/v1/tokens/${slug}/full`, { headers: { authorization: 'Bearer sim_app_key_0001' } }],
        ['/v1/tokens', gw],
        ['/v1/screener', gw],
        [`/v1/tokens/${slug}`, gw],
        [`/v1/tokens/${slug}/metrics/history?period=30d`, gw],
        [`/v1/tokens/${slug}/charts`, gw],
        ['/openapi-product.json', gw],
      ];
      for (const [path, init] of routes) {
        const res = await fetch(`${url}${path}`, init);
        expect(res.status, path).toBe(200);
      }
      const chartsRes = (await (await fetch(`${url}/api/v1/tokens/${slug}/charts`)).json()) as { data: { key: string }[] };
      expect((await fetch(`${url}/api/v1/tokens/${slug}/charts/${chartsRes.data[0]!.key}`)).status).toBe(200);
      const gwCharts = (await (await fetch(`${url}/v1/tokens/${slug}/charts`, gw)).json()) as { data: { key?: string; id?: string; chartKey?: string }[] };
      const key = gwCharts.data[0]!.key ?? gwCharts.data[0]!.id ?? gwCharts.data[0]!.chartKey;
      expect((await fetch(`${url}/v1/tokens/${slug}/charts/${key}`, gw)).status).toBe(200);
      expect((await fetch(`${url}/v1/tokens`)).status).toBe(401);
    } finally {
      child.kill('SIGINT');
      expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    }
  });

  it('serves the response forms its flags ask for', async () => {
    const args = ['sim', '--port', '0', '--tokens', '4', '--history-all', 'column', '--chart-labels', '--added-field', 'app.tokens=extra', '--added-field', 'gateway.tokens=extra', '--recomputation', '5', '--page-size', '3', '--page-form', 'linkHeader'];
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(await bannerOf(child))![1]!;
      const body = async (path: string) => ((await (await fetch(`${url}${path}`)).json()) as { data: any }).data;
      const history = await body('/api/v1/tokens/aurora/metrics/history?stream=all&limit=1');
      expect(history.stream).toBe('all');
      expect(history.columns[1]).toEqual({ key: 'stream', type: 'dimension', label: 'Stream' });
      const key = (await body('/api/v1/tokens/aurora/charts'))[0].dataEndpoint.split('/').at(-1);
      expect((await body(`/api/v1/tokens/aurora/charts/${key}`)).columns.at(-1)).toEqual({ key: 'note', type: 'label', label: 'Note' });
      expect((await body('/api/v1/tokens')).every((t: { extra?: string }) => t.extra === 'added')).toBe(true);
      expect((await body('/api/v1/screener')).some((row: object) => 'extra' in row)).toBe(false);
      const firstPage = await fetch(`${url}/api/v1/tokens`);
      expect(firstPage.headers.get('link')).toBe('<?page=2>; rel="next"');
      expect(((await firstPage.json()) as { data: unknown[]; meta: { count: number; total: number } }).meta).toMatchObject({ count: 3, total: 4 });
      // Recomputation 5: every asOf five minutes after the data's midnight.
      expect((await body('/api/v1/tokens'))[0].freshness.asOf).toMatch(/T00:05:00\.000Z$/);
    } finally {
      child.kill('SIGINT');
      expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    }
  });

  it('answers with the redirects and the outage its flags ask for', async () => {
    const args = ['sim', '--port', '0', '--tokens', '2', '--redirect', '/api/v1/metrics,308', '--redirect', '/api/v1/tokens,302,http://127.0.0.1:9', '--outage', 'gateway:30:1', '--retry-after-form', 'http-date'];
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const banner = await bannerOf(child);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]!;
      const gwKey = /TE_GATEWAY_API_KEY=(\S+)/.exec(banner)![1]!;
      const manual = (path: string, headers: Record<string, string> = {}) => fetch(`${url}${path}`, { redirect: 'manual', headers });
      const moved = await manual('/api/v1/metrics');
      expect([moved.status, moved.headers.get('location')]).toEqual([308, '/api/v1/metrics?moved=1']);
      expect((await manual('/api/v1/metrics?moved=1')).status).toBe(200);
      const away = await manual('/api/v1/tokens?x=1');
      expect([away.status, away.headers.get('location')]).toEqual([302, 'http://127.0.0.1:9/api/v1/tokens?x=1']);
      const gw = { authorization: `Bearer ${gwKey}` };
      expect((await manual('/v1/tokens', gw)).status).toBe(200);
      const down = await manual('/v1/tokens', gw);
      expect(down.status).toBe(503);
      expect(Date.parse(down.headers.get('retry-after')!) - Date.parse(down.headers.get('date')!)).toBeGreaterThanOrEqual(29_000);
    } finally {
      child.kill('SIGINT');
      expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    }
  });

  it('prints keys that tesync accepts and the simulator serves with', async () => {
    const child = spawn(process.execPath, [BIN, 'sim', '--port', '0', '--tokens', '2'], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const banner = await bannerOf(child);
      const config = loadConfig(bannerEnv(banner));
      const slug = ((await (await fetch(`${config.app!.url}/api/v1/tokens`)).json()) as { data: { slug: string }[] }).data[0]!.slug;
      expect((await fetch(`${config.app!.url}/api/v1/tokens/${slug}/full`, { headers: { authorization: `Bearer ${config.app!.apiKey}` } })).status).toBe(200);
      expect((await fetch(`${config.gateway!.url}/v1/tokens`, { headers: { authorization: `Bearer ${config.gateway!.apiKey}` } })).status).toBe(200);
    } finally {
      child.kill('SIGINT');
      expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    }
  });

  it("is dated as the demo is, up to today (UTC): following its banner, a sync's status --max-age 24 passes; every line within 80 columns", async () => {
    const child = spawn(process.execPath, [BIN, 'sim', '--port', '0', '--tokens', '2', '--charts', '1'], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    const db = await freshDatabase();
    try {
      const banner = await bannerOf(child);
      expect(banner.split('\n').filter((l) => l.length > 80)).toEqual([]);
      const today = new Date().toISOString().slice(0, 10);
      expect(banner).toContain(`up to ${today} (today, UTC)`);
      const env = { ...bannerEnv(banner), DATABASE_URL: db.databaseUrl };
      expect(Object.keys(env)).toEqual(['TE_APP_URL', 'TE_APP_API_KEY', 'TE_GATEWAY_URL', 'TE_GATEWAY_API_KEY', 'DATABASE_URL']);
      const sync = await runCli(['sync'], env, { timeoutMs: 120_000 });
      expect(sync.code, sync.stderr).toBe(0);
      const status = await runCli(['status', '--max-age', '24'], env);
      expect(status.code, status.stdout + status.stderr).toBe(0);
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => child.on('exit', resolve));
    }
  }, patience(180_000));

  it('a fixed --last-date says so; a day that is not one is refused (exit 2)', async () => {
    const said = banner('http://h:1', ['sim_app_key_0001'], ['sim_gw_key_0001'], { tokens: 2, lastDate: '2026-06-30', historyDays: 30, today: new Date('2026-12-07T10:00:00Z') });
    expect(said.replace(/\n +/g, ' ')).toContain('2 tokens, 30 days of history up to 2026-06-30 (UTC; a fixed day: tesync status counts its age from it)');
    expect(said.split('\n').filter((l) => l.length > 80)).toEqual([]);
    const r = await simRefusal(['--last-date', '2026-02-30']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('tesync: --last-date must be a day as YYYY-MM-DD, e.g. 2026-06-30, not "2026-02-30"\n');
  });

  it('refuses, with exit 2, a key tesync would refuse, and its help shows keys tesync accepts', async () => {
    const cases = [
      ['--app-key', 'ak-test', 'TE_APP_API_KEY'],
      ['--gateway-key', 'gw', 'TE_GATEWAY_API_KEY'],
      ['--gateway-key', 'two words here', 'TE_GATEWAY_API_KEY'],
    ] as const;
    for (const [i, [flag, key, variable]] of cases.entries()) {
      const argv = ['--port', '0', flag, key];
      const r = i === 0 ? await runCli(['sim', ...argv], {}) : await simRefusal(argv);
      expect(r.code, `${flag} ${key}`).toBe(2);
      expect(r.stderr).toContain(`${flag}: tesync would refuse this key as ${variable}`);
      expect(r.stdout).not.toContain('listening');
    }
    const help = (await simHelp()).stdout;
    const examples = [...help.matchAll(/e\.g\.\s+(sim_\w+)/g)].map((m) => m[1]!);
    expect(examples).toEqual(['sim_app_key_0001', 'sim_gw_key_0001']);
    for (const k of examples) expect(apiKeyProblem(k)).toBeUndefined();
    expect(apiKeyProblem('ak-test')).toContain('8 characters');
  });

  it('lists the form flags in --help and refuses bad values with exit 2, naming the flag', async () => {
    const help = await simHelp();
    expect(help.code).toBe(0);
    for (const flag of ['--history-all FORM', '--chart-labels', '--added-field R=F', '--duplicated-key R=K', '--recomputation N', '--removed', '--omit PART', '--redirect P[,S[,U]]', '--outage B:N[:A]', '--retry-after-form F', '--page-size N', '--page-form FORM', '--page-total T', '--page-loop']) expect(help.stdout).toContain(flag);
    const cases = [
      ['--recomputation', 'often'],
      ['--history-all', 'sideways'],
      ['--omit', 'everything'],
      ['--added-field', 'app.nowhere=extra'],
      ['--added-field', 'app.tokens'],
      ['--duplicated-key', 'app.tokens'],
      ['--redirect', 'api/v1/tokens'],
      ['--redirect', '/api/v1/tokens,304'],
      ['--redirect', '/api/v1/tokens,302,ftp://x'],
      ['--outage', 'gateway'],
      ['--outage', 'everything:5'],
      ['--outage', 'gateway:0'],
      ['--retry-after-form', 'never'],
      ['--page-size', '-1'],
      ['--page-form', 'scroll'],
      ['--page-total', 'some'],
    ] as const;
    for (const [i, [flag, value]] of cases.entries()) {
      const argv = ['--port', '0', flag, value];
      const r = i === 0 ? await runCli(['sim', ...argv], {}) : await simRefusal(argv);
      expect(r.code, `${flag} ${value}`).toBe(2);
      expect(r.stderr).toContain(flag);
      expect(r.stdout).not.toContain('listening');
    }
  });

  it('refuses bad numbers with exit 2 and one line naming the flag: digits only, in range, a port tesync can reach', async () => {
    const cases: [string, string, RegExp][] = [
      ['--port', '', /^tesync: --port must be a whole number from 0 to 65535, not ""$/],
      ['--port', 'abc', /^tesync: --port must be a whole number from 0 to 65535, not "abc"$/],
      ['--port', '0x10', /^tesync: --port must be a whole number/],
      ['--port', '70000', /^tesync: --port must be a whole number/],
      ['--port', '6000', /^tesync: --port 6000 is one Node's fetch refuses to use: tesync could not reach the simulator there/],
      ['--port', '10080', /^tesync: --port 10080 is one Node's fetch refuses to use/],
      ['--tokens', '0', /^tesync: --tokens must be a whole number from 1 to 100000, not "0"$/],
      ['--tokens', '1e2', /^tesync: --tokens must be a whole number/],
      ['--history-days', '1.5', /^tesync: --history-days must be a whole number/],
      ['--charts', '-1', /^tesync: --charts must be a whole number from 0 to 100, not "-1"$/],
      ['--seed', ' 7', /^tesync: --seed must be a whole number/],
      ['--epoch', 'x', /^tesync: --epoch must be a whole number/],
      ['--recomputation', '5.5', /^tesync: --recomputation must be a whole number from 0 to 1000000 \(minutes, or eachResponse\)/],
      ['--latency', '60001', /^tesync: --latency must be a whole number from 0 to 60000/],
      ['--page-size', '0x3', /^tesync: --page-size must be a whole number/],
      ['--rate-limit', '0/0', /^tesync: --rate-limit must look like N\/MS: N requests \(1 to 1000000\) per MS milliseconds/],
      ['--rate-limit', '60/0', /^tesync: --rate-limit must look like N\/MS/],
      ['--rate-limit', '60', /^tesync: --rate-limit must look like N\/MS/],
      ['--outage', 'gateway:1e3', /^tesync: --outage SECONDS must be a whole number/],
      ['--host', '192.0.2.1', /^tesync: --host "192\.0\.2\.1" is not an address of this machine \(EADDRNOTAVAIL\)$/],
    ];
    const results = await Promise.all(cases.map(([flag, value], i) => (i === 0 ? runCli(['sim', `${flag}=${value}`], {}, { timeoutMs: 20_000 }) : simRefusal([`${flag}=${value}`]))));
    cases.forEach(([flag, value, line], i) => {
      const r = results[i]!;
      expect(r.code, `${flag}=${value}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr.trimEnd().split('\n'), `${flag}=${value}`).toHaveLength(1);
      expect(r.stderr.trimEnd(), `${flag}=${value}`).toMatch(line);
      expect(r.stdout).not.toContain('listening');
    });
  });

  it('a port already taken: exit 2, naming --port and what to do', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const r = await runCli(['sim', '--port', String(port)], {}, { timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trimEnd()).toBe(`tesync: --port ${port} is taken on 127.0.0.1 (EADDRINUSE): choose another, or 0 for a free one`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
