// `npm ci` (what CI and the Dockerfile run) refuses a lockfile that lacks an optional
// platform package of the tree; `npm install` against a registry without those binaries
// leaves them out. `npm run lock:fix` puts them back: this test says when it is needed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('package-lock.json', () => {
  it('lists every optional platform package, so `npm ci` accepts it', () => {
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { optionalDependencies?: Record<string, string> }> };
    const missing: string[] = [];
    for (const [path, pkg] of Object.entries(lock.packages)) {
      for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
        if (!lock.packages[`node_modules/${name}`] && !lock.packages[`${path}/node_modules/${name}`]) missing.push(name);
      }
    }
    expect(missing, 'run `npm run lock:fix`').toEqual([]);
  });
});
