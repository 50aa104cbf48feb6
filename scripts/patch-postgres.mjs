#!/usr/bin/env node
// Two fixes to postgres.js 3.4.9 (the latest release), applied on every `npm ci`/`npm install`
// (postinstall). Idempotent; it refuses to touch a file whose code differs from what it
// expects, and says so.
//
// 1. It can crash the whole process when Postgres restarts: a small write is deferred with
//    setImmediate, the connection closes first, and nextWrite then calls `socket.write` on a
//    null socket from the immediate, where no caller can catch it (porsager/postgres#1154,
//    #1208; fixes proposed in #1168 and #1209, not released). This applies the proposed guard:
//    with no socket left, reject the queries waiting on the connection with CONNECTION_CLOSED
//    (which tesync retries) instead of throwing.
// 2. `sql.begin` is told which connection its BEGIN went out on only when that connection
//    could pipeline another query, so with `max_pipeline: 0` (no pipelining) every transaction
//    fails with UNSAFE_TRANSACTION. tesync turns pipelining off past a transaction pooler
//    (src/store/connection.ts): PgBouncer hands the server session on at an answer while the
//    statement pipelined behind it (a Parse and Describe, its parameters' types asked first)
//    still waits for its own, which is then lost, and the query never returns. Patched: the
//    connection is named to `begin` whether or not it could take more.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const PATCHES = [
  {
    what: 'guarded nextWrite',
    original: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
    patched: `  function nextWrite(fn) {
    if (socket === null) { // tesync: guard from porsager/postgres#1209
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options, socket))
      return false
    }
    const x = socket.write(chunk, fn)`,
  },
  {
    what: 'named the connection of every BEGIN',
    original: `      return write(toBuffer(q))
        && !q.describeFirst
        && !q.cursorFn
        && sent.length < max_pipeline
        && (!q.options.onexecute || q.options.onexecute(connection))`,
    patched: `      // tesync: onexecute whatever the pipeline (max_pipeline: 0 past a transaction pooler)
      const more = write(toBuffer(q))
        && !q.describeFirst
        && !q.cursorFn
        && sent.length < max_pipeline
      return q.options.onexecute ? q.options.onexecute(connection) && more : more`,
  },
];

const files = ['src', 'cjs/src', 'cf/src'].map((d) => new URL(`../node_modules/postgres/${d}/connection.js`, import.meta.url));
for (const { what, original, patched } of PATCHES) {
  let count = 0;
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (text.includes(patched)) continue;
    if (!text.includes(original)) {
      console.warn(`patch-postgres: ${file.pathname} is not the expected postgres.js 3.4.9 code (${what}); left as is`);
      continue;
    }
    writeFileSync(file, text.replace(original, patched));
    count++;
  }
  if (count) console.log(`patch-postgres: ${what} in ${count} file(s)`);
}
