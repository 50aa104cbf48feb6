// The postinstall fixes of postgres.js (scripts/patch-postgres.mjs) must be in every build of the
// driver that can be loaded: the guard against its crash on a write after the connection closed,
// and `sql.begin` told its connection with pipelining off (max_pipeline: 0, past a transaction
// pooler: test/store/sessions.test.ts runs it).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

describe('postgres.js patch', () => {
  it('guards nextWrite and names the connection of every BEGIN in the ESM and CJS builds that tesync loads', () => {
    const require = createRequire(import.meta.url);
    const cjs = require.resolve('postgres');
    const esm = cjs.replace(/cjs[\\/]src[\\/]index\.js$/, 'src/index.js');
    for (const entry of [cjs, esm]) {
      const code = readFileSync(entry.replace(/index\.js$/, 'connection.js'), 'utf8');
      expect(code, entry).toContain("if (socket === null) { // tesync: guard from porsager/postgres#1209");
      expect(code, entry).toContain('return q.options.onexecute ? q.options.onexecute(connection) && more : more');
    }
  });
});
