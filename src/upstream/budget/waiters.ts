// Callers waiting for a bucket's budget, woken early when its state changes (a response
// seen here, or another process's observation announced over Redis).
import type { Sleep } from '../../ports/pacing-clock.ts';

export type { Sleep } from '../../ports/pacing-clock.ts';

export class BucketWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(private readonly sleep: Sleep) {}

  count(bucket: string): number {
    return this.waiting.get(bucket)?.size ?? 0;
  }

  /** Wakes every waiter of the bucket: each re-decides against the new state. */
  wake(bucket: string): void {
    const ws = this.waiting.get(bucket);
    if (ws) for (const wake of [...ws]) wake();
  }

  wakeAll(): void {
    for (const bucket of this.waiting.keys()) this.wake(bucket);
  }

  /** Sleeps up to `ms`, returning early when the bucket is woken; rethrows the caller's abort. */
  async wait(bucket: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let set = this.waiting.get(bucket);
    if (!set) this.waiting.set(bucket, (set = new Set()));
    const wake = () => stop.abort('state changed');
    set.add(wake);
    try {
      await this.sleep(ms, stop.signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      // Woken by a state change: look again.
    } finally {
      set.delete(wake);
      signal?.removeEventListener('abort', onAbort);
      if (!stop.signal.aborted) stop.abort('done');
    }
  }
}
