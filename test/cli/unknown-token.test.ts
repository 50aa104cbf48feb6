// `tesync sync --token SLUG` with a slug no token list holds: exit 2 naming it (and the slug
// it may have meant), never "Sync succeeded" for a walk of nothing.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { unknownSlugs } from '../../src/store/read/listed-tokens.ts';
import { runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey } from '../helpers/services.ts';

const appKey = canaryKey('app_slug');
const gwKey = canaryKey('gw_slug');

describe('unknownSlugs (pure)', () => {
  const listed = [
    { slug: 'aurora', name: 'Aurora', symbol: 'AUR' },
    { slug: 'basalt-finance', name: 'Basalt Finance', symbol: 'BSLT' },
  ];
  it.each([
    [['aurora'], []],
    [['no-such-token'], [{ slug: 'no-such-token' }]],
    [['Aurora'], [{ slug: 'Aurora', meant: 'aurora' }]],
    [['BSLT'], [{ slug: 'BSLT', meant: 'basalt-finance' }]],
    [['Basalt Finance', 'aurora', 'Basalt Finance'], [{ slug: 'Basalt Finance', meant: 'basalt-finance' }]],
  ])('%j → %j', (asked, expected) => {
    expect(unknownSlugs(asked, listed)).toEqual(expected);
  });
});

describe('tesync sync --token with slugs in neither list', () => {
  const fx = useSimAndWarehouse({
    tokens: 3,
    historyDays: 5,
    chartsPerToken: 1,
    seed: 82,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gwKey],
  });
  const env = () => ({ TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gwKey, DATABASE_URL: fx.databaseUrl });

  it.each([
    { tokens: ['no-such-token'], code: 2, line: /^tesync: --token: "no-such-token" is in neither token list; nothing was fetched for it$/m },
    { tokens: ['Aurora'], code: 2, line: /^tesync: --token: "Aurora" \(did you mean aurora\?\) is in neither token list/m },
    { tokens: ['aurora', 'nope', 'zilch'], code: 2, line: /^tesync: --token: "nope", "zilch" are in neither token list; nothing was fetched for them$/m },
    { tokens: ['aurora'], code: 0, line: /^Sync succeeded in /m },
  ])('--token $tokens: exit $code', async ({ tokens, code, line }) => {
    const r = await runCli(['sync', ...tokens.flatMap((t) => ['--token', t])], env());
    expect(r.code, r.stderr).toBe(code);
    expect(`${r.stdout}${r.stderr}`).toMatch(line);
    if (code !== 0) expect(r.stderr.split('\n').filter((l) => l.startsWith('tesync: --token'))).toHaveLength(1);
  });
});

describe('tesync enqueue --token with slugs in neither list, as last fetched', () => {
  const fx = useSimAndWarehouse({ tokens: 2, historyDays: 3, chartsPerToken: 1, seed: 83, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] });
  const env = () => ({ TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gwKey, DATABASE_URL: fx.databaseUrl, TE_QUEUE_PREFIX: 'tesync_unknown_token' });

  it('exit 2 naming it, nothing queued', async () => {
    const first = await runCli(['sync', '--only', 'tokens'], env());
    expect(first.code, first.stderr).toBe(0);
    const r = await runCli(['enqueue', '--token', 'Aurora'], env());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe('tesync: --token: "Aurora" (did you mean aurora?) is in neither token list; nothing was queued for it (the lists as last fetched)');
    expect(r.stdout).toBe('');
    const queues = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from pg_namespace where nspname like 'bullmq%'`);
    expect(queues[0]!.n, 'no queue schema made for a walk not queued').toBe(0);
  });
});
