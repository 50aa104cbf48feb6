import { describe, expect, it } from 'vitest';
import { answerMs, budgetMs, bucketEta, createEtaEstimator, estimateEta, formatDuration, formatEta, stillToPlan, walkEta, WINDOW_MS, workLeft, type Eta, type Pace, type WalkObservation } from '../../src/cli/eta.ts';
import type { KindTally } from '../../src/runners/in-process.ts';
import type { BucketStatus } from '../../src/upstream/index.ts';

const status = (over: Partial<BucketStatus>): BucketStatus => ({
  bucket: 'gateway',
  mode: 'metered',
  remaining: 0,
  limit: 300,
  inFlight: 0,
  waiters: 0,
  waitingUntilMs: undefined,
  reason: undefined,
  windowMs: 60_000,
  windowKnown: true,
  cycleMs: 61_000,
  refillInMs: 20_000,
  ...over,
});

describe('the ETA arithmetic', () => {
  it('spends what the window has left at once, then a window of budget per cycle from the refill', () => {
    const pace = { free: 40, limit: 300, cycleMs: 61_000, refillInMs: 20_000 };
    expect(budgetMs(0, pace)).toBe(0);
    expect(budgetMs(40, pace)).toBe(0);
    // 41: one waits for the refill.
    expect(budgetMs(41, pace)).toBe(20_000);
    // 40 now, 300 at the refill.
    expect(budgetMs(340, pace)).toBe(20_000);
    // 40 now, 300 at the refill, 300 a cycle later, 1 a cycle after that.
    expect(budgetMs(641, pace)).toBe(20_000 + 2 * 61_000);
    expect(budgetMs(1000, { free: 0, limit: 100, cycleMs: 10_000, refillInMs: 0 })).toBe(9 * 10_000);
  });

  it('answers take their time, concurrency at once', () => {
    expect(answerMs(270, 4, 200)).toBe(68 * 200);
    expect(answerMs(3, 4, 200)).toBe(200);
    expect(answerMs(0, 4, 200)).toBe(0);
  });

  it('the issue: 270 requests at 300/min with 3 done is not `ETA 0s`', () => {
    // Budget enough for all of them: the answers set the pace, 4 at once, 150 ms each.
    const e = bucketEta({ bucket: 'app-public', needed: 267, status: status({ remaining: 297, refillInMs: 59_000 }), meanRequestMs: 150 }, 4);
    expect(e).toEqual({ ms: 67 * 150, known: true });
    // A window that allows fewer: the rest waits for the refill.
    const tight = bucketEta({ bucket: 'app-public', needed: 267, status: status({ remaining: 27, limit: 30, cycleMs: 11_000, refillInMs: 9_000 }), meanRequestMs: 150 }, 4);
    // 27 now, then 30 per 11 s: 240 more take 8 windows, the first at the refill.
    expect(tight).toEqual({ ms: 9_000 + 7 * 11_000, known: true });
  });

  it('requests in flight hold their slots: they are neither free nor still to be granted', () => {
    // 10 needed, 4 of them in flight; 6 left of the window, 4 of them held: 2 free, 4 wait for the refill.
    const e = bucketEta({ bucket: 'gateway', needed: 10, status: status({ remaining: 6, inFlight: 4, limit: 10, cycleMs: 11_000, refillInMs: 5_000 }) }, 4);
    expect(e.ms).toBe(5_000);
  });

  it('after a 429 the bucket waits for the Retry-After, then a window per cycle', () => {
    const e = bucketEta({ bucket: 'gateway', needed: 25, status: status({ mode: 'unknown', remaining: undefined, limit: 10, cycleMs: 11_000, refillInMs: 7_000 }) }, 4);
    expect(e).toEqual({ ms: 7_000 + 2 * 11_000, known: true });
  });

  it('a guessed window makes it a lower bound; nothing known of the budget makes it unknown', () => {
    expect(bucketEta({ bucket: 'app-public', needed: 50, status: status({ remaining: 10, limit: 30, windowKnown: false, cycleMs: 11_000, refillInMs: 3_000 }) }, 4)).toEqual({
      ms: 3_000 + 11_000,
      known: false,
    });
    expect(bucketEta({ bucket: 'app-public', needed: 5, status: status({ mode: 'unknown', limit: undefined, remaining: undefined }) }, 4)).toEqual({ ms: undefined, known: false });
    expect(bucketEta({ bucket: 'app-public', needed: 0 }, 4)).toEqual({ ms: 0, known: true });
  });

  it('an unmetered bucket goes at the pace of its answers', () => {
    expect(bucketEta({ bucket: 'gateway', needed: 8, status: status({ mode: 'unmetered', limit: undefined }), meanRequestMs: 100 }, 4)).toEqual({ ms: 200, known: true });
  });

  it('the walk ends with its slowest bucket, a lower bound while it may still plan work', () => {
    const work = [
      { bucket: 'app-public', needed: 100, status: status({ bucket: 'app-public', remaining: 0, limit: 30, cycleMs: 11_000, refillInMs: 2_000 }) },
      { bucket: 'gateway', needed: 10, status: status({ remaining: 100 }), meanRequestMs: 100 },
      { bucket: 'app-key', needed: 0 },
    ];
    // app-public: 100 at 30 per 11 s from a refill in 2 s: 4 windows.
    expect(walkEta(work, 4, false)).toEqual({ ms: 2_000 + 3 * 11_000, lowerBound: false, bucket: 'app-public' });
    expect(walkEta(work, 4, true)).toEqual({ ms: 2_000 + 3 * 11_000, lowerBound: true, bucket: 'app-public' });
    // A bucket with work whose budget is unknown: the others' time, at least.
    const unknown = [...work, { bucket: 'app-key', needed: 3, status: status({ bucket: 'app-key', mode: 'unknown', limit: undefined }) }];
    expect(walkEta(unknown, 4, false)).toMatchObject({ lowerBound: true, bucket: 'app-public' });
    // Nothing known of any bucket that has work: no figure at all.
    expect(walkEta([{ bucket: 'gateway', needed: 3 }], 4, true)).toBeUndefined();
    expect(walkEta([], 4, false)).toEqual({ ms: 0, lowerBound: false, bucket: undefined });
  });

  it('reads as whole seconds rounded up, `≥` for a lower bound', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(200)).toBe('1s');
    expect(formatDuration(59_001)).toBe('1m00s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(7_500_000)).toBe('2h05m');
    expect(formatEta({ ms: 14_000, lowMs: 12_000, highMs: 20_000, lowerBound: true })).toBe('ETA ≥12s');
    expect(formatEta({ ms: 16_000, lowMs: 12_000, highMs: 21_500, lowerBound: false })).toBe('ETA 12–22s');
    expect(formatEta({ ms: 12_000, lowMs: 11_600, highMs: 12_000, lowerBound: false })).toBe('ETA 12s');
    expect(formatEta({ ms: 300_000, lowMs: 245_000, highMs: 390_000, lowerBound: false })).toBe('ETA 4m05s–6m30s');
    expect(formatEta(undefined)).toBe('ETA …');
  });
});

