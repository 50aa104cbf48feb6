// The rate budget every request goes through: one per bucket (app public, app key,
// gateway). One Budget runs the transitions of budget-state.ts against a store: in memory
// for `tesync sync` (InProcessBudget), in Redis for worker processes (RedisBudget).
//
// - A grant is a lease with an expiry: a holder that dies with requests in flight frees
//   their slots when the leases expire (for a store only this process uses, never).
// - Decisions run on the store's clock. Local instants (Retry-After ends, window resets)
//   become store time as durations from the local time the store's clock was read at, so a
//   skewed local clock cannot shorten a block.
// - Waiters wake when the bucket changes here or another holder of the store announces a
//   change, and poll as well.
// - A 429 answered here holds this process's requests of the bucket at once, before the store
//   hears of it: a grant the store made just before (its update was on the way when the 429
//   arrived) is handed back unsent, so no request leaves inside a Retry-After it knows of.
import { randomBytes } from 'node:crypto';
import { RateLimitedError } from '../../lib/errors.ts';
import {
  decide,
  DEFAULT_BUDGET_POLICY,
  describe,
  initialBucketState,
  jitterFor,
  observe,
  type BucketState,
  type BucketStatus,
  type BudgetPolicy,
  type Observation,
} from './budget-state.ts';
import { MemoryBudgetStore, type BucketRecord, type BudgetStore, type StoreTime } from './budget-store.ts';
import { realSleep, systemPacingClock, type PacingClock } from '../../ports/pacing-clock.ts';
import { BUCKETS } from '../routes.ts';
import { BucketWaiters } from './waiters.ts';

export type { BucketStatus, BudgetPolicy, Observation } from './budget-state.ts';
export { DEFAULT_BUDGET_POLICY } from './budget-state.ts';

export interface AcquireOptions {
  /** Longer waits throw RateLimitedError instead of sleeping. */
  maxWaitMs?: number;
  signal?: AbortSignal;
}

export interface RateBudget {
  /** Waits until a request to the bucket may go and reserves its slot. */
  acquire(bucket: string, opts?: AcquireOptions): Promise<{ waitedMs: number }>;
  /** Reports the response to a granted request (exactly once per acquire), or a 429 block. */
  observe(bucket: string, obs: Observation): Promise<void> | void;
  /** Per bucket: held back until when and why, remaining budget; for progress output. */
  snapshot(): BucketStatus[];
}

export type { Sleep } from '../../ports/pacing-clock.ts';
export { realSleep } from '../../ports/pacing-clock.ts';

/** `now` and `sleep`: the pacing clock (the process's own when not given). */
export interface BudgetOptions extends Partial<PacingClock> {
  random?: () => number;
  policy?: Partial<BudgetPolicy>;
  /** How long a grant holds its slot without an observation (request timeout + margin). */
  leaseMs?: number;
}

/**
 * A budget shared by processes through a store (Redis, Postgres): its lease must be finite,
 * since a process that dies holding a slot frees it only when its lease runs out.
 */
export interface SharedBudgetOptions extends BudgetOptions {
  /** How long a grant holds its slot without an observation (request timeout + LEASE_MARGIN_MS). */
  leaseMs: number;
  /** The pacing clock's reading (tests: a skewed one); decisions run on the store's time regardless. */
  now?: PacingClock['now'];
}

/** Throws unless a shared budget's lease is finite (SharedBudgetOptions). */
export function checkSharedLease(budget: string, leaseMs: number): void {
  if (!Number.isFinite(leaseMs)) throw new RangeError(`${budget}: leaseMs must be finite (a dead process must not hold its slots forever)`);
}

/** One decision: tests, and acquire's loop. Times are the store's. */
export type Attempt = { grant: true; nowMs: number; leaseId: string } | { grant: false; nowMs: number; untilMs: number | undefined; reason: string };

interface Lease {
  id: string;
  /** Store time of the grant. */
  grantedAt: number;
  /** Local time the grant was known here (at or after grantedAt): the send time of a request is measured from it. */
  localAt: number;
}

