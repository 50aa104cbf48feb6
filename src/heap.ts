// How far V8 lets the heap grow between full collections. By default it may grow to about
// four times what survived the last one: a sync keeps some 60-80 MB alive while it parses
// and writes, and its RSS climbed past 400 MB on garbage alone. At 1.5 times the survivor
// size the bench's 100-token first sync peaked at 243 MB instead of 466, for more frequent
// collections (docs/performance.md has the CPU it costs). It is a growth factor, not a cap:
// a bigger live set (more concurrency, longer histories) still fits, where a cap would make
// it an out-of-memory crash.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

/** Call once, early, in a process that syncs into Postgres (the CLI, the bench's sync process). */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
