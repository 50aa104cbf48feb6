// Where a bucket's budget is kept between decisions. A store holds records and applies an
// update atomically on its own clock; what an update does (the policy) is budget.ts's and
// budget-state.ts's alone. The memory store serves one process (`tesync sync`); the Redis
// store (redis-budget-store.ts) every worker process and machine sharing a Redis, the
// Postgres store (postgres-budget-store.ts) every one sharing a warehouse.
import { initialBucketState, type BucketState } from './budget-state.ts';
import { systemPacingClock, type PacingClock } from '../../ports/pacing-clock.ts';

export interface BucketRecord {
  /** `inFlight` is the number of live leases. */
  state: BucketState;
  /** Granted requests not observed yet: lease id → store time at which the slot frees itself. */
  leases: Readonly<Record<string, number>>;
}

export function emptyRecord(): BucketRecord {
  return { state: initialBucketState(), leases: {} };
}

/** A shared store drops a record nobody wrote for this long (a budget whose processes all left). */
export const RECORD_TTL_MS = 24 * 3600_000;

/**
 * A reading of time at an update, not a clock: the store's time (the server's clock for a shared
 * store, Redis' or Postgres'; the pacing clock's in memory), and the pacing clock's reading then.
 */
export interface StoreTime {
  /** The store's time: every holder of the store decides on it. */
  nowMs: number;
  /** The pacing clock when `nowMs` was read, or a little before: local instants become store time as durations from it. */
  localMs: number;
}

/**
 * Computes a bucket's next record (never by changing the one it is given, which it returns
 * as is when nothing changes: then nothing is written). It may run more than once per
 * update, each time on a fresher record: only the last run's result counts.
 */
export type BucketUpdate<R> = (record: BucketRecord, clock: StoreTime) => { record: BucketRecord; result: R };

export interface UpdateOptions {
  /** Tell the other holders of the store that the bucket changed (a slot freed, new limits). */
  announce?: boolean;
}

export interface BudgetStore {
  /** Applies `fn` atomically. A synchronous store returns the result itself. */
  update<R>(bucket: string, fn: BucketUpdate<R>, options?: UpdateOptions): R | Promise<R>;
  /** `listener` hears of changes that other holders of the store announce. */
  onChange(listener: (bucket: string) => void): void;
  close(): Promise<void>;
}

/** One process's buckets, in a map; updates run synchronously, so each is atomic; its time is the pacing clock's. */
export class MemoryBudgetStore implements BudgetStore {
  private readonly records = new Map<string, BucketRecord>();

  constructor(private readonly now: PacingClock['now'] = systemPacingClock.now) {}

  update<R>(bucket: string, fn: BucketUpdate<R>): R {
    const nowMs = this.now();
    const current = this.records.get(bucket) ?? emptyRecord();
    const { record, result } = fn(current, { nowMs, localMs: nowMs });
    if (record !== current) this.records.set(bucket, record);
    return result;
  }

  onChange(): void {}

  async close(): Promise<void> {}
}
