// The embedded warehouse's own thread: PGlite runs here so that Postgres (WebAssembly, and
// most of an embedded sync's CPU) and tesync's parsing and normalizing use two cores, not
// one. Plain JavaScript: the TypeScript loader of the main thread is not inherited here.
//
// Messages in: { id, op, ... }; out: { id, result } or { id, error }. Operations mirror the
// parts of PGlite that drizzle uses: query, exec, and an interactive transaction (begin,
// then queries in it, then end with commit or rollback) that holds PGlite's own lock.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

function options(msg) {
  return msg.rowMode ? { rowMode: msg.rowMode } : undefined;
}

function errorOf(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  // Postgres errors carry code, detail, constraint...: keep every own string or number field.
  const fields = {};
  for (const [k, v] of Object.entries(e)) if (typeof v === 'string' || typeof v === 'number') fields[k] = v;
  return { name: e.name, message: e.message, fields };
}

const transactions = new Map();

/**
 * Opens a PGlite transaction (it holds PGlite's lock) and keeps it open until `end` comes.
 * Its statements may arrive before BEGIN has run (the main thread does not wait for it):
 * they wait for `opened`, in the order they came.
 */
function begin(pg, txId) {
  let finish, open;
  const ended = new Promise((resolve) => (finish = resolve));
  const began = new Promise((resolve) => (open = resolve));
  const done = pg
    .transaction(async (tx) => {
      open(tx);
      const { commit } = await ended;
      if (!commit) await tx.rollback();
    })
    .finally(() => transactions.delete(txId));
  // BEGIN refused: the statements waiting for it fail with its error.
  const opened = Promise.race([began, done.then(() => Promise.reject(new Error(`transaction ${txId} ended`)))]);
  opened.catch(() => {});
  transactions.set(txId, { opened, finish, done });
  return opened;
}

async function end(txId, commit) {
  const entry = transactions.get(txId);
  if (!entry) throw new Error(`no open transaction ${txId}`);
  const done = entry.done;
  entry.finish({ commit });
  await done;
}

async function inTx(txId) {
  const entry = transactions.get(txId);
  if (!entry) throw new Error(`no open transaction ${txId}`);
  return entry.opened;
}

async function main() {
  let pg;
  try {
    pg = await PGlite.create(workerData.folder, { startParams: workerData.startParams });
    // The types drizzle maps itself come as their text in every result (RAW_TYPES in
    // pglite-client.ts): installed once, not merged into a copy of every parser per query.
    for (const oid of workerData.rawTypes) pg.parsers[oid] = (text) => text;
  } catch (err) {
    parentPort.postMessage({ id: 0, error: errorOf(err) });
    return;
  }
  parentPort.postMessage({ id: 0, result: 'ready' });

  parentPort.on('message', async (msg) => {
    try {
      let result;
      switch (msg.op) {
        case 'query':
          result = await pg.query(msg.sql, msg.params, options(msg));
          break;
        case 'exec':
          result = await pg.exec(msg.sql);
          break;
        case 'begin':
          await begin(pg, msg.txId);
          break;
        case 'txQuery':
          result = await (await inTx(msg.txId)).query(msg.sql, msg.params, options(msg));
          break;
        case 'txExec':
          result = await (await inTx(msg.txId)).exec(msg.sql);
          break;
        case 'end':
          await end(msg.txId, msg.commit);
          break;
        case 'close':
          await pg.close();
          break;
        default:
          throw new Error(`unknown operation ${msg.op}`);
      }
      parentPort.postMessage({ id: msg.id, result });
    } catch (err) {
      parentPort.postMessage({ id: msg.id, error: errorOf(err) });
    }
  });
}

await main();
