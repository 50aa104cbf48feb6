// The postinstall guard against postgres.js' crash on a write after the connection closed
// (scripts/patch-postgres.mjs) must be in every build of the driver that can be loaded.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

describe('postgres.js patch', () => {
  it('guards nextWrite in the ESM and CJS builds that tesync loads', () => {
    const require = createRequire(import.meta.url);
    const cjs = require.resolve('postgres');
    const esm = cjs.replace(/cjs[\\/]src[\\/]index\.js$/, 'src/index.js');
    for (const entry of [cjs, esm]) {
      const code = readFileSync(entry.replace(/index\.js$/, 'connection.js'), 'utf8');
      expect(code, entry).toContain("if (socket === null) { // tesync: guard from porsager/postgres#1209");
    }
  });
});
