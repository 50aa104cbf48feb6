// A chart point refused alone (issue 55), end to end: a first `tesync sync` process over real
// HTTP from the simulator into a fresh Postgres warehouse, whose charts of one token each hold
// one row with a string Postgres cannot store (U+0000, or an unpaired surrogate): in the app
// chart, its x cell (a key column); in every gateway chart timeframe, a series key. The row is
// refused alone: the sync exits 0, the chart's other points are stored and equal the
// simulator's, the chart's resource is `partial` naming the point and field (in its details,
// its `last_error`, the sync's summary and `tesync status`), its body archived once, byte for
// byte, as the simulator wrote it. A second sync with the point clean stores
// it, and the chart is `ok`; a third with the point poisoned again closes nothing.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HostileChar } from '../../sim/index.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey } from '../helpers/services.ts';

const gatewayKey = canaryKey('gk');
const CHAR_TEXT = { nul: /holds U\+0000(?: in its name)?, which Postgres cannot store exactly$/, surrogate: /holds an unpaired surrogate U\+D83D(?: in its name)?, which Postgres cannot store exactly$/ } as const;
/** Neither U+0000, a surrogate code unit, nor the U+FFFD one would have become. */
const DIRTY = /[\u0000\ud800-\udfff\ufffd]/;
const day = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD')`;

