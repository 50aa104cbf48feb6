// The one retry policy of a job, under either runner: a failure worth another try (judgeFailure:
// a 5xx, a timeout, a reset, a DNS name or host not reached, the database restarting) is tried
// again after 2 s, then after 4 s, and the third is recorded. One that is not (a 4xx, invalid
// data, a connection refused, a port Node's fetch will not use) is recorded at once. The
// in-process runner waits these itself; the BullMQ runner hands them to BullMQ as its
// exponential backoff, which computes the same waits.
export const JOB_RETRY = { attempts: 3, firstDelayMs: 2000 } as const;

/** Pure: the wait before the next try, after `failedTries` tries failed. */
export function retryDelayMs(failedTries: number): number {
  return JOB_RETRY.firstDelayMs * 2 ** (failedTries - 1);
}
