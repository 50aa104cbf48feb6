// One reader at a time for the status page: a burst of requests shares one read of the
// warehouse instead of queueing one each for the pool's connections, which /healthz and
// /metrics need too. Requests while a read is under way wait for that read; requests within
// PAGE_SHARE_MS of its start are answered from it. A read that fails is shared by those who
// waited for it and kept for nobody: the next request reads again.

/** How long one read of the page serves every request, from its start on the pacing clock. */
export const PAGE_SHARE_MS = 2000;

export interface ShareOptions {
  /** The pacing clock (monotonic, ms). */
  now: () => number;
  shareMs?: number;
}

/** `read` behind one reader at a time, its result shared for `shareMs`. */
export function shareReads<T>(read: () => Promise<T>, options: ShareOptions): () => Promise<T> {
  const shareMs = options.shareMs ?? PAGE_SHARE_MS;
  let inFlight: Promise<T> | undefined;
  let last: { startedMs: number; value: T } | undefined;
  return () => {
    if (inFlight) return inFlight;
    const startedMs = options.now();
    if (last && startedMs - last.startedMs < shareMs) return Promise.resolve(last.value);
    const reading = Promise.resolve()
      .then(read)
      .then(
        (value) => {
          last = { startedMs, value };
          inFlight = undefined;
          return value;
        },
        (err: unknown) => {
          inFlight = undefined;
          throw err;
        },
      );
    inFlight = reading;
    return reading;
  };
}

/** `task`s run one after another, in the order given: a burst queues here, not in the pool. */
export function oneAtATime(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (task) => {
    const run = tail.then(task);
    tail = run.catch(() => undefined);
    return run;
  };
}
