import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fitConstants, fitCost, plan, planTable, predictWall, walkRates, type ScaleConstants, type ScaleWalk } from './scale-model.ts';
import { predictions, type ScaleLegResult } from './scale-leg.ts';
import { DEFAULT_SCENARIO } from './scenario.ts';

/** A walk whose costs are exactly `2 ms/request + 10 us/row` (worker), `1 ms + 5 us` (Postgres). */
function walk(over: Partial<ScaleWalk> & Pick<ScaleWalk, 'days' | 'rows' | 'processes'>): ScaleWalk {
  const requests = over.requests ?? 1000;
  const rows = over.rows;
  return {
    backend: 'redis',
    tokens: 100,
    status: 'succeeded',
    wallMs: 10_000,
    requests,
    busiestBucketRequests: requests / 2,
    workerCpuMs: 2 * requests + 0.01 * rows,
    postgresCpuMs: 1 * requests + 0.005 * rows,
    simCpuMs: 0.5 * requests,
    queueServerCpuMs: 0.25 * requests,
    responseBytes: 1000 * requests + 30 * rows,
    databaseBytes: 10_000 * requests + 200 * rows,
    archiveBytes: 0,
    peakSessions: 2 + 4 * over.processes,
    othersShare: 0,
    ...over,
  };
}

describe('the scale model', () => {
  it('splits a cost into its part per request and its part per row through two depths', () => {
    expect(fitCost({ requests: 1000, rows: 10_000, x: 2100 }, { requests: 1000, rows: 100_000, x: 3000 })).toEqual({ perRequest: 2, perRow: 0.01 });
    // Noise that makes the per-row part negative: the deeper walk's cost is all per request.
    expect(fitCost({ requests: 1000, rows: 10_000, x: 2100 }, { requests: 1000, rows: 100_000, x: 2000 })).toEqual({ perRequest: 2, perRow: 0 });
  });

  it('fits every constant of a backend from its one-worker walks and its widest walk', () => {
    const walks = [walk({ processes: 1, days: 30, rows: 100 * (50 + 30 * 10) }), walk({ processes: 1, days: 180, rows: 100 * (50 + 180 * 10) }), walk({ processes: 4, days: 180, rows: 100 * (50 + 180 * 10) })];
    const c = fitConstants(walks, 'redis');
    expect(c.requestsPerToken).toBe(10);
    expect(c.busiestShare).toBe(0.5);
    expect(c.rowsPerToken.fixed).toBeCloseTo(50, 6);
    expect(c.rowsPerToken.perDay).toBeCloseTo(10, 6);
    expect(c.workerCpuMs.perRequest).toBeCloseTo(2, 6);
    expect(c.workerCpuMs.perRow).toBeCloseTo(0.01, 9);
    expect(c.postgresCpuMs.perRow).toBeCloseTo(0.005, 9);
    expect(c.databaseBytes.perRow).toBeCloseTo(200, 6);
    expect(c.queueServerCpuMsPerRequest).toBe(0.25);
    expect(c.sessionsPerWorker).toBe(4);
    expect(() => fitConstants(walks, 'postgres')).toThrow(/two depths/);
  });

  it('predicts the largest of its bounds: requests in flight, one core per worker, the machine', () => {
    const c = fitConstants([walk({ processes: 1, days: 30, rows: 35_000 }), walk({ processes: 1, days: 180, rows: 185_000 })], 'redis');
    const w = { requests: 1000, rows: 185_000 };
    // Per request: worker 2 + 1.85 = 3.85 ms, Postgres 1 + 0.925 = 1.925, simulator 0.5, Redis 0.25: 6.525 ms.
    const one = predictWall(c, w, 1, { latencyMs: 100, concurrency: 4, cores: 2, othersCores: 0 });
    expect(one.bounds['worker CPU']).toBeCloseTo(3850, 6);
    expect(one.bounds['machine CPU']).toBeCloseTo(3262.5, 6);
    expect(one.bounds['requests in flight']).toBeCloseTo((500 * 105.775) / 4, 6);
    expect(one.bound).toBe('requests in flight');
    const four = predictWall(c, w, 4, { latencyMs: 50, concurrency: 4, cores: 2, othersCores: 0 });
    expect(four.bound).toBe('machine CPU');
    // Others holding a core halve what the machine gives the walk.
    expect(predictWall(c, w, 4, { latencyMs: 100, concurrency: 4, cores: 2, othersCores: 1 }).wallMs).toBeCloseTo(6525, 6);
  });

  it('carries the one-worker walk\'s excess as a fixed part into every speedup', () => {
    const rows = 185_000;
    const walks = [walk({ processes: 1, days: 30, rows: 35_000 }), walk({ processes: 1, days: 180, rows, wallMs: 15_000 }), walk({ processes: 2, days: 180, rows, wallMs: 9000 })];
    const constants = [fitConstants(walks, 'redis')];
    const [p1, p2] = predictions(walks, constants, { ...DEFAULT_SCENARIO, historyDays: 180, latencyMs: [50, 150] }, 2, 4);
    expect(p1!.predictedWallMs).toBeCloseTo(15_000, 6);
    expect(p1!.fixedMs).toBeCloseTo(15_000 - (500 * 105.775) / 4, 6);
    expect(p2!.predictedWallMs).toBeCloseTo(p1!.fixedMs + (500 * 105.775) / 8, 6);
    expect(p2!.measuredSpeedup).toBeCloseTo(15 / 9, 9);
    expect(p2!.predictedSpeedup).toBeCloseTo(15_000 / p2!.predictedWallMs, 9);
  });

  it('plans workers and warehouse cores for an upstream from the constants', () => {
    const c: ScaleConstants = {
      backend: 'postgres',
      requestsPerToken: 10,
      busiestShare: 0.5,
      rowsPerToken: { fixed: 0, perDay: 10 },
      workerCpuMs: { perRequest: 2, perRow: 0.01 },
      postgresCpuMs: { perRequest: 1, perRow: 0.005 },
      simCpuMs: { perRequest: 0, perRow: 0 },
      queueServerCpuMsPerRequest: null,
      responseBytes: { perRequest: 1024, perRow: 0 },
      databaseBytes: { perRequest: 0, perRow: 1024 },
      sessionsPerWorker: 20,
    };
    const p = plan(c, { tokens: 1000, days: 100, requestsPerSec: 100, latencyMs: 100 }, { workerConcurrency: 4, utilization: 0.5, warehouseCores: 2, maxConnections: 100, reservedConnections: 20 });
    // 10,000 requests and 1,000,000 rows: 100 rows a request, worker 3 ms, Postgres 1.5 ms a request.
    expect(p.walkFloorS).toBe(100);
    expect(p.workerCpuMsPerRequest).toBeCloseTo(3, 9);
    expect(p.workersForCpu).toBe(1); // 0.3 cores at half a core each: 0.6
    expect(p.workersForInFlight).toBe(2); // 50 req/s x 104.5 ms = 5.2 in flight, 4 a worker
    expect(p.workers).toBe(2);
    expect(p.warehouseCores).toBeCloseTo(0.3, 9);
    expect(p.warehouseLimitPerSec).toBeCloseTo(666.67, 1);
    expect(p.connectionLimitWorkers).toBe(4);
    expect(p.responseMbPerSec).toBeCloseTo(100 / 1024, 9);
    expect(p.databaseGbPerFirstWalk).toBeCloseTo(1_000_000 / 2 ** 20, 9);
  });

  it('reads a walk per request and per row', () => {
    const r = walkRates(walk({ processes: 1, days: 180, rows: 185_000 }));
    expect(r.requestsPerSec).toBe(100);
    expect(r.rowsPerRequest).toBe(185);
    expect(r.workerCpuMsPerRequest).toBeCloseTo(3.85, 9);
    expect(r.postgresCpuUsPerRow).toBeCloseTo((1925 * 1000) / 185_000, 9);
  });
});

