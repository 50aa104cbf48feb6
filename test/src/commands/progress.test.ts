import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressDisplay, describeWait } from '../../../src/commands/progress.ts';
import { emptyStats } from '../../../src/runner/stats.ts';
import type { BucketStatus } from '../../../src/upstream/index.ts';

const bucket = (over: Partial<BucketStatus>): BucketStatus => ({ bucket: 'gateway', mode: 'metered', remaining: 0, limit: 20, inFlight: 0, waiters: 3, waitingUntilMs: undefined, reason: undefined, ...over });

describe('progress', () => {
  it('names the bucket, the reason and the time left of the longest wait', () => {
    const now = 1_000_000;
    expect(describeWait([bucket({})], now)).toBe('');
    expect(describeWait([bucket({ waitingUntilMs: now + 2500, reason: 'Retry-After' }), bucket({ bucket: 'app-public', waitingUntilMs: now + 500, reason: 'budget spent' })], now)).toBe(
      ' | waiting 3s for gateway budget (Retry-After)',
    );
    expect(describeWait([bucket({ waitingUntilMs: now + 2500, waiters: 0 })], now)).toBe('');
  });

  it('draws resources done/planned, requests, failures and ETA', () => {
    let screen = '';
    const stream = Object.assign(new Writable({ write: (c, _e, cb) => ((screen += c.toString()), cb()) }), { isTTY: true, columns: 120, cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
    const display = createProgressDisplay(stream as unknown as NodeJS.WriteStream);
    const stats = { ...emptyStats(), planned: 40, done: 10, failed: 1 };
    display.update({ stats, requests: 17, buckets: [bucket({ waitingUntilMs: Date.now() + 4000, reason: 'window spent' })], elapsedMs: 1000 });
    display.stop();
    expect(screen).toContain('11/40 resources');
    expect(screen).toContain('17 requests');
    expect(screen).toContain('1 failed');
    expect(screen).toMatch(/waiting \ds for gateway budget \(window spent\)/);
    expect(screen).toContain('ETA');
  });
});
