// How long a test waits before it calls something hung. Every bound written in a test file
// (a test's or hook's timeout, a child process's kill timer, a wait for a log line) is the time
// the thing took on an idle machine of this project's kind, with room to spare; `patience()`
// multiplies it, so that a machine twice as slow, or one with a core kept busy by something
// else, waits longer instead of failing. These bounds only end a hung test: none of them is an
// assertion about speed (those live in `npm run bench`).
//
// TEST_PATIENCE sets the multiplier (default 4: a machine 2.4 times slower than the one the
// bounds were measured on was seen, docs/performance.md "The test loop"). A smaller one finds a
// hang sooner while working on a test; CI keeps the default.
const DEFAULT_PATIENCE = 4;

function multiplier(): number {
  const raw = process.env.TEST_PATIENCE;
  if (raw === undefined || raw === '') return DEFAULT_PATIENCE;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new Error(`TEST_PATIENCE must be a number >= 1, got ${JSON.stringify(raw)}`);
  return n;
}

export const PATIENCE = multiplier();

/** `ms` as measured on an idle machine, scaled to how long a test may wait for it here. */
export function patience(ms: number): number {
  return Math.round(ms * PATIENCE);
}
