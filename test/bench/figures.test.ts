import { describe, expect, it } from 'vitest';
import { busyShare, machineDuring } from './machine.ts';
import { SimData } from '../../sim/data.ts';
import { rateLimitReport, requestsNecessary, sumWrites, type RequestRow } from './figures.ts';
import { writesLines, type RunFigures } from './run.ts';

const row = (bucket: string, httpStatus: number, startedAtMs: number, rateLimitRemaining: number | null = null): RequestRow => ({ bucket, httpStatus, startedAtMs, durationMs: 10, rateLimitRemaining });

describe('bench 429 figures', () => {
  it('counts 429s before headers, after headers, and after the first 429 taught the window, per bucket', () => {
    const report = rateLimitReport([
      row('app-public', 429, 0), // before any headers were read
      row('app-public', 200, 100, 5),
      row('app-public', 429, 200), // after headers: the one that teaches the window
      row('app-public', 200, 300, 9),
      row('app-public', 429, 400), // after the window was known
      row('gateway', 200, 0, 10),
      row('gateway', 429, 50),
    ]);
    expect(report.byBucket['app-public']).toEqual({ total: 3, afterHeaders: 2, afterFirst429: 2 });
    expect(report.byBucket.gateway).toEqual({ total: 1, afterHeaders: 1, afterFirst429: 0 });
    expect([report.total, report.afterHeaders, report.afterFirst429]).toEqual([4, 3, 2]);
  });
});

describe('the requests a sync needs', () => {
  it('counts a request per page where the lists come in pages', () => {
    const data = new SimData({ seed: 42, tokens: 9, historyDays: 3, chartsPerToken: 2 }).view(0);
    const s = { gatewayPeriods: ['30d' as const], gatewayTimeframes: ['90d' as const] };
    const whole = requestsNecessary(data, s);
    const paged = requestsNecessary(data, { ...s, pageSize: 1 });
    const appCatalogs = data.appTokens().filter((t) => t.coverage.charts).reduce((a, t) => a + Math.max(1, data.appCharts(t.slug)!.length) - 1, 0);
    const gatewayCatalogs = data.gatewayTokens().reduce((a, t) => a + Math.max(0, (data.gatewayCharts(t.slug) ?? []).length - 1), 0);
    expect(paged['app-public'] - whole['app-public']).toBe(data.appTokens().length - 1 + data.appScreenerRows().length - 1 + appCatalogs);
    expect(paged.gateway - whole.gateway).toBe(data.gatewayTokens().length - 1 + data.gatewayScreenerRows().length - 1 + gatewayCatalogs);
    expect(requestsNecessary(data, { ...s, pageSize: 100 })).toEqual(whole);
  });
});

describe('the rest of the machine during a run', () => {
  const at = (total: number, idle: number, steal: number) => ({ total, idle, steal });

  it('counts busy ticks that the run did not use as other processes, and steal apart', () => {
    // 2 cores over 10 s: 2000 ticks. Busy 1200 ticks (12 s), of which the run used 9 s; 100 ticks stolen.
    const m = machineDuring(at(10_000, 5_000, 50), at(12_000, 5_700, 150), 9_000, 1_000);
    expect(m.settledMs).toBe(1_000);
    expect(m.othersShare).toBeCloseTo(3_000 / 20_000, 6);
    expect(m.stealShare).toBeCloseTo(100 / 2_000, 6);
    expect(busyShare(at(10_000, 5_000, 50), at(12_000, 5_700, 150))).toBeCloseTo(1_200 / 2_000, 6);
  });

  it('never reports a negative share when the run used more than the ticks show', () => {
    expect(machineDuring(at(0, 0, 0), at(1_000, 500, 0), 6_000, 0).othersShare).toBe(0);
  });

  it('has no figure without two readings that advanced', () => {
    expect(machineDuring(null, at(1, 0, 0), 0, 0)).toEqual({ settledMs: 0, othersShare: null, stealShare: null });
    expect(machineDuring(at(5, 0, 0), at(5, 0, 0), 0, 0).othersShare).toBeNull();
    expect(busyShare(at(5, 0, 0), at(5, 0, 0))).toBeNull();
  });
});

describe('rows written per versioned table', () => {
  const w = (written: number, versions: number, rewrittenUnchanged = 0, onlyAsOf = 0) => ({ written, versions, rewrittenUnchanged, onlyAsOf });

  it('sums a phase over its tables', () => {
    expect(sumWrites({})).toEqual(w(0, 0));
    expect(sumWrites({ 'app.tokens': w(3, 1, 0, 1), 'app.chart_points': w(10, 8, 2, 5) })).toEqual(w(13, 9, 2, 6));
  });

  it('prints the tables either re-sync wrote to, and flags a write that changed nothing', () => {
    const phase = (tableWrites: RunFigures['resync']['tableWrites'], tableWritesMs = 10) => ({ tableWrites, tableWritesMs }) as RunFigures['resync'];
    const run = { target: 'postgres', tokens: 3, full: phase({}), resync: phase({}), revision: phase({ 'gateway.tokens': w(2, 2, 0, 2), 'app.metric_history': w(5, 3, 1, 0) }, 1500) } as unknown as RunFigures;
    const text = writesLines(run).join('\n');
    expect(text).toContain('revision re-sync (epoch 2)');
    expect(text).toMatch(/app\.metric_history\s+0 \/ 0\s+5 \/ 3 \(1 unchanged!\)/);
    expect(text).toMatch(/gateway\.tokens\s+0 \/ 0\s+2 \/ 2\s+2/);
    expect(text).toMatch(/total\s+0 \/ 0\s+7 \/ 5 \(1 unchanged!\)\s+2/);
    // Sorted by name.
    expect(text.indexOf('app.metric_history')).toBeLessThan(text.indexOf('gateway.tokens'));
    expect(writesLines({ ...run, revision: phase({}) } as RunFigures)).toEqual([expect.stringContaining('none in either re-sync')]);
  });
});
