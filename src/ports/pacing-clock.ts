// The pacing clock: this process's clock for waits, the rate budget and timeouts, injected
// (tests hand in one that jumps: test/helpers/fast-clock.ts). Only differences of its readings
// and local deadlines are taken from it; a time that is stored or judged against a stored
// one is the warehouse's (src/store/warehouse-clock.ts).
//
// It reads milliseconds since 1970 (Date.now), not a monotonic counter: the upstream client's
// readings also date the requests it records (placed on the warehouse's clock by an offset
// measured against Date.now), and a rate-limit header's instant without a server Date is read
// against it.
import { setTimeout as sleepTimer } from 'node:timers/promises';

/** Waits `ms`, or rejects with the signal's reason when it aborts (a fake one in tests). */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface PacingClock {
  /** Milliseconds, on this process's clock. */
  now(): number;
  sleep: Sleep;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts. */
export const realSleep: Sleep = async (ms, signal) => {
  await sleepTimer(Math.max(0, ms), undefined, { signal });
};

/** The process's own pacing clock. */
export const systemPacingClock: PacingClock = { now: () => Date.now(), sleep: realSleep };

/**
 * This process's monotonic counter, in milliseconds: for how long ago something happened here
 * (an answer's age when its commit dates it), which a step of the wall clock must not stretch
 * or shrink. Never a date.
 */
export const monotonicNow = (): number => performance.now();
