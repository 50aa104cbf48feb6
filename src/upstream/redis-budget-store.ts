// The budget's records in Redis, shared by every worker process and machine. An update reads
// the record together with Redis time (the one clock every process decides on), computes the
// next record here, and writes it back only if nobody wrote since (compare-and-set), else
// computes again on the fresher record. Changes are announced over pub/sub, so waiting
// processes wake (they poll as well, in case a message is lost).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { initialBucketState } from './budget-state.ts';
import { emptyRecord, type BucketRecord, type BucketUpdate, type BudgetStore, type StoreClock, type UpdateOptions } from './budget-store.ts';
import { luaFile } from './redis/scripts.ts';

const readScript = luaFile(new URL('./redis/budget-read.lua', import.meta.url));
const writeScript = luaFile(new URL('./redis/budget-write.lua', import.meta.url));

export interface RedisBudgetStoreOptions {
  /** Commands go here; a duplicate connection subscribes to change messages. Not closed by the store. */
  redis: Redis;
  /** Key prefix shared by every process that shares the budget. */
  prefix: string;
  /** A record nobody writes for this long is dropped. */
  ttlMs: number;
  /** The local clock (tests: a skewed one). */
  now?: () => number;
}

interface Read {
  version: number;
  record: BucketRecord;
  clock: StoreClock;
}

interface Pending {
  fn: BucketUpdate<unknown>;
  announce: boolean;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
}

export class RedisBudgetStore implements BudgetStore {
  /** Script calls made, and writes that lost to another writer (diagnostics, tests). */
  readonly stats = { reads: 0, writes: 0, conflicts: 0 };
  private readonly id = randomBytes(6).toString('hex');
  private readonly channel: string;
  private readonly subscriber: Redis;
  private readonly subscribed: Promise<unknown>;
  private readonly listeners: ((bucket: string) => void)[] = [];
  private readonly pending = new Map<string, Pending[]>();
  private readonly running = new Set<string>();
  private readonly now: () => number;

  constructor(private readonly options: RedisBudgetStoreOptions) {
    this.now = options.now ?? Date.now;
    this.channel = `${options.prefix}:budget:changed`;
    this.subscriber = options.redis.duplicate();
    this.subscriber.on('message', (_channel: string, message: string) => {
      const at = message.indexOf(':');
      if (message.slice(0, at) === this.id) return;
      for (const listener of this.listeners) listener(message.slice(at + 1));
    });
    // A lost subscription only slows waiters down to polling: never fatal.
    this.subscriber.on('error', () => {});
    this.subscribed = this.subscriber.subscribe(this.channel).catch(() => undefined);
  }

  update<R>(bucket: string, fn: BucketUpdate<R>, options: UpdateOptions = {}): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.pending.get(bucket) ?? [];
      queue.push({ fn, announce: options.announce === true, resolve: resolve as (r: unknown) => void, reject });
      this.pending.set(bucket, queue);
      if (!this.running.has(bucket)) void this.drain(bucket);
    });
  }

  onChange(listener: (bucket: string) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  /**
   * This process's updates of a bucket go in batches: the updates that arrived while the last
   * batch ran are applied one after another to one read, and written at once. Updates conflict
   * only with other processes', and a crowd of waiters woken together costs two round trips.
   */
  private async drain(bucket: string): Promise<void> {
    this.running.add(bucket);
    try {
      for (let batch = this.pending.get(bucket); batch && batch.length > 0; batch = this.pending.get(bucket)) {
        this.pending.delete(bucket);
        try {
          const results = await this.apply(bucket, batch);
          batch.forEach((u, i) => (results[i]!.ok ? u.resolve(results[i]!.value) : u.reject(results[i]!.value)));
        } catch (err) {
          for (const u of batch) u.reject(err);
        }
      }
    } finally {
      this.running.delete(bucket);
    }
  }

  private async apply(bucket: string, batch: Pending[]): Promise<{ ok: boolean; value: unknown }[]> {
    await this.subscribed;
    const key = `${this.options.prefix}:budget:${bucket}:record`;
    let localMs = this.now();
    this.stats.reads++;
    let read = decodeRead((await readScript(this.options.redis, [key], [])) as unknown[], localMs);
    for (;;) {
      let record = read.record;
      const results = batch.map((u) => {
        try {
          const next = u.fn(record, read.clock);
          record = next.record;
          return { ok: true, value: next.result };
        } catch (err) {
          return { ok: false, value: err };
        }
      });
      if (record === read.record) return results;
      localMs = this.now();
      const announce = batch.some((u) => u.announce) ? this.channel : '';
      const reply = (await writeScript(this.options.redis, [key], [read.version, JSON.stringify(record), this.options.ttlMs, announce, `${this.id}:${bucket}`])) as unknown[];
      this.stats.writes++;
      if (Number(reply[0]) === 1) return results;
      this.stats.conflicts++;
      read = decodeRead(reply.slice(1), localMs);
    }
  }
}

function decodeRead(reply: unknown[], localMs: number): Read {
  const [version, serialized, seconds, micros] = reply;
  return {
    version: Number(version),
    record: decodeRecord(String(serialized)),
    clock: { nowMs: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), localMs },
  };
}

/** A stored record; one that cannot be read counts as none (the next write replaces it). */
function decodeRecord(serialized: string): BucketRecord {
  if (serialized === '') return emptyRecord();
  try {
    const r = JSON.parse(serialized) as Partial<BucketRecord> | null;
    if (typeof r?.state === 'object' && r.state !== null && typeof r.leases === 'object' && r.leases !== null) {
      return { state: { ...initialBucketState(), ...r.state }, leases: r.leases };
    }
  } catch {
    // unreadable: none
  }
  return emptyRecord();
}
