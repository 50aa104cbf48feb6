#!/usr/bin/env node
// postgres.js 3.4.9 (the latest release) can crash the whole process when Postgres restarts:
// a small write is deferred with setImmediate, the connection closes first, and nextWrite
// then calls `socket.write` on a null socket from the immediate, where no caller can catch
// it (porsager/postgres#1154, #1208; fixes proposed in #1168 and #1209, not released).
// This applies the proposed guard: with no socket left, reject the queries waiting on the
// connection with CONNECTION_CLOSED (which tesync retries) instead of throwing.
// Runs on every `npm ci`/`npm install` (postinstall). Idempotent; it refuses to touch a file
// whose code differs from what it expects, and says so.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const ORIGINAL = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`;
const PATCHED = `  function nextWrite(fn) {
    if (socket === null) { // tesync: guard from porsager/postgres#1209
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`;

const files = ['src', 'cjs/src', 'cf/src'].map((d) => new URL(`../node_modules/postgres/${d}/connection.js`, import.meta.url));
let patched = 0;
for (const file of files) {
  if (!existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  if (text.includes(PATCHED)) continue;
  if (!text.includes(ORIGINAL)) {
    console.warn(`patch-postgres: ${file.pathname} is not the expected postgres.js 3.4.9 code; left as is`);
    continue;
  }
  writeFileSync(file, text.replace(ORIGINAL, PATCHED));
  patched++;
}
if (patched) console.log(`patch-postgres: guarded nextWrite in ${patched} file(s)`);
