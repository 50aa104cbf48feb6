// A clock that runs `factor` times faster than the wall clock, for tests that wait on rate
// windows and Retry-After holds: the simulator (`now`), the budget and the client (`now`,
// `sleep`) all read it, so a 2 s window lasts 2 s to every one of them and a fifth of a
// second to the test. Only what they exchange is on it; HTTP latency and timeouts stay real.
import type { Sleep } from '../../src/upstream/budget.ts';
import { realSleep } from '../../src/upstream/budget.ts';

export interface FastClock {
  now: () => number;
  sleep: Sleep;
  factor: number;
}

export function fastClock(factor: number): FastClock {
  const base = Date.now();
  return {
    factor,
    now: () => base + (Date.now() - base) * factor,
    sleep: (ms, signal) => realSleep(ms / factor, signal),
  };
}
