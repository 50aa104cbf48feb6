// The layers' one rule, kept by `npm test`: imports point down (or stay within a layer), and no
// module imports itself back through others (scripts/check-layers.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { arrows, cycles, layerOf, modules, reachesOut, resourceQueries, upward } from '../../scripts/check-layers.ts';

describe('scripts/check-layers.ts', () => {
  const all = arrows();

  it('finds the arrows between the modules', () => {
    expect(all.length).toBeGreaterThan(500);
    expect(all).toContainEqual({ from: 'src/engine/reading.ts', to: 'src/store/write/upsert.ts' });
  });

  it('places every module in a layer', () => {
    expect([...new Set([...modules(), ...all.flatMap((a) => [a.from, a.to])])].filter((f) => layerOf(f) === null)).toEqual([]);
    expect(layerOf('src/helpers.ts')).toBeNull();
    expect(layerOf('src/store/write/upsert.ts')).toBe('store');
  });

  it('no arrow points up a layer', () => {
    expect(upward(all)).toEqual([]);
  });

  it('no import cycle', () => {
    expect(cycles(all)).toEqual([]);
  });

  it('no resource queries the warehouse: no SQL, no drizzle-orm, no store at run time', () => {
    expect(resourceQueries()).toEqual([]);
  });

  it('would see a resource that fetches, asks the warehouse or reaches a context\'s known or upstream', () => {
    expect(reachesOut("import { fetchData } from '../../engine/fetch.ts';")).toBe(true);
    expect(reachesOut("import { runReader } from '../../engine/reader.ts';")).toBe(true);
    expect(reachesOut("import { knownOf } from '../../store/read/known.ts';")).toBe(true);
    expect(reachesOut('const keys = await ctx.known.streamKeys(slug);')).toBe(true);
    expect(reachesOut("const r = await ctx.upstream.get({ route: 'app.token' });")).toBe(true);
    // Types and data are fine: a resource names what it is handed.
    expect(reachesOut("import type { StoredAppChart } from '../../store/read/known.ts';")).toBe(false);
    expect(reachesOut("import { wholeSet } from '../../engine/stated-set.ts';\nconst k = input.known.streamKeys;")).toBe(false);
  });

  it('no module of the layers is over 400 lines (the simulator aside)', () => {
    const long = modules()
      .filter((f) => f.startsWith('src/'))
      .map((f) => ({ f, lines: readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8').split('\n').length }))
      .filter((m) => m.lines > 400);
    expect(long).toEqual([]);
  });

  it('would see an upward arrow and a cycle', () => {
    const up = { from: 'src/store/write/upsert.ts', to: 'src/runners/in-process.ts' };
    expect(upward([...all, up])).toEqual([up]);
    expect(upward([{ from: 'src/engine/lifecycle.ts', to: 'sim/index.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/cli/sim.ts', to: 'sim/index.ts' }])).toEqual([]);
    // upstream and store are siblings: neither may import the other; both may use the ports.
    expect(upward([{ from: 'src/store/books/request-log.ts', to: 'src/upstream/routes.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/upstream/client.ts', to: 'src/store/connection.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/store/books/request-log.ts', to: 'src/ports/recorder.ts' }])).toEqual([]);
    expect(cycles([...all, { from: 'src/lib/json.ts', to: 'src/lib/config.ts' }, { from: 'src/lib/config.ts', to: 'src/lib/json.ts' }])).toEqual([['src/lib/config.ts', 'src/lib/json.ts']]);
  });
});
