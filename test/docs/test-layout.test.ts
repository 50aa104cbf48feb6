// docs/design.md: `test/` mirrors `src/` room for room. A test named for a module of a layer
// with rooms (`fan-out.test.ts`, `src/engine/job/fan-out.ts`) sits in that module's room, not
// at the layer's top or in another room; every test folder under a layer's name is a room
// `src/` has.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TESTS_OWN = new Set(['helpers', 'bench', 'docs', 'soak', 'sim', 'scripts', 'results']);

// A hidden folder is a running test's scratch space (adding-a-resource.test.ts makes
// test/.walkthrough-*), there only while it runs: not a room.
const dirs = (at: string): string[] => readdirSync(at).filter((n) => !n.startsWith('.') && statSync(path.join(at, n), { throwIfNoEntry: false })?.isDirectory() === true && n !== 'results');
const files = (at: string): string[] => readdirSync(at).filter((n) => statSync(path.join(at, n)).isFile());

/** Pure: where a test named `base` belongs among the rooms of its folder: the one room whose module has its name; null when none or several do. */
export function roomOf(base: string, rooms: readonly { room: string; modules: readonly string[] }[]): string | null {
  const named = rooms.filter((r) => r.modules.includes(`${base}.ts`));
  return named.length === 1 ? named[0]!.room : null;
}

describe('test/ mirrors src/', () => {
  it('roomOf: the one room with a module of the name', () => {
    const rooms = [{ room: 'job', modules: ['fan-out.ts', 'commit.ts'] }, { room: 'kit', modules: ['types.ts'] }, { room: 'run', modules: ['types.ts'] }];
    expect(roomOf('fan-out', rooms)).toBe('job');
    expect(roomOf('types', rooms)).toBeNull();
    expect(roomOf('walk-around', rooms)).toBeNull();
  });

  it("each test named for a module of a room sits in that room, and each test folder is one of src's", () => {
    const misplaced: string[] = [];
    const walk = (rel: string) => {
      const src = path.join(ROOT, 'src', rel);
      const test = path.join(ROOT, 'test', rel);
      for (const d of dirs(test)) {
        if (rel === '' && TESTS_OWN.has(d)) continue;
        if (!existsSync(path.join(src, d))) misplaced.push(`test/${path.join(rel, d)}/: src/ has no such folder`);
        else walk(path.join(rel, d));
      }
      if (rel === '') return;
      const rooms = dirs(src).map((room) => ({ room, modules: files(path.join(src, room)) }));
      for (const f of files(test).filter((n) => n.endsWith('.test.ts'))) {
        const base = f.slice(0, -'.test.ts'.length);
        if (existsSync(path.join(src, `${base}.ts`))) continue;
        const room = roomOf(base, rooms);
        if (room !== null) misplaced.push(`test/${path.join(rel, f)} belongs in test/${path.join(rel, room)}/`);
      }
    };
    walk('');
    expect(misplaced).toEqual([]);
  });
});
