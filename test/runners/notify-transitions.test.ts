// Transitions only (issue 59 item 2): real syncs of a simulator whose data is months old, three
// times, then of today's data, twice. Each group overdue is told once, however many runs find it
// so; its recovery once; and a walk's failure and its recovery once each, whatever the runs in
// between. Judged where the sync ends (performSync), as `tesync sync` does.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

const DAY_MS = 86_400_000;
const MONTHS = 90;
const day = (offset: number) => new Date(Date.now() + offset * DAY_MS).toISOString().slice(0, 10);
const appKey = canaryKey('t59app');
const gatewayKey = canaryKey('t59gw');

describe('a group overdue for three runs, then on time for two', () => {
  const log = createTestLogger();
  // Epoch 0 serves data 90 days old; epoch 90, data of today.
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 592, lastDate: day(-MONTHS), freshness: 'fresh', appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  const sync = () => fx.sync(log.logger, { appKey, gatewayKey }, ['app', 'gateway']);
  const told = () => fx.warehouse.query<{ type: string; subject: string; run_id: string | null; figures: Record<string, unknown> }>(sql`select type, subject, run_id, figures from sync.notifications order by seq`);
  const statuses: string[] = [];
  let afterStale: Awaited<ReturnType<typeof told>>;

  beforeAll(async () => {
    const slug = fx.sim.data.appTokens().find((t) => t.coverage.metricHistory)!.slug;
    // The first run is partial (a history refused); the ones after it succeed: one recovery.
    fx.sim.script(`/api/v1/tokens/${slug}/metrics/history`, [{ status: 422, code: 'unprocessable_history' }]);
    for (let i = 0; i < 3; i++) statuses.push((await sync()).status);
    afterStale = await told();
    fx.sim.setEpoch(MONTHS);
    for (let i = 0; i < 2; i++) statuses.push((await sync()).status);
  }, patience(240_000));

  it('each overdue group is told once over three runs, and its recovery once over two', async () => {
    expect(statuses).toEqual(['partial', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const overdue = afterStale.filter((e) => e.type === 'custom_group_overdue');
    expect(overdue.map((e) => e.subject)).toContain('overdue:app.history');
    // Once each: no subject twice.
    expect(new Set(overdue.map((e) => e.subject)).size).toBe(overdue.length);
    const history = overdue.find((e) => e.subject === 'overdue:app.history')!;
    expect(history.figures).toMatchObject({ reason: expect.stringMatching(/^data of token .* old by its newest history point/), max_age_hours: 72 });
    const all = await told();
    const onTime = all.filter((e) => e.type === 'custom_group_on_time');
    expect(onTime.map((e) => e.subject).sort()).toEqual(overdue.map((e) => e.subject).sort());
    expect(all.filter((e) => e.type === 'custom_group_overdue')).toHaveLength(overdue.length);
  });

  it('the walk\'s failure once, its recovery once', async () => {
    const runs = (await told()).filter((e) => e.subject === 'run:app+gateway');
    expect(runs.map((e) => e.type)).toEqual(['custom_run_partial', 'custom_run_recovered']);
  });
});