export class Budget implements RateBudget {
  readonly policy: BudgetPolicy;
  private readonly waiters: BucketWaiters;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly leaseMs: number;
  private readonly leasePrefix = `${process.pid}.${randomBytes(4).toString('hex')}`;
  private leaseCount = 0;
  /** Leases granted here and not observed yet, per bucket. */
  private readonly leases = new Map<string, Lease[]>();
  /** The last state seen per bucket, and store time minus local time then: for snapshot(). */
  private readonly seen = new Map<string, { state: BucketState; offsetMs: number }>();
  /** Per bucket, the local time until which a 429 answered in this process holds its requests. */
  private readonly heldUntil = new Map<string, number>();

  constructor(
    private readonly store: BudgetStore,
    options: BudgetOptions = {},
  ) {
    this.now = options.now ?? systemPacingClock.now;
    this.random = options.random ?? Math.random;
    this.waiters = new BucketWaiters(options.sleep ?? realSleep);
    this.policy = { ...DEFAULT_BUDGET_POLICY, ...options.policy };
    this.leaseMs = options.leaseMs ?? Number.POSITIVE_INFINITY;
    store.onChange((bucket) => this.waiters.wake(bucket));
  }

  async acquire(bucket: string, opts: AcquireOptions = {}): Promise<{ waitedMs: number }> {
    const started = this.now();
    const maxWaitMs = opts.maxWaitMs ?? Number.POSITIVE_INFINITY;
    for (;;) {
      opts.signal?.throwIfAborted();
      const d = await this.tryAcquire(bucket);
      const waited = this.now() - started;
      const heldMs = (this.heldUntil.get(bucket) ?? 0) - this.now();
      if (d.grant && heldMs <= 0) return { waitedMs: waited };
      // Granted before the store knew of the 429 that arrived since: the slot goes back unsent.
      if (d.grant) await this.release(bucket, d.leaseId);
      const left = maxWaitMs - waited;
      const untilIn = d.grant ? heldMs : d.untilMs === undefined ? undefined : d.untilMs - d.nowMs;
      const reason = d.grant ? 'retry-after' : d.reason;
      if (untilIn !== undefined && untilIn > left) throw new RateLimitedError(bucket, untilIn, reason);
      if (untilIn === undefined && left <= 0) throw new RateLimitedError(bucket, this.policy.pollMs, reason);
      const timed = untilIn !== undefined ? untilIn + jitterFor(untilIn, this.random(), this.policy) : this.policy.pollMs;
      await this.waiters.wait(bucket, Math.min(timed, Math.max(1, left)), opts.signal);
    }
  }

  /** One atomic decision; a grant takes a lease that an observation of the bucket releases. */
  async tryAcquire(bucket: string): Promise<Attempt> {
    const id = `${this.leasePrefix}.${++this.leaseCount}`;
    const r = await this.store.update(bucket, (rec, clock) => {
      const { state, leases } = current(rec, clock.nowMs);
      const d = decide(state, clock.nowMs, this.policy);
      const record = d.grant ? { state: d.state, leases: { ...leases, [id]: clock.nowMs + this.leaseMs } } : unlessSame(rec, state, d.state, leases);
      return { record, result: { d, clock } };
    });
    const { d, clock } = r;
    this.remember(bucket, d.state, clock);
    if (!d.grant) return { grant: false, nowMs: clock.nowMs, untilMs: d.untilMs, reason: d.reason };
    const list = this.leases.get(bucket) ?? [];
    list.push({ id, grantedAt: clock.nowMs, localAt: this.now() });
    this.leases.set(bucket, list);
    return { grant: true, nowMs: clock.nowMs, leaseId: id };
  }

  observe(bucket: string, obs: Observation): Promise<void> | void {
    // Synchronously, before the store's round trip: requests of this process granted meanwhile check it.
    if (obs.blockedUntilMs !== undefined && obs.blockedUntilMs > (this.heldUntil.get(bucket) ?? 0)) this.heldUntil.set(bucket, obs.blockedUntilMs);
    const lease = obs.granted === false ? undefined : this.takeLease(bucket, obs.sentAtMs);
    const done = this.store.update(
      bucket,
      (rec, clock) => {
        const { state, leases } = current(rec, clock.nowMs);
        // A lease that expired (or was never ours) holds no slot any more: nothing to release.
        const mine = lease !== undefined && lease.id in leases;
        const rest = mine ? Object.fromEntries(Object.entries(leases).filter(([id]) => id !== lease.id)) : leases;
        const toStore = (localMs: number | undefined) => (localMs === undefined ? undefined : clock.nowMs + Math.ceil(localMs - clock.localMs));
        // Our own grant's store time is exact; the time from it to the send is measured locally.
        const sentAtMs = obs.sentAtMs === undefined ? undefined : lease ? lease.grantedAt + Math.max(0, obs.sentAtMs - lease.localAt) : toStore(obs.sentAtMs);
        const next = observe(
          state,
          { ...obs, resetAtMs: toStore(obs.resetAtMs), blockedUntilMs: toStore(obs.blockedUntilMs), sentAtMs, granted: mine },
          clock.nowMs,
        );
        return { record: { state: next, leases: rest }, result: { state: next, clock } };
      },
      { announce: true },
    );
    const settle = ({ state, clock }: { state: BucketState; clock: StoreTime }) => {
      this.remember(bucket, state, clock);
      // Every waiter of the bucket decides again against the new state.
      this.waiters.wake(bucket);
    };
    if (done instanceof Promise) return done.then(settle);
    settle(done);
  }

