import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { budgetPace, createProgressDisplay, describeWait, fitLine, formatRate, phaseLine, progressLine, withLearnedLimits, type ProgressView } from '../../src/cli/progress.ts';
import { displayWidth } from '../../src/lib/display-width.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { canaryKey } from '../helpers/services.ts';
import type { LiveProgress } from '../../src/cli/sync-session.ts';
import { emptyStats } from '../../src/ports/run-ledger.ts';
import { RESERVE_REASON } from '../../src/upstream/budget/budget-state.ts';
import type { BucketStatus } from '../../src/upstream/index.ts';

const bucket = (over: Partial<BucketStatus>): BucketStatus => ({
  bucket: 'gateway',
  mode: 'metered',
  remaining: 0,
  limit: 20,
  inFlight: 0,
  waiters: 3,
  waitingUntilMs: undefined,
  reason: undefined,
  windowMs: 10_000,
  windowKnown: true,
  cycleMs: 11_000,
  refillInMs: 4_000,
  ...over,
});

describe('progress', () => {
  it('says the longest wait in plain words: the host, its limit, the time left', () => {
    const now = 1_000_000;
    expect(describeWait([bucket({})], now)).toBeUndefined();
    const spent = describeWait(
      [
        bucket({ waitingUntilMs: now + 11_500, reason: 'budget exhausted until the learned window ends', bucket: 'app-public', limit: 300, windowMs: 60_000 }),
        bucket({ waitingUntilMs: now + 500, reason: 'budget exhausted until reset' }),
      ],
      now,
    );
    expect(spent).toEqual({ long: 'waiting 12 s: app host rate limit (300/min)', short: 'wait 12s: app limit 300/min' });
    expect(describeWait([bucket({ waitingUntilMs: now + 2500, reason: 'retry-after' })], now)?.long).toBe('waiting 3 s: gateway asked us to wait (429)');
    expect(describeWait([bucket({ waitingUntilMs: now + 2500, reason: RESERVE_REASON, bucket: 'app-key', limit: 30, windowKnown: false })], now)?.long).toBe(
      'waiting 3 s: app host (API key) rate limit (30 per window) nearly used',
    );
    expect(describeWait([bucket({ reason: 'probing the budget', bucket: 'app-public' })], now)?.long).toBe('waiting: learning the app host rate limit');
    // Nobody waits on it: nothing to say.
    expect(describeWait([bucket({ waitingUntilMs: now + 2500, waiters: 0, reason: 'retry-after' })], now)).toBeUndefined();
  });

  it('no internal words', () => {
    const now = 1_000_000;
    for (const reason of ['budget exhausted until reset', 'budget exhausted until the learned window ends', 'budget exhausted, reset unknown', RESERVE_REASON, 'retry-after', 'probing the budget']) {
      const w = describeWait([bucket({ waitingUntilMs: now + 2000, reason })], now)!;
      expect(`${w.long} ${w.short}`).not.toMatch(/learned window|reserve|exhausted|budget|retry-after/i);
    }
  });

  it('rates read as people write them', () => {
    expect(formatRate(300, 60_000, true)).toBe('300/min');
    expect(formatRate(30, 10_000, true)).toBe('30/10s');
    // Measured from whole-second reset headers: the common length it is so close to.
    expect(formatRate(30, 10_900, true)).toBe('30/10s');
    expect(formatRate(30, 11_600, true)).toBe('30/10s');
    expect(formatRate(300, 59_200, true)).toBe('300/min');
    expect(formatRate(30, 45_000, true)).toBe('30/45s');
    expect(formatRate(8, 3_400, true)).toBe('8/3s');
    expect(formatRate(1000, 3_600_000, true)).toBe('1000/h');
    expect(formatRate(600, 300_000, true)).toBe('600/5min');
    expect(formatRate(5, 1_000, true)).toBe('5/s');
    expect(formatRate(30, 10_000, false)).toBe('30 per window');
    expect(formatRate(undefined, 10_000, true)).toBeUndefined();
  });

  it('fits the terminal: ETA and wait first, the rest left out whole, least important first', () => {
    const v: ProgressView = {
      done: 1234,
      planned: 20_345,
      failed: 17,
      requests: 123_456,
      eta: { ms: 5_000_000, lowMs: 5_000_000, highMs: 7_000_000, lowerBound: true },
      wait: { long: 'waiting 59 s: app host (API key) rate limit (30 per window) nearly used', short: 'wait 59s: app key limit nearly used' },
    };
    for (const columns of [60, 80, 100, 200]) {
      const line = progressLine(v, columns);
      expect(line.length).toBeLessThan(columns);
      expect(line).toContain('ETA ≥1h23m');
      expect(line).toMatch(/wait(ing)? 59 ?s: app/);
    }
    const at80 = progressLine({ ...v, wait: { long: 'waiting 12 s: app host rate limit (300/min)', short: 'wait 12s: app limit 300/min' } }, 80);
    expect(at80).toBe('1234/20345 | ETA ≥1h23m | waiting 12 s: app host rate limit (300/min)');
    expect(progressLine({ ...v, done: 66, planned: 129, wait: { long: 'waiting 12 s: app host rate limit (300/min)', short: '' } }, 80)).toBe(
      '66/129 | ETA ≥1h23m | waiting 12 s: app host rate limit (300/min) | 17 failed',
    );
    // Room to spare: a bar, and every part.
    const wide = progressLine({ ...v, wait: undefined }, 120);
    expect(wide).toMatch(/^[█░]{12,24} 1234\/20345 done \| ETA ≥1h23m \| 17 failed \| 123456 requests$/);
    expect(phaseLine('opening the warehouse', 3_200, 80)).toBe('opening the warehouse… 3s');
  });

  it("the ETA's floor: the work still queued per bucket at each budget's pace", () => {
    const p: Pick<LiveProgress, 'pending' | 'buckets' | 'requestTimes'> = {
      pending: { byBucket: { 'app-public': { queued: 55, active: 5 }, gateway: { queued: 0, active: 1 } }, planners: 1, kinds: {}, concurrency: 4 },
      buckets: [bucket({ bucket: 'app-public', remaining: 0, limit: 30, cycleMs: 11_000, refillInMs: 3_000 }), bucket({ remaining: 10 })],
      requestTimes: { 'app-public': { count: 10, ms: 1000 } },
    };
    // 60 at 30 per 11 s from a refill in 3 s; a token list still plans more.
    expect(budgetPace(p)).toEqual({ ms: 3_000 + 11_000, lowerBound: true, bucket: 'app-public' });
    expect(budgetPace({ ...p, pending: { ...p.pending, planners: 0 } })?.lowerBound).toBe(false);
  });

  it('a host that sends no limit: the highest count left it answered, plus one', () => {
    const app = bucket({ bucket: 'app-public', limit: undefined, remaining: 3, windowKnown: false });
    expect(withLearnedLimits([app, bucket({})], { 'app-public': { count: 9, ms: 900, maxRemaining: 29 } }).map((b) => b.limit)).toEqual([30, 20]);
    expect(withLearnedLimits([app], {})[0]!.limit).toBeUndefined();
  });

  it('fits a line by terminal columns: a wide character is never cut in half, the line never overflows', () => {
    const cjk = 'running: トークンの履歴を取得しています 12/40 done';
    for (const columns of [21, 22, 23, 30, 40]) {
      const fitted = fitLine(cjk, columns);
      expect(displayWidth(fitted), `${columns}: ${fitted}`).toBeLessThanOrEqual(columns - 1);
      expect(fitted.endsWith('…')).toBe(true);
      // What is kept is a start of the line, whole characters only.
      expect(cjk.startsWith(fitted.slice(0, -1))).toBe(true);
    }
    expect(fitLine('waiting for 👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻', 24)).toBe('waiting for 👩‍💻👩‍💻👩‍💻👩‍💻👩‍💻…');
    expect(fitLine('short 日本', 80)).toBe('short 日本');
    expect(displayWidth(phaseLine('トークンを数えています'.repeat(5), 1000, 40))).toBeLessThanOrEqual(39);
  });

  it('a log line beside the progress line: printed above it, in words, never JSON glued onto it', () => {
    let screen = '';
    const stream = Object.assign(new Writable({ write: (c, _e, cb) => ((screen += c.toString()), cb()) }), { isTTY: true, columns: 80 });
    const key = canaryKey('progress');
    const base = createLogger({ level: 'info', secrets: [key], destination: new Writable({ write: (_c, _e, cb) => cb() }) });
    const display = createProgressDisplay(stream as unknown as NodeJS.WriteStream);
    const logger = display.logger(base).child({ runId: 'r1' });
    display.update({
      stats: { ...emptyStats(), planned: 40, done: 10 },
      requests: 13,
      buckets: [],
      elapsedMs: 1000,
      pending: { byBucket: {}, planners: 0, kinds: {}, concurrency: 4 },
      requestTimes: {},
    });
    logger.info('job done');
    logger.child({ job: 'app.history', resource: 'token/foo/history' }).warn({ attempt: 2, err: new Error(`upstream answered 503 for key ${key}`) }, 'job failed; trying again');
    const before = screen;
    display.stop();
    expect(screen).not.toContain('{"level"');
    expect(screen).not.toContain('job done');
    expect(screen).not.toContain(key);
    // Cleared the progress line, printed the warning (broken between words within the columns,
    // not by the terminal mid-word), drew the progress line again.
    const warning = 'tesync: warning: job failed; trying again: token/foo/history (app.history):\n  upstream answered 503 for key [REDACTED] (attempt 2)\n';
    expect(before).toContain(`\r\x1b[K${warning}\r`);
    const redrawn = before.slice(before.indexOf(warning) + warning.length);
    expect(redrawn).toMatch(/^\r[█░]* ?10\/40 done \| ETA .* \| 13 requests\x1b\[K$/);
  });

  it('draws from the first moment, then the walk, within the columns', () => {
    let screen = '';
    const stream = Object.assign(new Writable({ write: (c, _e, cb) => ((screen += c.toString()), cb()) }), { isTTY: true, columns: 80 });
    const display = createProgressDisplay(stream as unknown as NodeJS.WriteStream);
    display.phase('opening the warehouse');
    expect(screen).toContain('opening the warehouse… 0s');
    const stats = { ...emptyStats(), planned: 40, done: 10, failed: 1 };
    display.update({
      stats,
      requests: 17,
      buckets: [bucket({ waitingUntilMs: Date.now() + 4000, reason: 'budget exhausted until reset' })],
      elapsedMs: 1000,
      pending: { byBucket: { gateway: { queued: 29, active: 0 } }, planners: 0, kinds: {}, concurrency: 4 },
      requestTimes: {},
    });
    const walking = screen.split('\r').at(-1)!.replace('\x1b[K', '');
    expect(walking.length).toBeLessThan(80);
    expect(walking).toContain('11/40 done');
    // No pace measured yet, the budget holding the walk: the least it allows, as a lower bound.
    expect(walking).toContain('ETA ≥15s');
    expect(walking).toMatch(/waiting \d s: gateway rate limit \(20\/10s\)/);
    expect(walking).toContain('1 failed');
    display.stop();
    // The line kept below the walk: what it did, no ETA (nor a wait) of a walk that has stopped.
    const last = screen.split('\r').at(-1)!.replace('\x1b[K\n', '');
    expect(last).toMatch(/^[█░]* ?11\/40 done \| 1 failed \| 17 requests$/);
  });

  it('nothing left to fetch: the run is closing, not `ETA 0s`; the line kept has the counts alone', () => {
    let screen = '';
    const stream = Object.assign(new Writable({ write: (c, _e, cb) => ((screen += c.toString()), cb()) }), { isTTY: true, columns: 80 });
    const display = createProgressDisplay(stream as unknown as NodeJS.WriteStream);
    display.update({ stats: { ...emptyStats(), planned: 40, done: 40 }, requests: 41, buckets: [], elapsedMs: 9000, pending: { byBucket: { gateway: { queued: 0, active: 0 } }, planners: 0, kinds: {}, concurrency: 4 }, requestTimes: {} });
    expect(screen.split('\r').at(-1)).toMatch(/40\/40 done \| closing the run… \| 41 requests/);
    display.stop();
    expect(screen.split('\r').at(-1)).toMatch(/^[█░]* ?40\/40 done \| 41 requests\x1b\[K\n$/);
  });
});
