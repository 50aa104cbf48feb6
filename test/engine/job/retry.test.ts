// The one retry policy (src/engine/job/retry.ts), pure: three tries, waits of 2 s then 4 s, and
// BullMQ's exponential backoff, as the worker's fetch jobs declare it, computes the same waits.
import { Backoffs } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { JOB_RETRY, retryDelayMs } from '../../../src/engine/job/retry.ts';
import { FETCH_JOB_OPTIONS } from '../../../src/runners/bullmq/queues.ts';

describe('the job retry policy', () => {
  it('three tries, the second after 2 s, the third after 4 s more', () => {
    expect(JOB_RETRY.attempts).toBe(3);
    expect([1, 2].map(retryDelayMs)).toEqual([2000, 4000]);
  });

  it('is what BullMQ runs: the same attempts, the same waits after each failed try', () => {
    expect(FETCH_JOB_OPTIONS.attempts).toBe(JOB_RETRY.attempts);
    const backoff = Backoffs.normalize(FETCH_JOB_OPTIONS.backoff!)!;
    expect(backoff).toEqual({ type: 'exponential', delay: JOB_RETRY.firstDelayMs });
    // The job is read by custom strategies only.
    for (let failed = 1; failed < JOB_RETRY.attempts; failed++) expect(Backoffs.calculate(backoff, failed, new Error('x'), undefined as never)).toBe(retryDelayMs(failed));
  });
});
