// The `tesync` the tests start: the sources compiled once to plain JavaScript, file for file,
// under node_modules/.cache/tesync-test-js/<hash of the sources>/, with a bin that imports them
// as bin/tesync.js imports the TypeScript. A process loads them without a loader: no module
// crosses to Node's loader thread, which cost each child about 0.8 s of CPU more
// (docs/performance.md, "The test loop", issue 57 item 7). What a user runs through tsx
// (`npx tesync`, bin/tesync.js through tsx) is still run by npx-signals.test.ts and the image
// test (test/docs/image.test.ts).
//
// Built on first use, by the global setup before any file runs, or by whoever needs it first
// (the bench): into a folder of its own, renamed into place, so that two builders never mix.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = path.join(ROOT, 'node_modules/.cache/tesync-test-js');
/** Compiled: the folders a `tesync` process imports from, and the scripts tests start. */
const COMPILED = ['src', 'sim', 'test/export/kill-export.ts'];
/** Read at run time through `import.meta.url` (migrations, docs, the version): linked, not copied. */
const LINKED = ['drizzle', 'docs', 'package.json', 'node_modules'];

function filesUnder(rel: string): string[] {
  if (rel.endsWith('.ts')) return [rel];
  return readdirSync(path.join(ROOT, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(rel, e.name)) : [path.join(rel, e.name)]))
    .sort();
}

/** Pure: a module's relative imports of `.ts` files, pointed at the `.js` files compiled from them. */
export function pointAtJs(code: string): string {
  return code.replace(/((?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'])(\.{1,2}\/[^"'\n]+?)\.ts(["'])/g, '$1$2.js$3');
}

const BIN_JS = `#!/usr/bin/env node
// bin/tesync.js, compiled: the same start, without tsx (test/helpers/compiled-bin.ts).
if (process.env.npm_lifecycle_event !== undefined) (await import('../src/cli/parent-watch.js')).watchLauncher();
(await import('../src/cli/main.js')).runProcess();
`;

function build(files: string[], into: string): void {
  const tsconfigRaw = readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8');
  for (const rel of files) {
    const to = path.join(into, rel.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(to), { recursive: true });
    const source = readFileSync(path.join(ROOT, rel));
    if (!rel.endsWith('.ts')) {
      writeFileSync(to, source);
      continue;
    }
    const { code } = transformSync(source.toString('utf8'), { loader: 'ts', format: 'esm', target: `node${process.versions.node}`, sourcefile: path.join(ROOT, rel), tsconfigRaw });
    writeFileSync(to, pointAtJs(code));
  }
  mkdirSync(path.join(into, 'bin'), { recursive: true });
  writeFileSync(path.join(into, 'bin/tesync.js'), BIN_JS);
  for (const l of LINKED) symlinkSync(path.join(ROOT, l), path.join(into, l));
}

/** The compiled bin, built first if the sources changed since the last build. */
export function compiledBin(): string {
  return path.join(compiledTree(), 'bin/tesync.js');
}

/** A script of COMPILED (`test/...ts`), compiled: run it with `node`, no loader. */
export function compiledScript(rel: string): string {
  if (!COMPILED.includes(rel)) throw new Error(`${rel} is not among the compiled scripts (compiled-bin.ts COMPILED)`);
  return path.join(compiledTree(), rel.replace(/\.ts$/, '.js'));
}

let built: string | undefined;

/** The folder of the compiled sources, built first if they changed since the last build (once per process). */
function compiledTree(): string {
  built ??= buildOnce();
  return built;
}

function buildOnce(): string {
  const files = COMPILED.flatMap(filesUnder);
  const hash = createHash('sha256');
  for (const f of [...files, 'tsconfig.json']) hash.update(f).update('\0').update(readFileSync(path.join(ROOT, f))).update('\0');
  hash.update(BIN_JS);
  const id = hash.digest('hex').slice(0, 16);
  const dir = path.join(CACHE, id);
  const bin = path.join(dir, 'bin/tesync.js');
  if (existsSync(bin)) return dir;
  const aside = `${dir}.${process.pid}`;
  rmSync(aside, { recursive: true, force: true });
  build(files, aside);
  try {
    renameSync(aside, dir);
  } catch (err) {
    // Another process built the same sources first: its copy is as good.
    rmSync(aside, { recursive: true, force: true });
    if (!existsSync(bin)) throw err;
  }
  // Builds a day old go (a suite still running on one is not that old).
  for (const old of readdirSync(CACHE)) {
    const at = path.join(CACHE, old);
    if (old !== id && /^[0-9a-f]{16}$/.exec(old) !== null && Date.now() - statSync(at).mtimeMs > 86_400_000) rmSync(at, { recursive: true, force: true });
  }
  return dir;
}