describe.each(['nul', 'surrogate'] as const)('a chart point holding %s', (char: HostileChar) => {
  const fx = useSimAndWarehouse({ tokens: 2, historyDays: 3, chartsPerToken: 1, gatewayKeys: [gatewayKey] });
  const q = <T>(text: ReturnType<typeof sql>) => fx.warehouse.query<T>(text);
  const env = () => ({ DATABASE_URL: fx.databaseUrl, TE_APP_URL: fx.sim.url, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, TE_CONCURRENCY: '8' });
  let slug = '';
  let appKey = '';
  let gwKey = '';
  let cli: CliResult;
  let runId: string;
  const served = new Map<string, string[]>();

  const appPath = () => `/api/v1/tokens/${slug}/charts/${appKey}`;
  const gwPath = () => `/v1/tokens/${slug}/charts/${gwKey}`;
  /** The gateway chart's timeframes the sync fetched (one resource each). */
  const gwResources = async () =>
    q<{ resource: string; status: string; last_run_id: string; last_error: string | null; details: { refused?: string[]; refusedItems?: number } | null }>(
      sql`select resource, status, last_run_id::text, last_error, details from sync.resource_state where source = 'gateway' and resource like ${`token/${slug}/chart/${gwKey}/%`} order by resource`,
    );
  const appState = async () =>
    (
      await q<{ status: string; last_run_id: string; last_error: string | null; details: { refused?: string[]; refusedItems?: number } | null }>(
        sql`select status, last_run_id::text, last_error, details from sync.resource_state where source = 'app' and resource = ${`token/${slug}/chart/${appKey}`}`,
      )
    )[0];
  /** The app chart's points as stored, against the simulator's (`skip`: the row refused). */
  const expectAppPoints = async (skip: number | null) => {
    const data = fx.sim.data.appChartData(slug, appKey)!;
    const want = data.rows.flatMap((row, r) => (r === skip ? [] : data.columns.flatMap((col, i) => (i === 0 ? [] : [`${row[0]}|${col.key}=${row[i] ?? null}`]))));
    const got = await q<{ p: string }>(sql`select x || '|' || series || '=' || coalesce(value::text, 'null') as p from app.chart_points where token_slug = ${slug} and chart_key = ${appKey}`);
    expect(got.map((g) => g.p).sort()).toEqual(want.sort());
    return want.length;
  };
  /** Each gateway timeframe's points as stored, against the simulator's (`skip`: the row refused). */
  const expectGatewayPoints = async (skip: number | null) => {
    const tfs = (await gwResources()).map((s) => s.resource.split('/').at(-1)!);
    expect(tfs.length).toBeGreaterThan(0);
    for (const tf of tfs) {
      const item = fx.sim.data.gatewayChartData(slug, gwKey, tf as never)!;
      const want = item.data.flatMap((row, r) => (r === skip ? [] : item.config.series.map((s) => `${row.timestamp}|${s.key}=${row[s.key] ?? null}`)));
      const got = await q<{ p: string }>(
        sql`select ${sql.raw(day('ts'))} || '|' || series_key || '=' || coalesce(value::text, 'null') as p from gateway.chart_points where token_slug = ${slug} and chart_key = ${gwKey} and timeframe = ${tf}`,
      );
      expect(got.map((g) => g.p).sort(), tf).toEqual(want.sort());
    }
  };

  beforeAll(async () => {
    const { sim } = fx;
    slug = sim.data.appTokens()[0]!.slug;
    appKey = sim.data.appCharts(slug)![0]!.key;
    gwKey = sim.data.gatewayCharts(sim.data.gatewayTokens()[0]!.slug)![0]!.key;
    expect(sim.data.gatewayTokens()[0]!.slug).toBe(slug);
    sim.setHostile([
      { place: 'chartPoint', char, slug },
      { place: 'chartPoint', char, slug, source: 'gateway' },
    ]);
    sim.resetRequests();
    cli = await runCli(['sync'], env(), { timeoutMs: 120_000 });
    for (const r of sim.requests) if (r.status === 200) served.set(r.path, [...(served.get(r.path) ?? []), r.bodySha256 ?? '']);
    runId = (await q<{ id: string }>(sql`select id::text from sync.runs order by started_at desc limit 1`))[0]!.id;
  }, patience(180_000));

  it('exits 0, the run partial, with nothing recorded that carries the character', async () => {
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    expect(await q(sql`select status from sync.runs where id = ${runId}::uuid`)).toEqual([{ status: 'partial' }]);
    const [run] = await q<{ text: string }>(sql`select coalesce(error, '') || stats::text as text from sync.runs where id = ${runId}::uuid`);
    expect(run!.text).not.toMatch(DIRTY);
  });

  it('the app chart: partial, naming the point and field; its other points stored as the simulator serves them', async () => {
    const state = await appState();
    expect(state).toMatchObject({ status: 'partial', last_run_id: runId, details: { refusedItems: 1 } });
    const [reason] = state!.details!.refused!;
    expect(reason).toMatch(/^data\.rows\[1\]\[0\] /);
    expect(reason).toMatch(CHAR_TEXT[char]);
    // Where people look for what went wrong: the state's last_error, and the sync's summary.
    expect(state!.last_error).toBe(`1 item refused: ${reason}`);
    expect(cli.stdout).toContain(`  partial: token/${slug}/chart/${appKey} (app): 1 item refused: ${reason}\n`);
    expect(JSON.stringify(state)).not.toMatch(DIRTY);
    expect(await expectAppPoints(1)).toBeGreaterThan(0);
  });

  it('tesync status shows the reason as the chart group\'s last error', async () => {
    const status = await runCli(['status'], { DATABASE_URL: fx.databaseUrl, COLUMNS: '200' });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/app\.chart\b[^\n]*\n?[^\n]*1 item refused: data\.rows\[1\]\[0\] holds/);
    expect(status.stdout).toMatch(/gateway\.chart\b[^\n]*\n?[^\n]*1 item refused: data\.data\[1\]/);
  });

  it('every gateway chart timeframe: partial, naming the point and its series key; its other points stored', async () => {
    const states = await gwResources();
    expect(states.length).toBeGreaterThan(0);
    for (const s of states) {
      expect(s, s.resource).toMatchObject({ status: 'partial', last_run_id: runId, details: { refusedItems: 1 } });
      expect(s.details!.refused![0]).toMatch(/^data\.data\[1\]\["Point \\u(0000|d83d) key"\] /);
      expect(s.details!.refused![0]).toMatch(CHAR_TEXT[char]);
      expect(s.last_error).toBe(`1 item refused: ${s.details!.refused![0]}`);
      expect(cli.stdout).toContain(`  partial: ${s.resource} (gateway): 1 item refused: ${s.details!.refused![0]}\n`);
      expect(JSON.stringify(s)).not.toMatch(DIRTY);
    }
    await expectGatewayPoints(1);
  });

  it('each chart body archived once, partial, byte for byte as served; its points link to it', async () => {
    for (const [source, prefix, table] of [['app', appPath(), 'app.chart_points'], ['gateway', gwPath(), 'gateway.chart_points']] as const) {
      const sent = [...served].filter(([p]) => p.split('?')[0] === prefix);
      expect(sent.length, prefix).toBeGreaterThan(0);
      for (const [path, shas] of sent) {
        expect(shas, path).toHaveLength(1);
        const kept = await q<{ id: number; status: string; sha: string }>(
          sql`select id::int, status, encode(sha256(coalesce(body_bytes, convert_to(body_text, 'UTF8'))), 'hex') as sha from sync.raw_responses where source = ${source} and path = ${path}`,
        );
        expect(kept.map((k) => [k.status, k.sha]), path).toEqual([['partial', shas[0]]]);
      }
      const links = await q<{ n: number }>(sql`select count(*)::int as n from ${sql.raw(table)} p join sync.raw_responses r on r.id = p.raw_response_id where p.token_slug = ${slug} and r.status <> 'partial'`);
      expect(links).toEqual([{ n: 0 }]);
    }
  });

  it('a second sync with the point clean stores it: the charts ok and whole', async () => {
    fx.sim.setHostile([]);
    const again = await runCli(['sync'], env(), { timeoutMs: 120_000 });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await appState()).toMatchObject({ status: 'ok', last_error: null });
    for (const s of await gwResources()) expect(s, s.resource).toMatchObject({ status: 'ok', last_error: null });
    await expectAppPoints(null);
    await expectGatewayPoints(null);
  }, patience(180_000));

  it('a third sync with the point poisoned again closes nothing: the point stored stays', async () => {
    fx.sim.setHostile([
      { place: 'chartPoint', char, slug },
      { place: 'chartPoint', char, slug, source: 'gateway' },
    ]);
    const third = await runCli(['sync', '--full'], env(), { timeoutMs: 120_000 });
    expect(third.code, third.stdout + third.stderr).toBe(0);
    expect(await appState()).toMatchObject({ status: 'partial' });
    for (const s of await gwResources()) expect(s, s.resource).toMatchObject({ status: 'partial' });
    await expectAppPoints(null);
    await expectGatewayPoints(null);
  }, patience(180_000));
});
