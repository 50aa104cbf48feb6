// A budget store shared by processes through a server that keeps each bucket's record with a
// version (a write counter): Redis (redis-budget-store.ts) or Postgres
// (postgres-budget-store.ts). An update reads the record together with the server's clock (the
// one clock every process decides on), computes the next record here, and writes it back only
// if nobody wrote since (compare-and-set on the version), else computes again on the fresher
// record. The server's store says how to read, write and announce; this file holds the loop,
// the batching of this process's updates, and the announcements' filtering (a holder does not
// hear its own).
import { randomBytes } from 'node:crypto';
import { afterLostWrites, initialBucketState } from './budget-state.ts';
import { systemPacingClock, type PacingClock } from '../../ports/pacing-clock.ts';
import { emptyRecord, type BucketRecord, type BucketUpdate, type BudgetStore, type UpdateOptions } from './budget-store.ts';

export interface VersionedRead {
  /** The stored version; 0 when nothing is stored. */
  version: number;
  /** The record as stored (JSON), '' when none. */
  serialized: string;
  /** The server's clock at the read, ms since 1970. */
  nowMs: number;
  /**
   * The server may have lost writes this holder saw (another node serves the record since its
   * last look: a failover): the record is taken as older than it is (recovered()).
   */
  lost?: boolean;
}

interface Pending {
  fn: BucketUpdate<unknown>;
  announce: boolean;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
}

export abstract class VersionedBudgetStore implements BudgetStore {
  /** Reads made, writes tried, and writes that lost to another writer (diagnostics, tests). */
  readonly stats = { reads: 0, writes: 0, conflicts: 0 };
  /** This holder, in its announcements (`<id>:<bucket>`). */
  protected readonly id = randomBytes(6).toString('hex');
  private readonly listeners: ((bucket: string) => void)[] = [];
  private readonly pending = new Map<string, Pending[]>();
  private readonly running = new Set<string>();
  /** Per bucket, the record as this holder last read or wrote it. */
  private readonly known = new Map<string, BucketRecord>();

  protected constructor(private readonly now: PacingClock['now'] = systemPacingClock.now) {}

  /** Resolves when the store is ready to read (its announcements subscribed, or given up on); never rejects. */
  protected abstract ready(): Promise<unknown>;
  /** The bucket's record, its version and the server's clock, in one round trip. */
  protected abstract read(bucket: string): Promise<VersionedRead>;
  /**
   * Writes `serialized` if the stored version is still `version`, announcing the change to the
   * other holders when asked (only a write that took place). Undefined when written; else what
   * is stored now (a read, as `read` gives it).
   */
  protected abstract write(bucket: string, version: number, serialized: string, announce: boolean): Promise<VersionedRead | undefined>;
  abstract close(): Promise<void>;

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

  /** What announces a change of `bucket` by this holder. */
  protected message(bucket: string): string {
    return `${this.id}:${bucket}`;
  }

  /** An announcement heard from the server: the listeners hear of other holders' changes. */
  protected heard(message: string): void {
    const at = message.indexOf(':');
    if (at < 0 || message.slice(0, at) === this.id) return;
    for (const listener of this.listeners) listener(message.slice(at + 1));
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
    await this.ready();
    let localMs = this.now();
    this.stats.reads++;
    let read = await this.read(bucket);
    for (;;) {
      const decoded = decodeRecord(read.serialized);
      const stored = read.lost ? recovered(decoded, this.known.get(bucket), read.nowMs) : decoded;
      const clock = { nowMs: read.nowMs, localMs };
      let record = stored;
      const results = batch.map((u) => {
        try {
          const next = u.fn(record, clock);
          record = next.record;
          return { ok: true, value: next.result };
        } catch (err) {
          return { ok: false, value: err };
        }
      });
      // A recovered record is written even when no update changed it: the next reader starts from it.
      if (record === decoded) {
        this.known.set(bucket, decoded);
        return results;
      }
      localMs = this.now();
      const fresh = await this.write(bucket, read.version, JSON.stringify(record), batch.some((u) => u.announce));
      this.stats.writes++;
      if (fresh === undefined) {
        this.known.set(bucket, record);
        return results;
      }
      this.stats.conflicts++;
      read = fresh;
    }
  }
}

/**
 * A record the server may have lost writes of, made at most as generous as what this holder
 * knew: the state as afterLostWrites() has it, and every lease either the store or this
 * holder's last look held that has not expired (a request in flight across the failover keeps
 * its slot until it is observed or its lease runs out).
 */
export function recovered(stored: BucketRecord, known: BucketRecord | undefined, nowMs: number): BucketRecord {
  const leases = Object.fromEntries(Object.entries({ ...known?.leases, ...stored.leases }).filter(([, expiresAt]) => expiresAt > nowMs));
  return { state: afterLostWrites(stored.state, known?.state, nowMs), leases };
}

/** A stored record; one that cannot be read counts as none (the next write replaces it). */
export function decodeRecord(serialized: string): BucketRecord {
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
