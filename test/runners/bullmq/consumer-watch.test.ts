// A queue consumer that takes no job while one is ready is replaced at the second look
// (src/runners/bullmq/consumer-watch.ts); one that is busy, or whose queue holds its jobs back,
// is left alone. On the machine's Redis, with BullMQ's own queue and worker: a consumer whose
// worker never runs (autorun off) stands for one whose blocking connection a failover wedged.
import { Queue, Worker, type Processor } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { Consumer, isStuck, type ConsumerLook } from '../../../src/runners/bullmq/consumer-watch.ts';
import { patience } from '../../helpers/patience.ts';
import { redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { deleteRedisKeys, waitFor } from '../../helpers/workers.ts';

describe('isStuck', () => {
  const look = (o: Partial<ConsumerLook>): ConsumerLook => ({ ready: [], started: 0, inFlight: 0, ...o });
  it('a job ready at both looks, nothing run or started between them: stuck', () => {
    expect(isStuck(look({ ready: ['7', '8'] }), look({ ready: ['8', '9'] }))).toBe(true);
  });
  it('the first look, other jobs ready each time, a job started, one in flight: not stuck', () => {
    expect(isStuck(undefined, look({ ready: ['8'] }))).toBe(false);
    expect(isStuck(look({ ready: ['7'] }), look({ ready: ['8'] }))).toBe(false);
    expect(isStuck(look({ ready: ['7'], started: 3 }), look({ ready: ['7'], started: 4 }))).toBe(false);
    expect(isStuck(look({ ready: ['7'], inFlight: 1 }), look({ ready: ['7'] }))).toBe(false);
    expect(isStuck(look({ ready: ['7'] }), look({ ready: ['7'], inFlight: 1 }))).toBe(false);
    expect(isStuck(look({ ready: [] }), look({ ready: [] }))).toBe(false);
  });
});

describe('Consumer on Redis', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  /** `firstIdle`: the first consumer's worker never runs (autorun off), as a wedged one takes nothing. */
  async function setup(processor: Processor, options: { firstIdle?: boolean } = {}) {
    const url = await redisServerUrl();
    const prefix = uniqueName('tesync_consumer');
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue('q', { connection, prefix });
    const opened: Worker[] = [];
    const consumer = new Consumer(queue, processor, (p) => {
      const w = new Worker('q', p, { connection, prefix, drainDelay: 1, autorun: !(options.firstIdle === true && opened.length === 0) });
      opened.push(w);
      return w;
    });
    cleanups.push(
      () => deleteRedisKeys(url, prefix),
      async () => connection.quit(),
      () => queue.close(),
      () => Promise.all(opened.map((w) => w.close(true))),
    );
    await consumer.worker.waitUntilReady();
    return { queue, consumer, opened };
  }

  it('a consumer that takes nothing while a job waits is replaced at the second look, and the new one takes the job', async () => {
    const done: string[] = [];
    const { queue, consumer, opened } = await setup(async (job) => void done.push(job.id!), { firstIdle: true });
    const job = await queue.add('j', {});
    expect(await consumer.check()).toBeUndefined();
    const old = await consumer.check();
    expect(old).toBe(opened[0]);
    expect(consumer.worker).toBe(opened[1]);
    await waitFor('the job done by the new consumer', () => (done.includes(job.id!) ? true : undefined), 20_000, 20);
    // And with nothing ready, the new one stays.
    expect(await consumer.check()).toBeUndefined();
    expect(await consumer.check()).toBeUndefined();
    expect(opened).toHaveLength(2);
  }, patience(30_000));

  it('a consumer running a job, or one whose queue is paused, is left alone', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { queue, consumer, opened } = await setup(async () => held);
    await queue.add('running', {});
    await waitFor('the first job running', async () => ((await queue.getActiveCount()) === 1 ? true : undefined), 20_000, 20);
    await queue.add('waiting', {});
    expect(await consumer.check()).toBeUndefined();
    expect(await consumer.check()).toBeUndefined();
    release();
    await waitFor('both jobs done', async () => ((await queue.getCompletedCount()) === 2 ? true : undefined), 20_000, 20);

    await queue.pause();
    await queue.add('paused', {});
    expect(await consumer.check()).toBeUndefined();
    expect(await consumer.check()).toBeUndefined();
    expect(opened).toHaveLength(1);
  }, patience(30_000));
});
