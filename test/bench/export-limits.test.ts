// The export leg's limits (issue 56), judged on its figures.
import { describe, expect, it } from 'vitest';
import { exportFailures } from './export-leg.ts';

const newDay = { ms: 400, rows: 1350, files: 3, rewritten: 0 };

describe('exportFailures', () => {
  it('passes within every limit, the ratio at 1.0 included', () => {
    expect(exportFailures({ overFloors: 1.0, unchangedMs: 300, newDay })).toEqual([]);
  });

  it('names each limit gone beyond', () => {
    const f = exportFailures({ overFloors: 1.4, unchangedMs: 458, newDay: { ...newDay, ms: 1309, rewritten: 2 } });
    expect(f).toHaveLength(4);
    expect(f[0]).toMatch(/first export \/ \(COPY floor \+ Parquet floor\) 1\.40 > 1/);
    expect(f.join('; ')).toMatch(/one new day 1309 ms > 1000 ms.*rewrote 2 other files.*nothing new 458 ms > 300 ms/);
  });

  it('fails a ratio it cannot compute', () => {
    expect(exportFailures({ overFloors: Number.NaN, unchangedMs: 1, newDay })).toHaveLength(1);
  });
});
