// `tesync sync --token SLUG` with a slug no token list holds: exit 2 naming it (and the slug
// it may have meant), never "Sync succeeded" for a walk of nothing.
import { describe, expect, it } from 'vitest';
import { unknownSlugs } from '../../src/store/listed-tokens.ts';
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
