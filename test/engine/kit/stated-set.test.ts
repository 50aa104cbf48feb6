// The sets declared with their tables, the write options they give, and the mass-removal rule, without IO.
import { describe, expect, it } from 'vitest';
import { keptMembers, setRuleOf, wholeSet } from '../../../src/engine/kit/stated-set.ts';
import { declaredSets } from '../../../src/schema/warehouse/declare-table.ts';
import { describeRemovals, isMassRemoval, massRemovals, sameRemovals } from '../../../src/engine/job/removals.ts';
import * as app from '../../../src/schema/warehouse/app.ts';
import { chartPoints, metricHistory, tokens } from '../../../src/schema/warehouse/app.ts';
import * as gateway from '../../../src/schema/warehouse/gateway.ts';
import { gatewayChartPoints, gatewayTrendPoints } from '../../../src/schema/warehouse/gateway.ts';
import { VERSIONED } from '../../../src/schema/warehouse/history.ts';
import { SET_FROM, SET_KEEPS } from '../../../src/store/write/set-removal.ts';
import { keyProps } from '../../../src/schema/warehouse/table-rules.ts';

describe('declared sets', () => {
  it('every scope names key columns of its table, and leaves one to tell members apart', () => {
    expect(declaredSets(app, gateway).length).toBeGreaterThan(0);
    for (const d of declaredSets(app, gateway)) {
      const key = keyProps(d.table);
      for (const c of d.scope) expect(key, c).toContain(c);
      expect(key.length).toBeGreaterThan(d.scope.length);
      if (d.from) expect(key).toContain(d.from);
      for (const c of d.keptBy ?? []) {
        expect(key, c).toContain(c);
        expect(d.scope).not.toContain(c);
      }
    }
  });

  it('only versioned tables lose rows: a closed row keeps its version', () => {
    for (const d of declaredSets(app, gateway)) expect(VERSIONED).toContain(d.table);
  });

  it('a write replaces only when the response stated the set (absent is not empty)', () => {
    expect(wholeSet(tokens, {}, true)).toEqual({ replace: {} });
    expect(wholeSet(tokens, {}, false)).toEqual({});
    expect(wholeSet(metricHistory, { tokenSlug: 'a', stream: 'fees' }, true)).toEqual({ replace: { tokenSlug: 'a', stream: 'fees' } });
    expect(() => wholeSet(chartPoints, { tokenSlug: 'a' }, true)).toThrow(/no set is declared/);
    expect(setRuleOf(chartPoints, { chartKey: 'c', tokenSlug: 'a' })?.scope).toEqual(['tokenSlug', 'chartKey']);
  });

  it('a sliding window states its set from its first time on; an empty one states nothing', () => {
    const at = (d: string) => ({ tokenSlug: 'a', period: '7d', seriesKey: 's', ts: new Date(d) }) as typeof gatewayTrendPoints.$inferInsert;
    const w = wholeSet(gatewayTrendPoints, { tokenSlug: 'a', period: '7d' }, true, [at('2026-06-03'), at('2026-06-01'), at('2026-06-02')]);
    // The scope's columns stay the columns it fixes; the start rides beside them.
    expect(Object.fromEntries(Object.entries(w.replace!))).toEqual({ tokenSlug: 'a', period: '7d' });
    expect((w.replace as Record<symbol, unknown>)[SET_FROM]).toEqual({ ts: new Date('2026-06-01') });
    expect(wholeSet(gatewayTrendPoints, { tokenSlug: 'a', period: '7d' }, true, [])).toEqual({});
  });

  it('a catalog keeps the members it names by some key columns, and writes no rows', () => {
    const w = keptMembers(gatewayChartPoints, { tokenSlug: 'a' }, true, [{ chartKey: 'c1' }]);
    expect(Object.fromEntries(Object.entries(w.replace!))).toEqual({ tokenSlug: 'a' });
    expect((w.replace as Record<symbol, unknown>)[SET_KEEPS]).toEqual([{ chartKey: 'c1' }]);
    expect(keptMembers(gatewayChartPoints, { tokenSlug: 'a' }, false, [{ chartKey: 'c1' }])).toEqual({});
    expect(() => keptMembers(gatewayChartPoints, { tokenSlug: 'a' }, true, [{ timeframe: '30d' }])).toThrow(/named by chartKey/);
    // The two kinds of set are declared apart: a catalog's is never replaced by rows.
    expect(() => wholeSet(gatewayChartPoints, { tokenSlug: 'a' }, true)).toThrow(/no set is declared/);
    expect(() => keptMembers(gatewayChartPoints, { tokenSlug: 'a', chartKey: 'c', timeframe: '7d' }, true, [])).toThrow(/no set kept/);
  });
});

describe('the mass-removal rule', () => {
  it('more than a fifth of the members, and three or more', () => {
    expect(isMassRemoval(6, 4)).toBe(true);
    expect(isMassRemoval(15, 3)).toBe(false);
    expect(isMassRemoval(14, 3)).toBe(true);
    expect(isMassRemoval(2, 2)).toBe(false);
    expect(isMassRemoval(100, 20)).toBe(false);
    expect(isMassRemoval(100, 21)).toBe(true);
  });

  it('two responses agree only when they remove the same members of the same sets', () => {
    const a = [{ write: 0, set: 'app.tokens', members: 6, absent: ['["c"]', '["d"]', '["e"]', '["f"]'] }];
    expect(massRemovals(a)).toEqual(a);
    expect(sameRemovals(a, [{ ...a[0]!, absent: [...a[0]!.absent] }])).toBe(true);
    expect(sameRemovals(a, [])).toBe(false);
    expect(sameRemovals(a, [{ ...a[0]!, absent: ['["c"]'] }])).toBe(false);
    expect(describeRemovals(a)).toBe('app.tokens would lose 4 of 6');
  });
});
