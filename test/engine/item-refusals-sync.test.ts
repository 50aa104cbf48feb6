// A refusal is as small as the thing refused (issue 55), end to end: a first sync, as a real
// `tesync sync` process, over real HTTP from the simulator into a fresh Postgres warehouse,
// whose lists each hold one item with a string Postgres cannot store (U+0000, or an unpaired
// surrogate): a token of `/api/v1/tokens` and of `/v1/tokens`, a row of each screener. Each
// item is refused alone: the sync exits 0, the run is `partial`, the list's state is `partial`
// and names the item and field (never the character), its body is archived byte for byte as
// the simulator wrote it and its rows link to it, nothing is delisted, the refused token's
// own snapshot, history, charts and bundle are fetched and stored, and every other row of
// both sources equals the simulator's.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HostileChar } from '../../sim/index.ts';
import { expectAppMirror } from '../helpers/app-mirror.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { expectGatewayMirror } from '../helpers/gateway-mirror.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey } from '../helpers/services.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const CHAR_TEXT = { nul: /holds U\+0000, which Postgres cannot store exactly$/, surrogate: /holds an unpaired surrogate U\+D83D, which Postgres cannot store exactly$/ } as const;
/** Neither U+0000, a surrogate code unit, nor the U+FFFD one would have become. */
const DIRTY = /[\u0000\ud800-\udfff\ufffd]/;

