// A queue's consumer in this process (a BullMQ Worker), watched so that it cannot stay stuck.
// A consumer waits for jobs on a blocking connection of its own. After a Redis Cluster's
// failover that connection may never come back (a Cluster duplicate wedged while connecting:
// bullmq #4138), and BullMQ's own watchdog then waits for it for ever: the consumer stays
// "running", takes no job again, and only a new one recovers, as BullMQ's maintainers advise
// (bullmq #3185: close the worker and create a new one). The runtime looks at each consumer on
// its sweep (runtime.ts); one found stuck at two looks in a row is replaced.
import { setTimeout as delay } from 'node:timers/promises';
import type { Job, Processor } from 'bullmq';
import type { AnyQueue, AnyWorker } from './backend.ts';

/** What one look at a consumer sees. */
export interface ConsumerLook {
  /** Ids of the jobs it could take now: waiting or prioritized, its queue neither paused nor rate-limited. */
  ready: readonly string[];
  /** Jobs it has started so far. */
  started: number;
  /** Jobs it is running now. */
  inFlight: number;
}

/**
 * Pure: stuck when a job it could take was ready at both looks while it ran nothing and
 * started nothing in between. A healthy idle consumer takes a ready job within its drain delay
 * (seconds), far inside a sweep. One with a job in flight is left alone: replacing it would
 * drop that job's lock.
 */
export function isStuck(before: ConsumerLook | undefined, now: ConsumerLook): boolean {
  if (!before || now.started !== before.started || before.inFlight > 0 || now.inFlight > 0) return false;
  const was = new Set(before.ready);
  return now.ready.some((id) => was.has(id));
}

/** How long a replaced consumer gets to close before its connections are dropped. */
const RETIRE_MS = 5000;

export class Consumer {
  worker: AnyWorker;
  private started = 0;
  private inFlight = 0;
  private last: ConsumerLook | undefined;
  private idle: (() => void)[] = [];
  private readonly counted: Processor;

  /**
   * `open` makes the BullMQ worker for `processor` (again, when one is replaced), with its
   * listeners attached.
   */
  constructor(
    readonly queue: AnyQueue,
    processor: Processor,
    private readonly open: (processor: Processor) => AnyWorker,
  ) {
    this.counted = async (job: Job, token?: string, signal?: AbortSignal) => {
      this.started++;
      this.inFlight++;
      try {
        return await processor(job, token, signal);
      } finally {
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      }
    };
    this.worker = open(this.counted);
  }

  /**
   * Closes once the jobs it runs have ended (the runtime hands them back past its grace): true.
   * A close still waiting RETIRE_MS after that waits on a connection that will never end (a
   * Redis Cluster client disconnected while it reconnects, its pool empty, never ends: ioredis
   * #352); its connections are dropped and the process's exit takes what is left: false.
   */
  async close(): Promise<boolean> {
    const closed = this.worker.close().then(() => true);
    const cutShort = this.whenIdle().then(() => delay(RETIRE_MS, false));
    if (await Promise.race([closed, cutShort])) return true;
    void this.worker.disconnect().catch(() => undefined);
    return false;
  }

  private whenIdle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  async look(): Promise<ConsumerLook> {
    const [paused, limitedMs] = await Promise.all([this.queue.isPaused(), this.queue.getRateLimitTtl()]);
    const ready = paused || limitedMs > 0 ? [] : (await this.queue.getJobs(['waiting', 'prioritized'], 0, 9, true)).map((j) => j.id ?? '');
    return { ready: ready.filter((id) => id !== ''), started: this.started, inFlight: this.inFlight };
  }

  /** Looks again; a consumer stuck since the last look is replaced by a new one: then the old one is returned, closing. */
  async check(): Promise<AnyWorker | undefined> {
    const now = await this.look();
    const stuck = isStuck(this.last, now);
    this.last = stuck ? undefined : now;
    if (!stuck) return undefined;
    const old = this.worker;
    this.worker = this.open(this.counted);
    void retire(old);
    return old;
  }
}

/** A stuck worker's close may wait for its wedged connection for ever: past RETIRE_MS its connections are dropped. */
async function retire(worker: AnyWorker): Promise<void> {
  const closed = worker.close(true).then(
    () => true,
    () => false,
  );
  if (!(await Promise.race([closed, delay(RETIRE_MS, false, { ref: false })]))) await worker.disconnect().catch(() => undefined);
}
