// A TE_APP_API_KEY the app host refuses on every bundle request, while the public routes work:
// both runners, as real processes, end the run `partial` with a warning that names the
// variable and counts the refusals, and never print the key.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { syncOnce } from '../helpers/sync.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { SCHEDULES_OFF, withWorkerRun } from '../helpers/workers.ts';

const goodKey = canaryKey('app_good');
const wrongKey = canaryKey('app_wrong');
const gwKey = canaryKey('gw');
const WARNING = /warning: the app host refused the key in TE_APP_API_KEY on every request that needs it \((\d+) requests; 401 unauthorized: (\d+)\): research bundles were not fetched; check the key/;

describe('a key refused on every request that needs it', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 23, appKeys: { [goodKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gwKey] });
  let env: Record<string, string>;
  beforeAll(() => {
    env = { TE_APP_URL: fx.sim.url, TE_APP_API_KEY: wrongKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gwKey, DATABASE_URL: fx.databaseUrl, TE_REQUEST_TIMEOUT_MS: '5000' };
  });

  const bundleRequests = () => fx.sim.requests.filter((r) => r.path.endsWith('/full')).length;
  const lastRun = async () => (await fx.warehouse.query<{ status: string; stats: any }>(sql`select status, stats from sync.runs order by started_at desc limit 1`))[0]!;

  it('tesync sync: "Sync partial", a warning line with the variable and the count, exit 0', async () => {
    const before = bundleRequests();
    const r = await runCli(['sync'], env, { timeoutMs: 120_000 });
    const refused = bundleRequests() - before;
    expect(refused).toBe(3);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Sync partial in /);
    const m = WARNING.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(Number(m![1])).toBe(refused);
    expect(Number(m![2])).toBe(refused);
    expect(r.stdout + r.stderr).not.toContain(wrongKey);
    const run = await lastRun();
    expect(run.status).toBe('partial');
    expect(run.stats.requests.keyRefusals).toEqual([{ variable: 'TE_APP_API_KEY', source: 'app', bucket: 'app-key', refused, answers: { '401 unauthorized': refused } }]);
  }, patience(150_000));

  it('tesync sync --json: the status and the refusal in the JSON, the warning on stderr', async () => {
    const r = await runCli(['sync', '--json', '--only', 'tokens,bundle'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const outcome = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { status: string; requests: { keyRefusals: { variable: string; refused: number }[] } };
    expect(outcome.status).toBe('partial');
    expect(outcome.requests.keyRefusals).toMatchObject([{ variable: 'TE_APP_API_KEY', refused: 3 }]);
    expect(r.stderr).toMatch(new RegExp(`tesync: ${WARNING.source}`));
    expect(r.stdout + r.stderr).not.toContain(wrongKey);
  }, patience(150_000));

  it('tesync status lists the refused run as partial', async () => {
    // The run it lists: the same sync as `tesync sync --only tokens,bundle`, in this process.
    const run = await syncOnce(fx.sim, fx.warehouse, createTestLogger([wrongKey, gwKey], 'warn').logger, { appKey: wrongKey, gatewayKey: gwKey }, ['app', 'gateway'], { only: ['tokens', 'bundle'] });
    expect(run.status).toBe('partial');
    const r = await runCli(['status', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const status = JSON.parse(r.stdout) as { runs: { status: string }[] };
    expect(status.runs[0]!.status).toBe('partial');
  }, patience(150_000));

  it('tesync worker + enqueue --wait: the same status, the same warning, and a warn log line', async () => {
    const workerEnv = { ...env, REDIS_URL: await redisServerUrl(), TE_QUEUE_PREFIX: uniqueName('tesync_keyref'), TE_METRICS_PORT: '0', ...SCHEDULES_OFF, LOG_LEVEL: 'info' };
    await withWorkerRun(
      workerEnv,
      'tokens,bundle',
      async ({ worker, enqueue: r }) => {
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/^Sync partial in /);
        expect(r.stdout).toMatch(WARNING);
        expect((await lastRun()).status).toBe('partial');
        const warned = worker.lines().find((l) => l.variable === 'TE_APP_API_KEY');
        expect(warned).toMatchObject({ level: 40, refused: 3 });
        expect(warned!.msg).toMatch(/^the app host refused the key in TE_APP_API_KEY/);
        expect(worker.stderr() + r.stdout + r.stderr).not.toContain(wrongKey);
      },
      { removeKeys: true },
    );
  }, patience(150_000));

  // Last: once the right key fetched the bundles, later runs skip them as unchanged.
  it('with the right key: succeeded and no warning', async () => {
    const r = await runCli(['sync', '--only', 'tokens,bundle'], { ...env, TE_APP_API_KEY: goodKey }, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Sync succeeded in /);
    expect(r.stdout).not.toContain('warning');
    expect((await lastRun()).status).toBe('succeeded');
  }, patience(150_000));
});
