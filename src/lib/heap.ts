// How far V8 lets the heap grow between full collections. By default it may grow to a few
// times what survived the last one, and a sync's live set is small next to the garbage it
// makes parsing and writing bodies: most of its peak memory would be garbage waiting for a
// collection. A smaller factor trades more frequent collections (CPU, which the rate budget
// leaves idle) for that memory; the figures are in docs/performance.md. It is a growth
// factor, not a cap: a bigger live set (more concurrency, longer histories) still fits, where
// a cap would make it an out-of-memory crash.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/** Call once, early, in a process that syncs into Postgres (the CLI, the bench's sync process). */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
