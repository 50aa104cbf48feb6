// Canary keys through a complete sync of both sources, faults included, run as the real
// CLI: they must appear nowhere in what the process printed or logged, nowhere in the
// database (pg_dump of every table), and never on a public route's request.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey } from '../helpers/services.ts';
import { recordFigure } from '../helpers/fault-figures.ts';

describe('secrets', () => {
  const appKey = canaryKey('app');
  const gatewayKey = canaryKey('gateway');
  const wrongKey = canaryKey('wrong');
  const fx = useSimAndWarehouse({
    tokens: 5,
    historyDays: 10,
    chartsPerToken: 1,
    seed: 606,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
    faults: { errorRate: 0.1, unavailableRate: 0.05 },
  });

  it('appear in no output, no log line, no table, and on no public route', async () => {
    const env = { TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, DATABASE_URL: fx.databaseUrl, LOG_LEVEL: 'trace' };
    const runs = [
      await runCli(['sync', '--json'], env),
      await runCli(['sync', '--json', '--full'], env),
      // A refused key is reported without being quoted.
      await runCli(['sync', '--json', '--source', 'gateway'], { ...env, TE_GATEWAY_API_KEY: wrongKey }),
      await runCli(['status', '--json'], env),
    ];
    expect(runs.map((r) => r.code)).toEqual([0, 0, 1, 0]);
    const printed = runs.map((r) => r.stdout + r.stderr).join('\n');
    expect(printed.split('\n').length).toBeGreaterThan(200);
    const dump = execFileSync('pg_dump', ['--data-only', '--no-owner', fx.databaseUrl], { maxBuffer: 512 * 1024 * 1024 }).toString();
    expect(dump.length).toBeGreaterThan(10_000);
    for (const key of [appKey, gatewayKey, wrongKey]) {
      expect(printed).not.toContain(key);
      expect(dump).not.toContain(key);
    }
    const publicRoutes = fx.sim.requests.filter((r) => r.path.startsWith('/api/v1/') && !r.path.endsWith('/full'));
    expect(publicRoutes.length).toBeGreaterThan(20);
    expect(publicRoutes.filter((r) => r.headers.authorization !== undefined)).toEqual([]);
    expect(fx.sim.requests.filter((r) => r.path.includes('?') && (r.path.includes(appKey) || r.path.includes(gatewayKey)))).toEqual([]);
    recordFigure('secrets', { logLines: printed.split('\n').length, dumpBytes: dump.length, requestsChecked: fx.sim.requests.length, secretsFound: 0 });
  }, patience(120_000));
});
