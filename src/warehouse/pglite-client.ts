// PGlite on a thread of its own (pglite-thread.mjs), behind the slice of PGlite's interface
// that drizzle uses: query, exec, transaction, close. An embedded sync then spends two cores
// (Postgres in WebAssembly on one, fetching and normalizing on the other) instead of one.
import { Worker } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';

type QueryOptions = { rowMode?: 'array' | 'object'; parsers?: Record<number, unknown> };
type Call = Record<string, unknown> & { op: string };
interface Reply {
  id: number;
  result?: unknown;
  error?: { name: string; message: string; fields: Record<string, unknown> };
}

const THREAD = new URL('./pglite-thread.mjs', import.meta.url);

/**
 * The types drizzle asks, with every query, to get as their text (it maps them itself):
 * timestamp, timestamptz, interval, date, and the arrays of those and of numeric. The thread
 * installs them once into PGlite's own parsers, so every result gives them as text: passed
 * with each query instead, PGlite merged them into a copy of all of its parsers (over 300
 * types), about 0.1 ms a query, seconds of an embedded sync's tens of thousands of statements.
 */
export const RAW_TYPES: readonly number[] = [1082, 1114, 1115, 1182, 1184, 1185, 1186, 1187, 1231];

/** What a transaction callback gets (PGlite's Transaction, as drizzle uses it). */
interface ThreadTransaction {
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<unknown>;
  exec(sql: string): Promise<unknown>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

export class PgliteThreadClient {
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private nextTx = 1;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the PGlite thread exited (code ${code})`)));
    // Idle, the thread does not keep the process alive (a command that forgot to close still
    // exits); with a statement in flight it does.
    worker.unref();
  }

  /** Starts the thread and opens the database in `folder`, with PGlite's `startParams`. */
  static async open(folder: string, startParams: readonly string[]): Promise<PgliteThreadClient> {
    // No inherited Node options: the thread is plain JavaScript and needs no loader, and some
    // options (--input-type, say) are refused in a worker.
    const worker = new Worker(THREAD, { workerData: { folder, startParams, rawTypes: RAW_TYPES }, execArgv: [] });
    let onMessage: (r: Reply) => void = () => {};
    let onError: (e: Error) => void = () => {};
    let onExit: (code: number) => void = () => {};
    const ready = await new Promise<Reply>((resolve, reject) => {
      onMessage = resolve;
      onError = reject;
      onExit = (code) => reject(new Error(`the PGlite thread exited (code ${code})`));
      worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    // Only ours: removeAllListeners() would also take the worker's own (its port stops).
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    if (ready.error) {
      await worker.terminate();
      throw toError(ready.error);
    }
    return new PgliteThreadClient(worker);
  }

  /** For drizzle, which types its client as PGlite. */
  asPglite(): PGlite {
    return this as unknown as PGlite;
  }

  async query(sql: string, params: unknown[] = [], options?: QueryOptions): Promise<unknown> {
    return this.call({ op: 'query', sql, params, ...optionsOf(options) });
  }

  exec(sql: string): Promise<unknown> {
    return this.call({ op: 'exec', sql });
  }

  /** Commits when the callback returns, rolls back when it throws or calls rollback(). */
  async transaction<T>(callback: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const txId = this.nextTx++;
    // Not awaited: the thread holds this transaction's statements until its BEGIN has run, so
    // the database does not wait for this thread to take the answer and send the first one.
    const began = this.call({ op: 'begin', txId });
    began.catch(() => {});
    let closed = false;
    const tx: ThreadTransaction = {
      query: async (sql, params = [], options) => this.call({ op: 'txQuery', txId, sql, params, ...optionsOf(options) }),
      exec: (sql) => this.call({ op: 'txExec', txId, sql }),
      rollback: async () => {
        closed = true;
        await this.call({ op: 'end', txId, commit: false });
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
      await began;
    } catch (err) {
      if (!closed) {
        closed = true;
        await this.call({ op: 'end', txId, commit: false }).catch(() => {});
      }
      throw err;
    }
    if (!closed) {
      closed = true;
      await this.call({ op: 'end', txId, commit: true });
    }
    return result;
  }

  async close(): Promise<void> {
    if (!this.failure) await this.call({ op: 'close' }).catch(() => {});
    this.failure ??= new Error('the embedded warehouse is closed');
    await this.worker.terminate();
  }

  private call(message: Call): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  private settle(reply: Reply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.error) p.reject(toError(reply.error));
    else p.resolve(reply.result);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }
}

/**
 * drizzle's parsers each return the text as is, for the types the thread gives as text in
 * every result (RAW_TYPES). Another set would be parsed otherwise than it asks: refused.
 */
function optionsOf(options: QueryOptions | undefined): Record<string, unknown> {
  if (!options) return {};
  if (options.parsers) {
    const asked = Object.keys(options.parsers);
    if (asked.length !== RAW_TYPES.length || !asked.every((oid) => RAW_TYPES.includes(Number(oid)))) {
      throw new Error(`the PGlite thread gives types ${RAW_TYPES.join(', ')} as text, and only those; a query asked for ${asked.join(', ')}`);
    }
  }
  return { rowMode: options.rowMode };
}

function toError(e: NonNullable<Reply['error']>): Error {
  const err = new Error(e.message);
  err.name = e.name;
  Object.assign(err, e.fields);
  return err;
}
