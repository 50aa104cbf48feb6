// Clocks and sleeps for tests that wait on rate windows and Retry-After holds, so that what
// they assert is the order of events and the waits decided, never how fast this machine is.
//
// - idleClock: a clock that stands still while the work it tracks runs and jumps to the next
//   wake-up once all of it sleeps. The simulator (`now`), the budget and the client (`now`,
//   `sleep`) read it: a 2 s window lasts 2 s to every one of them, and the client's CPU time
//   and round trips cost none of it, however slow the machine. HTTP stays real.
// - heldSleep: a budget's waits end only when the test says (a poll) or when a change wakes
//   them: "woken by the change" is then an event, not "finished within N ms".
// - recordingSleep: real sleeps, each asked-for wait kept: "decided not to wait" is then a
//   fact, not "returned within N ms".
import type { Sleep } from '../../src/upstream/budget/budget.ts';
import { realSleep } from '../../src/upstream/budget/budget.ts';

/** Each read of the idle clock moves it on by this much: a send is before its answer, as on any machine. */
const READ_MS = 0.001;

export interface IdleClock {
  now: () => number;
  sleep: Sleep;
  /** Runs `work` as tracked: the clock jumps only when every tracked piece of work sleeps on it. */
  track<T>(work: () => Promise<T>): Promise<T>;
}

export function idleClock(start = Date.now()): IdleClock {
  let t = start;
  let working = 0;
  const sleepers = new Set<{ until: number; wake: () => void }>();
  let checkDue = false;
  // Once the event loop has run what is ready (answers read, waiters woken), everything
  // tracked either sleeps or waits for the network; only in the first case does time move.
  const check = () => {
    if (checkDue) return;
    checkDue = true;
    setImmediate(() => {
      checkDue = false;
      if (working === 0 || sleepers.size !== working) return;
      t = Math.max(t, Math.min(...[...sleepers].map((s) => s.until)));
      for (const s of [...sleepers]) if (s.until <= t) s.wake();
    });
  };
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      signal?.throwIfAborted();
      const entry = {
        until: t + Math.max(0, ms),
        wake: () => {
          sleepers.delete(entry);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        sleepers.delete(entry);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      sleepers.add(entry);
      check();
    });
  const track = async <T>(work: () => Promise<T>): Promise<T> => {
    working++;
    try {
      return await work();
    } finally {
      working--;
      check();
    }
  };
  return { now: () => (t += READ_MS), sleep, track };
}

export interface HeldSleep {
  sleep: Sleep;
  /** Waits asleep now. */
  waiting(): number;
  /** Ends every wait asleep now, as its poll interval running out would. */
  poll(): void;
  /** Waits a change woke (the sleep's signal aborted) before they ran out. */
  woken(): number;
}

export function heldSleep(): HeldSleep {
  const asleep = new Set<() => void>();
  let woken = 0;
  const sleep: Sleep = (_ms, signal) =>
    new Promise<void>((resolve, reject) => {
      signal?.throwIfAborted();
      const ranOut = () => {
        asleep.delete(ranOut);
        resolve();
      };
      asleep.add(ranOut);
      signal?.addEventListener(
        'abort',
        () => {
          // Aborted after it ran out is only the waiter tidying up.
          if (!asleep.delete(ranOut)) return;
          woken++;
          reject(signal.reason);
        },
        { once: true },
      );
    });
  return {
    sleep,
    waiting: () => asleep.size,
    poll: () => [...asleep].forEach((ranOut) => ranOut()),
    woken: () => woken,
  };
}

export function recordingSleep(): { sleep: Sleep; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms, signal) => {
      waits.push(ms);
      return realSleep(ms, signal);
    },
  };
}
