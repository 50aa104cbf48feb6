// The loader's hooks (register.mjs), in Node's loader thread. A `.ts` file is compiled by
// esbuild as tsx compiles it (the project's tsconfig, the running Node as target) and the
// output kept under node_modules/.cache, named by a hash of the file's path and content: a
// later process reads it instead of compiling. bin/tesync.js gets a tsx whose register() does
// nothing, since this loader already serves its TypeScript.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../../../', import.meta.url);
const cacheDir = fileURLToPath(new URL('node_modules/.cache/tesync-test-ts/', root));
const tsxStub = new URL('./tsx-stub.mjs', import.meta.url).href;
let bin = '';
let esbuild;
let options;

export function initialize(data) {
  bin = data.bin;
  mkdirSync(cacheDir, { recursive: true });
}

export async function resolve(specifier, context, next) {
  if (specifier === 'tsx/esm/api' && context.parentURL === bin) return { url: tsxStub, format: 'module', shortCircuit: true };
  return next(specifier, context);
}

/** What tsx passes esbuild for this project: the tsconfig's compiler options, the running Node as target. */
function compileOptions(file) {
  options ??= {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    tsconfigRaw: JSON.parse(readFileSync(new URL('tsconfig.json', root), 'utf8')),
  };
  return { ...options, sourcefile: file };
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const file = fileURLToPath(url);
  const source = readFileSync(file, 'utf8');
  const cached = `${cacheDir}${createHash('sha256').update(file).update('\0').update(source).digest('hex').slice(0, 32)}.mjs`;
  let code;
  try {
    code = readFileSync(cached, 'utf8');
  } catch {
    esbuild ??= await import('esbuild');
    code = esbuild.transformSync(source, compileOptions(file)).code;
    // Written aside and renamed: a process reading it at the same time sees all of it or none.
    const aside = `${cached}.${process.pid}`;
    writeFileSync(aside, code);
    renameSync(aside, cached);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
