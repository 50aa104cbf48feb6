// Keys the upstream repeats back (sim/echoes.ts): in a problem's title, its detail, a header and
// an HTML error page, as sent, percent-encoded, escaped for JSON or HTML, and cut. Run as the
// real CLI: no form of either key in stdout, stderr, a pg_dump of the warehouse without the
// raw archive, `tesync status --json`, nor the status page's HTML and /status.json. The raw
// archive alone keeps the bodies as served.
import { execFileSync } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { randomInt } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ECHO_FORMS, echoForm, type SimEcho } from '../../sim/index.ts';
import { WINDOW } from '../../src/lib/secrets.ts';
import { runCli, startCli, type CliProcess } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';

/** A key holding `'`, `&`, `<`, `>`, `%`, `"` and `\`, then letters no hash or id is made of. */
const hostileKey = (head: string) => `${head}${Array.from({ length: 14 }, () => 'ghijklmnopqrstuvwxyz'[randomInt(20)]).join('')}`;

/** Every form a text could hold the key in: the echoes' own, and JSON and HTML as tesync's outputs would write them. */
function formsOf(key: string): string[] {
  const json = JSON.stringify(key).slice(1, -1);
  const html = key.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
  return [...ECHO_FORMS.map((f) => echoForm(key, f)), json, JSON.stringify(json).slice(1, -1), html, JSON.stringify(html).slice(1, -1), encodeURIComponent(json)];
}

/** The first WINDOW-long run of a form of `key` that `text` holds, or undefined. */
function found(text: string, key: string): string | undefined {
  for (const form of formsOf(key)) {
    for (let i = 0; i + WINDOW <= form.length; i++) if (text.includes(form.slice(i, i + WINDOW))) return form.slice(i, i + WINDOW);
  }
  return undefined;
}

describe('keys the upstream echoes', () => {
  const appKey = hostileKey(`ap'&<>%"\\k`);
  const gatewayKey = hostileKey(`gw<&>'"%41\\u0041`);
  const fx = useSimAndWarehouse({
    tokens: 6,
    historyDays: 5,
    chartsPerToken: 1,
    seed: 707,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
  });
  let serve: CliProcess | undefined;
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.exited;
  });

  it('reach no output, no table but the raw archive, and not the status page', async () => {
    const gw = fx.sim.data.gatewayTokens().map((t) => t.slug);
    const app = fx.sim.data.appTokens().map((t) => t.slug);
    const echoes: SimEcho[] = [
      { path: `/v1/tokens/${gw[0]}/metrics/history`, place: 'title', status: 401 },
      { path: `/v1/tokens/${gw[1]}/charts`, place: 'detail', status: 403 },
      { path: `/v1/tokens/${gw[2]}/metrics/history`, place: 'header', status: 500 },
      { path: `/v1/tokens/${gw[3]}/charts`, place: 'html', status: 401 },
      { path: `/api/v1/tokens/${app[0]}/full`, place: 'html', status: 403 },
      { path: `/api/v1/tokens/${app[1]}/full`, place: 'title', status: 401 },
      { path: `/api/v1/tokens/${app[2]}/full`, place: 'header', status: 500 },
    ];
    fx.sim.setEchoes(echoes);
    const env = { TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, DATABASE_URL: fx.databaseUrl, LOG_LEVEL: 'trace', TE_MAX_ATTEMPTS: '2' };
    const runs = [await runCli(['sync', '--json'], env), await runCli(['sync'], env), await runCli(['status', '--json'], env)];
    expect(runs.map((r) => r.code), runs.map((r) => r.stderr.slice(-2000)).join('\n')).toEqual([0, 0, 0]);

    // Every echo was answered, with the key in it, and tesync recorded each failure.
    const echoed = fx.sim.requests.filter((r) => echoes.some((e) => r.path.startsWith(e.path)));
    expect(new Set(echoed.map((r) => echoes.find((e) => r.path.startsWith(e.path))!.path)).size).toBe(echoes.length);
    expect(echoed.every((r) => [401, 403, 500].includes(r.status))).toBe(true);
    const states = await fx.warehouse.query<{ resource: string }>(sql`select resource from sync.resource_state where last_error like '%[REDACTED]%'`);
    expect(states.length).toBeGreaterThan(0);

    serve = startCli(['status', '--serve', '--port', '0'], { DATABASE_URL: fx.databaseUrl, TE_APP_API_KEY: appKey, TE_GATEWAY_API_KEY: gatewayKey, LOG_LEVEL: 'warn' });
    await serve.waitFor(/Status page of .*: http:\/\/127\.0\.0\.1:\d+\//, 60_000);
    const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(serve.stdout())![0];
    const html = await (await fetch(url)).text();
    const json = await (await fetch(`${url}status.json`)).text();
    expect(html).toContain('[REDACTED]');

    const printed = runs.map((r) => r.stdout + r.stderr).join('\n');
    const dump = execFileSync('pg_dump', ['--data-only', '--no-owner', '--exclude-table-data=sync.raw_responses', fx.databaseUrl], { maxBuffer: 512 * 1024 * 1024 }).toString();
    expect(dump.length).toBeGreaterThan(10_000);
    for (const key of [appKey, gatewayKey]) {
      for (const [where, text] of Object.entries({ printed, dump, html, json })) expect(found(text, key), `${where} holds a form of a key`).toBeUndefined();
    }
    // The raw archive keeps the refusals' bodies as served: the key is there, and only there.
    const archive = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.raw_responses where coalesce(body::text, body_text, '') like ${`%${gatewayKey.slice(-14)}%`}`);
    expect(archive[0]!.n).toBeGreaterThan(0);
  }, patience(180_000));
});
