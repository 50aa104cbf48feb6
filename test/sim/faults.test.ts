import { describe, expect, it } from 'vitest';
import { NO_FAULTS, mergeFaults, planFaults } from '../../sim/faults.ts';

describe('fault plans', () => {
  it('are deterministic per seed and sequence', () => {
    const f = mergeFaults(NO_FAULTS, { errorRate: 0.5, truncateRate: 0.5 });
    const a = Array.from({ length: 50 }, (_, i) => planFaults(f, 42, i, '/x'));
    const b = Array.from({ length: 50 }, (_, i) => planFaults(f, 42, i, '/x'));
    expect(a).toEqual(b);
    const errors = a.filter((p) => p.error).length;
    expect(errors).toBeGreaterThan(10);
    expect(errors).toBeLessThan(40);
    expect(a.some((p) => p.truncate === 'chunked') && a.some((p) => p.truncate === 'content-length')).toBe(true);
  });

  it('apply every rate of 1 and none of 0, only on matching paths', () => {
    const all = mergeFaults(NO_FAULTS, { errorRate: 1, resetRate: 1, stallMs: 10, pathFilter: '/screener' });
    expect(planFaults(all, 1, 1, '/api/v1/screener')).toMatchObject({ error: true, reset: true, stallMs: 10 });
    expect(planFaults(all, 1, 1, '/api/v1/tokens')).toMatchObject({ error: false, reset: false, stallMs: 0 });
    expect(planFaults(NO_FAULTS, 1, 1, '/x')).toMatchObject({ error: false, reset: false, unavailable: false, truncate: null, endless: false });
  });

  it('merge keeps unspecified fields', () => {
    const f = mergeFaults(mergeFaults(NO_FAULTS, { errorRate: 0.2 }), { stallMs: 5, errorRate: undefined });
    expect(f).toMatchObject({ errorRate: 0.2, stallMs: 5 });
  });
});
