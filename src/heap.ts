// How far V8 lets the heap grow between full collections. By default it may grow to about
// four times what survived the last one: a sync keeps some 60-80 MB alive while it parses
// and writes, and its RSS climbed past 400 MB on garbage alone. At twice the survivor size
// the peak RSS of the bench's first sync fell from 397 to 280 MB for about 5% more CPU
// (docs/performance.md). It is a growth factor, not a cap: a bigger live set still fits.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 100;

/** Call once, early, in a process that syncs (the CLI, the bench's sync process). */
export function limitHeapGrowth(percent = HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