  snapshot(): BucketStatus[] {
    const local = this.now();
    const names = [...new Set([...BUCKETS, ...this.seen.keys()])];
    return names.map((bucket) => {
      const seen = this.seen.get(bucket);
      const offset = seen?.offsetMs ?? 0;
      const status = describe(bucket, seen?.state ?? initialBucketState(), local + offset, this.policy, this.waiters.count(bucket));
      return status.waitingUntilMs === undefined ? status : { ...status, waitingUntilMs: status.waitingUntilMs - offset };
    });
  }

  /** The bucket's state as the store has it now (tests, diagnostics). */
  async readState(bucket: string): Promise<BucketState> {
    return this.store.update(bucket, (rec, clock) => ({ record: rec, result: current(rec, clock.nowMs).state }));
  }

  async close(): Promise<void> {
    this.waiters.wakeAll();
    await this.store.close();
  }

  private remember(bucket: string, state: BucketState, clock: StoreTime): void {
    this.seen.set(bucket, { state, offsetMs: clock.nowMs - clock.localMs });
  }

  /** Gives an unsent grant's slot back: its lease goes, nothing is counted as sent. */
  private async release(bucket: string, leaseId: string): Promise<void> {
    const list = this.leases.get(bucket);
    const i = list?.findIndex((l) => l.id === leaseId) ?? -1;
    if (i >= 0) list!.splice(i, 1);
    await this.store.update(bucket, (rec) => {
      if (!(leaseId in rec.leases)) return { record: rec, result: undefined };
      const leases = Object.fromEntries(Object.entries(rec.leases).filter(([id]) => id !== leaseId));
      return { record: { state: rec.state, leases }, result: undefined };
    });
  }

  /** The lease granted closest before the request was sent (requests of one bucket are interchangeable). */
  private takeLease(bucket: string, sentAtMs: number | undefined): Lease | undefined {
    const list = this.leases.get(bucket);
    if (!list || list.length === 0) return undefined;
    let best = 0;
    if (sentAtMs !== undefined) {
      for (let i = 0; i < list.length; i++) if (list[i]!.localAt <= sentAtMs && list[i]!.localAt >= list[best]!.localAt) best = i;
    }
    return list.splice(best, 1)[0];
  }
}

/** The record's live leases (the same object when none expired) and its state, counting them in flight. */
function current(rec: BucketRecord, nowMs: number): { state: BucketState; leases: BucketRecord['leases'] } {
  const entries = Object.entries(rec.leases);
  const live = entries.filter(([, expiresAt]) => expiresAt > nowMs);
  const leases = live.length === entries.length ? rec.leases : Object.fromEntries(live);
  return { state: { ...rec.state, inFlight: live.length }, leases };
}

/** The record as it was when a decision changed nothing: then the store writes nothing. */
function unlessSame(rec: BucketRecord, before: BucketState, after: BucketState, leases: BucketRecord['leases']): BucketRecord {
  return after === before && leases === rec.leases ? rec : { state: after, leases };
}

export type InProcessBudgetOptions = Omit<BudgetOptions, 'leaseMs'>;

/** The budget of one process (`tesync sync`): its state in memory, its clock the local one. */
export class InProcessBudget extends Budget {
  constructor(options: InProcessBudgetOptions = {}) {
    super(new MemoryBudgetStore(options.now), options);
  }

  /** The memory store is synchronous: the observation is folded in before this returns. */
  override observe(bucket: string, obs: Observation): void {
    void super.observe(bucket, obs);
  }
}
