// The layers' one rule, kept by `npm test`: imports point down (or stay within a layer), and no
// module imports itself back through others (scripts/check-layers.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { arrows, cycles, isQuestion, LAYERS, layerOf, layersOf, modules, questionReachesOut, reachesOut, resourceQueries, upward } from '../../scripts/check-layers.ts';

describe('scripts/check-layers.ts', () => {
  const all = arrows();

  it('finds the arrows between the modules', () => {
    expect(all.length).toBeGreaterThan(500);
    expect(all).toContainEqual({ from: 'src/engine/job/reading.ts', to: 'src/store/write/upsert.ts' });
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
    expect(reachesOut("import { fetchData } from '../../engine/fetch/fetch.ts';")).toBe(true);
    expect(reachesOut("import { runReader } from '../../engine/fetch/reader.ts';")).toBe(true);
    // Of the engine, a resource imports its kit alone at run time: every other room does IO.
    expect(reachesOut("import { fanOut } from '../../engine/job/fan-out.ts';")).toBe(true);
    expect(reachesOut("import { knownOf } from '../../store/read/known.ts';")).toBe(true);
    expect(reachesOut('const keys = await ctx.known.streamKeys(slug);')).toBe(true);
    expect(reachesOut("const r = await ctx.upstream.get({ route: 'app.token' });")).toBe(true);
    // Types and data are fine: a resource names what it is handed.
    expect(reachesOut("import type { StoredAppChart } from '../../store/read/known.ts';")).toBe(false);
    expect(reachesOut("import { wholeSet } from '../../engine/kit/stated-set.ts';\nconst k = input.known.streamKeys;")).toBe(false);
    expect(reachesOut("import type { JobContext } from '../../engine/kit/types.ts';\nimport type { Cursor } from '../../engine/job/change.ts';")).toBe(false);
  });

  it('would see a question that does more than read the warehouse', () => {
    expect(isQuestion('src/resources/app/knows/stream-keys.ts')).toBe(true);
    expect(isQuestion('src/resources/app/history.ts')).toBe(false);
    // A question reads the warehouse through the handle its answer is given, and only reads it.
    expect(questionReachesOut("import { eq, sql } from 'drizzle-orm';\nimport { question } from '../../../engine/kit/knows.ts';\nexport const q = question('q', (w, slug: string) => w.query(sql`select 1 where ${slug} = ''`));")).toBe(false);
    expect(questionReachesOut("import { knownOf } from '../../../store/read/known.ts';")).toBe(true);
    expect(questionReachesOut("import { gatherKnown } from '../../../engine/job/knowledge.ts';")).toBe(true);
    expect(questionReachesOut('await w.db.insert(tokens).values(row);')).toBe(true);
    expect(questionReachesOut('await w.query(sql`delete from app.tokens where slug = ${slug}`);')).toBe(true);
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
    expect(upward([{ from: 'src/engine/job/lifecycle.ts', to: 'sim/index.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/cli/sim.ts', to: 'sim/index.ts' }])).toEqual([]);
    // upstream and store are siblings: neither may import the other; both may use the ports.
    expect(upward([{ from: 'src/store/books/request-log.ts', to: 'src/upstream/routes.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/upstream/client.ts', to: 'src/store/connection.ts' }])).toHaveLength(1);
    expect(upward([{ from: 'src/store/books/request-log.ts', to: 'src/ports/recorder.ts' }])).toEqual([]);
    expect(cycles([...all, { from: 'src/lib/json.ts', to: 'src/lib/config.ts' }, { from: 'src/lib/config.ts', to: 'src/lib/json.ts' }])).toEqual([['src/lib/config.ts', 'src/lib/json.ts']]);
  });

  it("reads the layers from docs/design.md's table, and the README's layout lists the same folders in the same order", () => {
    expect(LAYERS).toEqual(['lib', 'schema', 'ports', ['upstream', 'store'], 'export', 'engine', 'resources', 'runners', 'replay', 'cli']);
    expect(layersOf('## Layers\n\n| layer | folder |\n|---|---|\n| a | `src/a/` |\n| b, c | `src/b/`, `src/c/` |\n')).toEqual(['a', ['b', 'c']]);
    // Every folder under src/ is a layer of the table.
    const folders = readdirSync(new URL('../../src/', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.sort()).toEqual(LAYERS.flat().sort());
    // The README's layout, top down: the table's layers, highest first (siblings in either order).
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const layout = readme.slice(readme.indexOf('## Layout and development'));
    const listed = [...layout.slice(0, layout.indexOf('```\n\n')).matchAll(/^src\/([a-z]+)\/ /gm)].map((m) => m[1]!);
    const rank = (name: string) => LAYERS.findIndex((l) => (typeof l === 'string' ? l === name : l.includes(name)));
    expect([...listed].sort()).toEqual(LAYERS.flat().sort());
    expect(listed.map(rank)).toEqual([...listed.map(rank)].sort((a, b) => b - a));
  });
});
