// One reader at a time for the status page (issue 55 part 6), on an injected pacing clock:
// concurrent requests share one read, requests within PAGE_SHARE_MS of its start reuse it, a
// failed read is shared by its waiters and kept for nobody; archived bodies are read one by one.
import { describe, expect, it } from 'vitest';
import { oneAtATime, PAGE_SHARE_MS, shareReads } from '../../../src/runners/metrics/page-share.ts';

/** Lets every promise callback queued so far run. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A read the test ends by hand, counting how many were started. */
function handRead() {
  const started: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const read = () => new Promise<string>((resolve, reject) => started.push({ resolve, reject }));
  return { read, started };
}

describe('shareReads', () => {
  it('a burst shares one read; within the window the result is reused; past it, read again', async () => {
    let nowMs = 1_000;
    const { read, started } = handRead();
    const get = shareReads(read, { now: () => nowMs });
    const burst = Array.from({ length: 300 }, () => get());
    await settled();
    expect(started).toHaveLength(1);
    started[0]!.resolve('first');
    expect(await Promise.all(burst)).toEqual(Array(300).fill('first'));

    nowMs += PAGE_SHARE_MS - 1;
    expect(await get()).toBe('first');
    expect(started).toHaveLength(1);

    nowMs += 1;
    const next = get();
    const alsoNext = get();
    await settled();
    expect(started).toHaveLength(2);
    started[1]!.resolve('second');
    expect([await next, await alsoNext]).toEqual(['second', 'second']);
  });

  it('the window counts from the start of a read: a slow read is not kept past it', async () => {
    let nowMs = 0;
    const { read, started } = handRead();
    const get = shareReads(read, { now: () => nowMs, shareMs: 2_000 });
    const first = get();
    nowMs = 5_000;
    // Still under way: waited for, not read again.
    const during = get();
    await settled();
    expect(started).toHaveLength(1);
    started[0]!.resolve('slow');
    expect([await first, await during]).toEqual(['slow', 'slow']);
    void get();
    await settled();
    expect(started).toHaveLength(2);
  });

  it('a failed read fails its waiters and is not kept: the next request reads again', async () => {
    const nowMs = 0;
    const { read, started } = handRead();
    const get = shareReads(read, { now: () => nowMs });
    const waiters = [get(), get(), get()];
    await settled();
    started[0]!.reject(new Error('warehouse away'));
    for (const w of waiters) await expect(w).rejects.toThrow('warehouse away');
    const again = get();
    await settled();
    expect(started).toHaveLength(2);
    started[1]!.resolve('back');
    expect(await again).toBe('back');
  });

  it('a read that throws at once is a failed read, not a thrown request', async () => {
    const get = shareReads(
      () => {
        throw new Error('at once');
      },
      { now: () => 0 },
    );
    await expect(get()).rejects.toThrow('at once');
  });
});

describe('oneAtATime', () => {
  it('runs tasks one after another in order, a failure stopping none after it', async () => {
    const queue = oneAtATime();
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (i: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setImmediate(r));
      order.push(i);
      running--;
      if (i === 3) throw new Error('body 3 away');
      return i;
    };
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => queue(task(i))));
    expect(most).toBe(1);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[9]).toEqual({ status: 'fulfilled', value: 9 });
  });
});
