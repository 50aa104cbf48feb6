import { describe, expect, it } from 'vitest';
import { catalog, groups } from '../../../src/resources/index.ts';
import { loadConfig } from '../../../src/lib/config.ts';
import { cronProblem } from '../../../src/lib/cron.ts';
import { configuredSchedules, scheduleGroups, SCHEDULES } from '../../../src/runners/bullmq/schedules.ts';
import { inScope, PLANNER_GROUPS } from '../../../src/runners/walk-scope.ts';

describe('schedules', () => {
  it('cover every resource group of the catalog exactly once', () => {
    const all = groups();
    const covered = SCHEDULES.flatMap((s) => scheduleGroups(s.id, all));
    expect([...covered].sort()).toEqual([...all].sort());
    expect(new Set(covered).size).toBe(covered.length);
    for (const g of PLANNER_GROUPS) expect(all).toContain(g);
  });

  it('give a group added later to the per-token walk', () => {
    expect(scheduleGroups('token-data', [...groups(), 'newthing'])).toContain('newthing');
    expect(scheduleGroups('screener', [...groups(), 'newthing'])).toEqual(['screener']);
  });

  it('default to patterns that suit the data, each configurable and switchable off', () => {
    expect(configuredSchedules(loadConfig({}))).toEqual([
      { id: 'catalog', pattern: '0 */6 * * *', tz: 'UTC' },
      { id: 'screener', pattern: '5 * * * *', tz: 'UTC' },
      { id: 'bundles', pattern: '30 4 * * *', tz: 'UTC' },
      { id: 'token-data', pattern: '30 2 * * *', tz: 'UTC' },
      // Nowhere to write without TE_EXPORT_DIR: not registered.
      { id: 'export', pattern: null, tz: 'UTC' },
    ]);
    expect(configuredSchedules(loadConfig({ TE_EXPORT_DIR: '/tmp/x' })).find((s) => s.id === 'export')).toEqual({ id: 'export', pattern: '15 0 * * *', tz: 'UTC' });
    expect(configuredSchedules(loadConfig({ TE_EXPORT_DIR: '/tmp/x', TE_SCHEDULE_EXPORT: 'off' })).find((s) => s.id === 'export')?.pattern).toBeNull();
    const c = loadConfig({ TE_SCHEDULE_SCREENER: '*/15  *  * * *', TE_SCHEDULE_BUNDLES: 'off', TE_SCHEDULE_TZ: 'Europe/Berlin' });
    expect(c.schedules).toMatchObject({ screener: '*/15 * * * *', bundles: null });
    expect(configuredSchedules(c).find((s) => s.id === 'screener')).toEqual({ id: 'screener', pattern: '*/15 * * * *', tz: 'Europe/Berlin' });
  });

  it('refuse a bad pattern or time zone at start, naming the variable', () => {
    expect(() => loadConfig({ TE_SCHEDULE_SCREENER: 'hourly' })).toThrow(/TE_SCHEDULE_SCREENER: must be a cron pattern or off/);
    expect(() => loadConfig({ TE_SCHEDULE_CATALOG: '0 25 * * *' })).toThrow(/TE_SCHEDULE_CATALOG: .*hour "25"/);
    expect(() => loadConfig({ TE_SCHEDULE_TZ: 'Moon/Base' })).toThrow(/TE_SCHEDULE_TZ/);
  });
});

describe('cron patterns', () => {
  it.each(['* * * * *', '5 * * * *', '0 */6 * * *', '30 2 * * 1-5', '0 0 1,15 * ?', '0 9 * JAN-MAR MON', '*/10 * * * * *', '0 0 12 * * SUN', '0-30/5 8-18 * * 7'])('accepts %s', (p) => {
    expect(cronProblem(p)).toBeUndefined();
  });
  it.each([
    ['* * * *', /5 fields/],
    ['60 * * * *', /minute "60"/],
    ['* 24 * * *', /hour "24"/],
    ['* * 0 * *', /day of month "0"/],
    ['* * * 13 *', /month "13"/],
    ['* * * * 8', /day of week "8"/],
    ['*/0 * * * *', /step/],
    ['10-5 * * * *', /backwards/],
    ['? * * * *', /minute/],
    ['@daily', /5 fields/],
  ])('refuses %s', (p, why) => {
    expect(cronProblem(p)).toMatch(why);
  });
});

describe('walk scope', () => {
  const job = (name: string) => catalog.get(name)!;
  it('runs planners always, the covered groups, and the tokens asked for', () => {
    const screenerOnly = { groups: ['screener'], tokens: [] };
    expect(inScope(screenerOnly, job('app.tokens'), {})).toBe(true);
    expect(inScope(screenerOnly, job('app.metrics'), {})).toBe(true);
    expect(inScope(screenerOnly, job('app.screener'), {})).toBe(true);
    expect(inScope(screenerOnly, job('gateway.screener'), {})).toBe(true);
    expect(inScope(screenerOnly, job('app.snapshot'), { slug: 'a' })).toBe(false);
    expect(inScope({ groups: ['app.history'], tokens: [] }, job('gateway.history'), { slug: 'a', period: '30d' })).toBe(false);
    expect(inScope({ groups: ['app.history'], tokens: [] }, job('app.history'), { slug: 'a' })).toBe(true);
    expect(inScope({ groups: null, tokens: ['a'] }, job('app.history'), { slug: 'b' })).toBe(false);
    expect(inScope({ groups: null, tokens: ['a'] }, job('app.history'), { slug: 'a' })).toBe(true);
  });
});
