// The layers' one rule, kept by `npm test`: imports point down (or stay within a layer), and no
// module imports itself back through others (scripts/check-layers.ts).
import { describe, expect, it } from 'vitest';
import { arrows, cycles, layerOf, upward } from '../../scripts/check-layers.ts';

describe('scripts/check-layers.ts', () => {
  const all = arrows();

  it('finds the arrows between the modules', () => {
    expect(all.length).toBeGreaterThan(500);
    expect(all).toContainEqual({ from: 'jobs/lifecycle.ts', to: 'src/warehouse/upsert.ts' });
  });

  it('places every module in a layer', () => {
    expect([...new Set(all.flatMap((a) => [a.from, a.to]))].filter((f) => layerOf(f) === null)).toEqual([]);
  });

  it('no arrow points up a layer', () => {
    expect(upward(all)).toEqual([]);
  });

  it('no import cycle', () => {
    expect(cycles(all)).toEqual([]);
  });

  it('would see an upward arrow and a cycle', () => {
    const up = { from: 'src/warehouse/upsert.ts', to: 'src/runner/stats.ts' };
    expect(upward([...all, up])).toEqual([up]);
    expect(upward([{ from: 'jobs/lifecycle.ts', to: 'sim/index.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/commands/sim.ts', to: 'sim/index.ts' }])).toEqual([]);
    expect(cycles([...all, { from: 'src/json.ts', to: 'src/config.ts' }, { from: 'src/config.ts', to: 'src/json.ts' }])).toEqual([['src/config.ts', 'src/json.ts']]);
  });
});
