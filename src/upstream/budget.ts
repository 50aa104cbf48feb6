// The rate budget every request goes through: one per bucket (app public, app key,
// gateway). The interface is what the client needs; the in-process implementation keeps
// state in memory for `tesync sync`, and a Redis-backed one (shared by worker processes)
// implements the same interface over the same pure transitions in budget-state.ts.
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { RateLimitedError } from '../errors.ts';
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
import { BUCKETS } from './routes.ts';
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

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Resolves after `ms`, or rejects with the signal's reason when it aborts. */
export const realSleep: Sleep = async (ms, signal) => {
  await sleepTimer(Math.max(0, ms), undefined, { signal });
};

export interface InProcessBudgetOptions {
  now?: () => number;
  random?: () => number;
  sleep?: Sleep;
  policy?: Partial<BudgetPolicy>;
}

export class InProcessBudget implements RateBudget {
  readonly policy: BudgetPolicy;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly sleep: Sleep;
  private readonly states = new Map<string, BucketState>();
  private readonly waiters: BucketWaiters;

  constructor(options: InProcessBudgetOptions = {}) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? realSleep;
    this.waiters = new BucketWaiters(this.sleep);
    this.policy = { ...DEFAULT_BUDGET_POLICY, ...options.policy };
  }

  async acquire(bucket: string, opts: AcquireOptions = {}): Promise<{ waitedMs: number }> {
    const started = this.now();
    const maxWaitMs = opts.maxWaitMs ?? Number.POSITIVE_INFINITY;
    for (;;) {
      opts.signal?.throwIfAborted();
      const now = this.now();
      const d = decide(this.state(bucket), now, this.policy);
      this.states.set(bucket, d.state);
      if (d.grant) return { waitedMs: now - started };

      const waited = now - started;
      const left = maxWaitMs - waited;
      if (d.untilMs !== undefined && d.untilMs - now > left) {
        throw new RateLimitedError(bucket, d.untilMs - now, d.reason);
      }
      if (d.untilMs === undefined && left <= 0) throw new RateLimitedError(bucket, this.policy.pollMs, d.reason);
      const timed = d.untilMs !== undefined ? d.untilMs - now + jitterFor(d.untilMs - now, this.random(), this.policy) : this.policy.pollMs;
      await this.waiters.wait(bucket, Math.min(timed, Math.max(1, left)), opts.signal);
    }
  }

  observe(bucket: string, obs: Observation): void {
    this.states.set(bucket, observe(this.state(bucket), obs, this.now()));
    // Wake every waiter of the bucket: each re-decides against the new state, one at a time.
    this.waiters.wake(bucket);
  }

  snapshot(): BucketStatus[] {
    const now = this.now();
    const names = [...new Set([...BUCKETS, ...this.states.keys()])];
    return names.map((b) => describe(b, this.state(b), now, this.policy, this.waiters.count(b)));
  }

  private state(bucket: string): BucketState {
    return this.states.get(bucket) ?? initialBucketState();
  }

}