describe('the estimate, fed looks at a walk as the progress line is', () => {
  const kind = (over: Partial<KindTally>): KindTally => ({ planner: false, pending: 0, settled: 0, ms: 0, planned: 0, ...over });
  const look = (atMs: number, settled: number, planned: number, kinds: Record<string, KindTally>, over: Partial<WalkObservation> = {}): WalkObservation => ({
    atMs,
    settled,
    planned,
    kinds,
    busy: true,
    ...over,
  });

  /**
   * A walk simulated look by look: `jobs` of kinds that take `ms` each, `slots` at once, planned
   * by one list (whose fan-out is known once it settled). Returns each look's estimate beside
   * the time that was in fact left.
   */
  function simulate(spec: { slots: number; listMs: number; jobs: { kind: string; ms: number; count: number }[] }): { atMs: number; eta: Eta | undefined; truthMs: number }[] {
    const estimate = createEtaEstimator();
    // The list alone first, then every job, FIFO in the order given, `slots` at once.
    const order = spec.jobs.flatMap((j) => Array.from({ length: j.count }, () => j));
    const ends: { kind: string; startMs: number; endMs: number }[] = [];
    const free = Array.from({ length: spec.slots }, () => spec.listMs);
    for (const j of order) {
      free.sort((a, b) => a - b);
      const startMs = free[0]!;
      free[0] = startMs + j.ms;
      ends.push({ kind: j.kind, startMs, endMs: startMs + j.ms });
    }
    const lastMs = Math.max(...ends.map((e) => e.endMs));
    const out: { atMs: number; eta: Eta | undefined; truthMs: number }[] = [];
    for (let t = 0; t < lastMs; t += 250) {
      const listDone = t >= spec.listMs;
      const kinds: Record<string, KindTally> = { list: kind({ planner: true, pending: listDone ? 0 : 1, settled: listDone ? 1 : 0, ms: listDone ? spec.listMs : 0, planned: listDone ? order.length : 0 }) };
      let waiting = false;
      if (listDone) {
        for (const e of ends) {
          const k = (kinds[e.kind] ??= kind({}));
          if (e.endMs <= t) {
            k.settled++;
            k.ms += e.endMs - e.startMs;
          } else k.pending++;
          if (e.startMs > t) waiting = true;
        }
      }
      const settled = Object.values(kinds).reduce((n, k) => n + k.settled, 0);
      const planned = 1 + (listDone ? order.length : 0);
      out.push({ atMs: t, eta: estimate(look(t, settled, planned, kinds, { busy: waiting })), truthMs: lastMs - t });
    }
    return out;
  }

  it('no figure before a pace is measured; a lower bound while a planner of a kind none has settled is pending', () => {
    const estimate = createEtaEstimator();
    const lists = (pending: number, settled: number) => ({ lists: kind({ planner: true, pending, settled, ms: settled * 900, planned: settled * 40 }) });
    expect(estimate(look(0, 0, 2, lists(2, 0)))).toBeUndefined();
    expect(estimate(look(1_000, 1, 42, lists(1, 1)))).toBeUndefined();
    // Catalogs of a kind none of which has settled yet: what they plan is unknown.
    const kinds = { ...lists(0, 2), pages: kind({ pending: 60, settled: 10, ms: 10 * 400 }), catalogs: kind({ planner: true, pending: 8, settled: 0 }) };
    const e = estimate(look(3_000, 12, 82, kinds))!;
    expect(e.lowerBound).toBe(true);
    expect(formatEta(e)).toMatch(/^ETA ≥\d+s$/);
  });

  it('a walk of heavy jobs, then light ones, four at once: the range holds the time in fact left, from the first figure on', () => {
    // Histories first (2 s each), then charts (200 ms each): a rate of jobs per second measured
    // on the histories would promise the charts four times too late.
    const looks = simulate({ slots: 4, listMs: 1_000, jobs: [{ kind: 'history', ms: 2_000, count: 24 }, { kind: 'chart', ms: 200, count: 96 }] });
    const shown = looks.filter((l) => l.eta !== undefined && !l.eta.lowerBound);
    expect(shown.length).toBeGreaterThan(20);
    const missed = shown.filter((l) => l.eta!.lowMs > l.truthMs + 500 || l.eta!.highMs < l.truthMs - 500).map((l) => `at ${l.atMs} ms: ${formatEta(l.eta)}, in fact ${l.truthMs} ms`);
    // Until a chart has settled, its time is the mean of all, give or take all of it: wide, not wrong.
    expect(missed).toEqual([]);
  });

  it('a steady walk: the range narrows as the jobs measured grow', () => {
    const looks = simulate({ slots: 4, listMs: 500, jobs: [{ kind: 'page', ms: 400, count: 200 }] });
    const widths = looks.filter((l) => l.eta && !l.eta.lowerBound && l.truthMs > 3_000).map((l) => (l.eta!.highMs - l.eta!.lowMs) / l.truthMs);
    expect(widths.length).toBeGreaterThan(10);
    expect(widths.at(-1)!).toBeLessThan(widths[0]!);
    const missed = looks.filter((l) => l.eta && !l.eta.lowerBound && (l.eta.lowMs > l.truthMs + 500 || l.eta.highMs < l.truthMs - 500));
    expect(missed.map((l) => `at ${l.atMs}: ${formatEta(l.eta)} vs ${l.truthMs}`)).toEqual([]);
  });

  it('the pace of the last WINDOW_MS, not of the whole walk: a machine that slowed down is not promised its old pace', () => {
    const estimate = createEtaEstimator();
    // Four at once, 250 ms a job, for 20 s (320 of 600 settled); then the machine is loaded: 1 s a job.
    let e: Eta | undefined;
    let settled = 0;
    let ms = 0;
    for (let t = 0; t <= 20_000; t += 500) {
      settled = (t / 250) * 4 * 0.5;
      ms = settled * 250;
      e = estimate(look(t, settled, 600, { page: kind({ pending: 600 - settled, settled, ms }) }));
    }
    for (let t = 20_500; t <= 20_000 + WINDOW_MS + 1_000; t += 500) {
      settled += 2;
      ms += 2 * 1_000;
      e = estimate(look(t, settled, 600, { page: kind({ pending: 600 - settled, settled, ms }) }));
    }
    // 600 - 388 = 212 left at 4 a second: 53 s, nothing like the 13 s the old pace would say.
    expect(e!.highMs).toBeGreaterThan(40_000);
  });

  it("the budget's pace is the floor: work that must wait for the rate limit's next windows is not promised sooner", () => {
    const estimate = createEtaEstimator();
    const pace: Pace = { ms: 60_000, lowerBound: false, bucket: 'gateway' };
    estimate(look(0, 0, 100, { page: kind({ pending: 100 }) }));
    const e = estimate(look(2_000, 20, 100, { page: kind({ pending: 80, settled: 20, ms: 20 * 400 }) }, { pace }))!;
    // 80 left at four a second is 20 s; the budget allows them in no less than 60 s.
    expect(e.lowMs).toBe(60_000);
    // No pace measured yet: no figure from a budget that holds nothing back yet; one that does
    // sets the pace, and the least it takes is said as a lower bound.
    expect(createEtaEstimator()(look(0, 0, 100, { page: kind({ pending: 100 }) }, { pace }))).toBeUndefined();
    expect(createEtaEstimator()(look(0, 0, 100, { page: kind({ pending: 100 }) }, { pace, held: true }))).toEqual({ ms: 60_000, lowMs: 60_000, highMs: 60_000, lowerBound: true });
  });

  it('nothing left: zero, known; what planners still plan', () => {
    expect(estimateEta([], look(5_000, 40, 40, { page: kind({ settled: 40, ms: 4000 }) }))).toEqual({ ms: 0, lowMs: 0, highMs: 0, lowerBound: false });
    expect(stillToPlan({ a: kind({ planner: true, pending: 2, settled: 4, planned: 12 }), b: kind({ planner: true }) })).toEqual({ expected: 6, error: 3, unknown: false });
    expect(workLeft({ a: kind({ pending: 2, settled: 4, ms: 400 }), b: kind({ pending: 1 }) })).toEqual({ ms: 2 * 100 + 100, error: 2 * 100 * 0.5 + 100, unknown: false });
  });
});
