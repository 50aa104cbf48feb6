// The layers of the design (docs/design.md, "Layers"), one folder each under src/, and the one
// rule between them: imports only point down (or stay within a layer), and no module imports
// itself back through others. `npm test` runs it (test/scripts/check-layers.test.ts); run it
// alone with `npx tsx scripts/check-layers.ts`, which prints every arrow that breaks the rule.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Pure: the layers of docs/design.md's table, lowest first; a row naming several holds
 * siblings (upstream and store stand side by side, neither importing the other).
 */
export function layersOf(design: string): (string | string[])[] {
  const section = design.slice(design.indexOf('## Layers'));
  const rows = [...section.matchAll(/^\| ([a-z, ]+) \| `src\//gm)].map((m) => m[1]!.split(',').map((s) => s.trim()));
  if (rows.length === 0) throw new Error('docs/design.md: no layer table under "## Layers"');
  return rows.map((r) => (r.length === 1 ? r[0]! : r));
}

/** The layers, as docs/design.md lists them. */
export const LAYERS: readonly (string | readonly string[])[] = layersOf(readFileSync(path.join(ROOT, 'docs/design.md'), 'utf8'));
const NAMES = LAYERS.flat();
/** The simulator is a package of its own beside the layers: it may use lib and schema, and only the cli uses it. */
const SIM = { name: 'sim', above: ['lib', 'schema'], usedBy: ['cli'] };
const ROOTS = ['src', 'sim'];

export interface Arrow {
  from: string;
  to: string;
}

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...files(rel));
    else if (rel.endsWith('.ts')) out.push(rel);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every TypeScript module of the layers and the simulator. */
export function modules(): string[] {
  return ROOTS.flatMap(files);
}

/** Every arrow between the repository's modules, by relative import (types included: they are arrows too). */
export function arrows(): Arrow[] {
  const out: Arrow[] = [];
  for (const root of ROOTS) {
    for (const file of files(root)) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2]!;
        if (!spec.startsWith('.')) continue;
        out.push({ from: file, to: path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)) });
      }
    }
  }
  return out;
}

export function layerOf(file: string): string | null {
  if (file.startsWith('sim/')) return SIM.name;
  const [root, layer, ...rest] = file.split('/');
  return root === 'src' && rest.length > 0 && NAMES.includes(layer!) ? layer! : null;
}

/** The arrows that point up a layer, into the simulator from outside the cli, or out of the simulator beyond what it may use. */
export function upward(all: readonly Arrow[]): Arrow[] {
  const rank = new Map(LAYERS.flatMap((l, i) => (typeof l === 'string' ? [l] : l).map((name) => [name, i] as const)));
  return all.filter(({ from, to }) => {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === null || b === null || a === b) return false;
    if (a === 'sim') return !SIM.above.includes(b);
    if (b === 'sim') return !SIM.usedBy.includes(a);
    // Siblings neither import each other: an arrow across a row counts as upward.
    return rank.get(b)! >= rank.get(a)!;
  });
}

/**
 * Resource files that reach the warehouse or the upstream: a runtime import of drizzle-orm, of
 * the store, or of any room of the engine but its kit (engine/kit/: what resources share; the
 * other rooms fetch, run the lifecycle and ask the warehouse); a reach for the warehouse,
 * `known` or the upstream through a context. A resource declares what it asks and what it needs
 * to know; the engine does the IO (engine/fetch/reader.ts, engine/job/knowledge.ts) and hands
 * it data. The questions resources ask of the warehouse (isQuestion) are held to their own rule:
 * they only read it (questionReachesOut).
 */
export function resourceQueries(): string[] {
  return files('src/resources').filter((file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    return isQuestion(file) ? questionReachesOut(text) : reachesOut(text);
  });
}

/**
 * Pure: whether a resource file is a question its resources ask of the warehouse
 * (src/resources/<source>/knows/, engine/kit/knows.ts): its answer queries the warehouse, and the
 * engine runs it before the read, never the read itself.
 */
export function isQuestion(file: string): boolean {
  return /^src\/resources\/[^/]+\/knows\//.test(file);
}

/**
 * Pure: whether a question's text does more than read the warehouse through the handle its
 * answer is given: a runtime import of the store, the upstream or an engine room beyond the kit;
 * a request upstream; a statement that writes.
 */
export function questionReachesOut(text: string): boolean {
  return (
    /^import (?!type )[^;]*from '((\.\.\/)+(store|upstream)\/[^']*|(\.\.\/)+engine\/(?!kit\/)[^']*)'/m.test(text) ||
    /\.upstream\b|\.(insert|update|delete|execute|transaction)\(|\b(insert\s+into|update\s+[\w."]+\s+set|delete\s+from|truncate)\b/i.test(text)
  );
}

/** Pure: whether a resource file's text reaches the warehouse or the upstream (resourceQueries). */
export function reachesOut(text: string): boolean {
  return (
    /^import (?!type )[^;]*from '(drizzle-orm|(\.\.\/)+store\/[^']*|(\.\.\/)+engine\/(?!kit\/)[^']*)'/m.test(text) ||
    /\.warehouse\b|\bsql`|\bctx\.(known|upstream)\b|\.upstream\.get\(/.test(text)
  );
}

/** The import cycles between files (strongly connected components of more than one file). */
export function cycles(all: readonly Arrow[]): string[][] {
  const next = new Map<string, string[]>();
  for (const a of all) next.set(a.from, [...(next.get(a.from) ?? []), a.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let i = 0;
  const visit = (v: string) => {
    index.set(v, i);
    low.set(v, i++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const all = arrows();
  const up = upward(all);
  const loops = cycles(all);
  for (const a of up) console.log(`upward: ${a.from} (${layerOf(a.from)}) -> ${a.to} (${layerOf(a.to)})`);
  for (const c of loops) console.log(`cycle: ${c.join(' <-> ')}`);
  const unplaced = [...new Set([...modules(), ...all.flatMap((a) => [a.from, a.to])])].filter((f) => layerOf(f) === null);
  for (const f of unplaced) console.log(`in no layer: ${f}`);
  const queries = resourceQueries();
  for (const f of queries) console.log(`${isQuestion(f) ? 'does more than read the warehouse' : 'reaches the warehouse or the upstream'}: ${f}`);
  console.log(`${all.length} arrows, ${up.length} upward, ${loops.length} cycles, ${unplaced.length} files in no layer, ${queries.length} resources that query`);
  process.exit(up.length || loops.length || unplaced.length || queries.length ? 1 : 0);
}