describe('docs/scale-out.md', () => {
  const doc = readFileSync(new URL('../../docs/scale-out.md', import.meta.url), 'utf8');
  const file = /test\/bench\/results\/([0-9T-]+\.json)/.exec(doc)?.[1];
  const result = JSON.parse(readFileSync(new URL(`./results/${file}`, import.meta.url), 'utf8')) as { scale: ScaleLegResult };

  it('names the results file its figures come from', () => {
    expect(file).toBeDefined();
    expect(result.scale.walks.length).toBeGreaterThanOrEqual(8);
  });

  it("shows the worked example as plan() computes it from that file's walks", () => {
    const constants = (['redis', 'postgres'] as const).map((b) => fitConstants(result.scale.walks, b));
    for (const line of planTable(constants)) expect(doc).toContain(line);
  });

  it("shows each speedup that file measured and the model's prediction of it", () => {
    const n = (v: number, d: number) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
    for (const p of result.scale.predictions) {
      expect(doc).toContain(`| ${p.backend} | ${p.processes} | ${n(p.measuredWallMs / 1000, 1)} | **${n(p.measuredSpeedup, 2)}** | ${n(p.predictedWallMs / 1000, 1)} (${p.bound}) | **${n(p.predictedSpeedup, 2)}** |`);
    }
  });
});