describe.each(['nul', 'surrogate'] as const)('a first sync whose lists each hold one item with %s', (char: HostileChar) => {
  const fx = useSimAndWarehouse({
    tokens: 5,
    historyDays: 5,
    chartsPerToken: 1,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
  });
  const q = <T>(text: ReturnType<typeof sql>) => fx.warehouse.query<T>(text);
  /** The poisoned items: the second token of each list, the third row of each screener. */
  const poisoned = { appToken: '', appRow: '', gatewayToken: '', gatewayRow: '' };
  let cli: CliResult;
  let runId: string;

  beforeAll(async () => {
    const { sim } = fx;
    poisoned.appToken = sim.data.appTokens()[1]!.slug;
    poisoned.appRow = sim.data.appScreenerRows()[2]!.token.slug;
    poisoned.gatewayToken = sim.data.gatewayTokens()[1]!.slug;
    poisoned.gatewayRow = sim.data.gatewayScreenerRows()[2]!.slug;
    sim.setHostile([
      { place: 'tokenName', char, slug: poisoned.appToken },
      { place: 'screenerName', char, slug: poisoned.appRow },
      { place: 'tokenName', char, slug: poisoned.gatewayToken, source: 'gateway' },
      { place: 'screenerName', char, slug: poisoned.gatewayRow, source: 'gateway' },
    ]);
    sim.resetRequests();
    cli = await runCli(['sync'], { DATABASE_URL: fx.databaseUrl, TE_APP_URL: sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: sim.url, TE_GATEWAY_API_KEY: gatewayKey, TE_CONCURRENCY: '8' }, { timeoutMs: 120_000 });
    runId = (await q<{ id: string }>(sql`select id::text from sync.runs order by started_at desc limit 1`))[0]!.id;
  }, patience(180_000));

  it('exits 0 and the run is partial, closed, with nothing recorded that carries the character', async () => {
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    expect(await q(sql`select status from sync.runs where id = ${runId}::uuid`)).toEqual([{ status: 'partial' }]);
    const [run] = await q<{ text: string }>(sql`select coalesce(error, '') || stats::text as text from sync.runs where id = ${runId}::uuid`);
    expect(run!.text).not.toMatch(DIRTY);
  });

  it.each([
    ['app', 'tokens', () => poisoned.appToken, 'displayName'],
    ['app', 'screener', () => poisoned.appRow, 'token.displayName'],
    ['gateway', 'tokens', () => poisoned.gatewayToken, 'name'],
    ['gateway', 'screener', () => poisoned.gatewayRow, 'name'],
  ] as const)('%s %s: partial, naming the item and field; its body archived as served, its rows linked to it', async (source, resource, _slug, field) => {
    const [state] = await q<{ status: string; last_run_id: string; details: { refused?: string[]; refusedItems?: number }; last_error: string | null }>(
      sql`select status, last_run_id::text, details, last_error from sync.resource_state where source = ${source} and resource = ${resource}`,
    );
    expect(state).toMatchObject({ status: 'partial', last_run_id: runId });
    expect(state!.details.refusedItems).toBe(1);
    const [reason] = state!.details.refused!;
    expect(reason).toMatch(new RegExp(`^data\\[\\d+\\]\\.${field.replace('.', '\\.')} `));
    expect(reason).toMatch(CHAR_TEXT[char]);
    // Where people look for what went wrong: the state's last_error, and the sync's summary.
    expect(state!.last_error).toBe(`1 item refused: ${reason}`);
    expect(cli.stdout).toContain(`  partial: ${resource} (${source}): 1 item refused: ${reason}\n`);
    expect(JSON.stringify(state)).not.toMatch(DIRTY);

    // The body, archived byte for byte: the hash of what the simulator wrote, kept `partial`.
    const path = source === 'app' ? `/api/v1/${resource}` : `/v1/${resource}`;
    const served = fx.sim.requests.filter((r) => r.path === path && r.status === 200).map((r) => r.bodySha256);
    expect(served).toHaveLength(1);
    const kept = await q<{ id: number; status: string; sha: string }>(
      sql`select id::int, status, encode(sha256(coalesce(body_bytes, convert_to(body_text, 'UTF8'))), 'hex') as sha from sync.raw_responses where source = ${source} and path = ${path}`,
    );
    expect(kept.map((k) => [k.status, k.sha])).toEqual([['partial', served[0]]]);
    // Every row the list wrote links to that body.
    const table = { app: { tokens: 'app.tokens', screener: 'app.screener_rows' }, gateway: { tokens: 'gateway.tokens', screener: 'gateway.screener_rows' } }[source][resource];
    const links = await q<{ id: number | null; n: number }>(sql`select raw_response_id::int as id, count(*)::int as n from ${sql.raw(table)} group by 1`);
    expect(links).toEqual([{ id: kept[0]!.id, n: 4 }]);
  });

  it('nothing is delisted, and the refused tokens are not written', async () => {
    expect(await q(sql`select count(*)::int as n from app.tokens where delisted_at is not null`)).toEqual([{ n: 0 }]);
    expect(await q(sql`select count(*)::int as n from gateway.tokens where delisted_at is not null`)).toEqual([{ n: 0 }]);
    expect(await q(sql`select count(*)::int as n from app.tokens where slug = ${poisoned.appToken}`)).toEqual([{ n: 0 }]);
    expect(await q(sql`select count(*)::int as n from gateway.tokens where slug = ${poisoned.gatewayToken}`)).toEqual([{ n: 0 }]);
  });

  it("the refused token's own jobs were planned from its clean slug, each judged on its own body and stored", async () => {
    const states = await q<{ resource: string; status: string; last_run_id: string }>(
      sql`select resource, status, last_run_id::text from sync.resource_state where source = 'app' and resource like ${`token/${poisoned.appToken}/%`} order by 1`,
    );
    expect(states.map((s) => s.resource)).toEqual(expect.arrayContaining([`token/${poisoned.appToken}/snapshot`, `token/${poisoned.appToken}/history`, `token/${poisoned.appToken}/charts`, `token/${poisoned.appToken}/bundle`]));
    for (const s of states) expect(s, s.resource).toMatchObject({ status: 'ok', last_run_id: runId });
    expect(await q(sql`select count(*)::int as n from app.token_snapshots where token_slug = ${poisoned.appToken}`)).toEqual([{ n: 1 }]);
    const gw = await q<{ resource: string; status: string }>(sql`select resource, status from sync.resource_state where source = 'gateway' and resource like ${`token/${poisoned.gatewayToken}/%`}`);
    expect(gw.length).toBeGreaterThan(2);
    for (const s of gw) expect(s.status, s.resource).toBe('ok');
  });

  it("every other row of both sources equals the simulator's", async () => {
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'ok', refused: { tokens: [poisoned.appToken], screenerRows: [poisoned.appRow] } });
    await expectGatewayMirror(fx.warehouse, fx.sim.data, { refused: { tokens: [poisoned.gatewayToken], screenerRows: [poisoned.gatewayRow] } });
  });
});
