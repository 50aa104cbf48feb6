// The incremental rules (engine/kit/incremental.ts), pure: where a request starts, when the
// resource is fetched whole, and the cursor kept.
import { describe, expect, it } from 'vitest';
import { nextCursor, startDay, wholeFetchDue, type Incremental } from '../../../src/engine/kit/incremental.ts';
import type { SyncSettings } from '../../../src/engine/kit/types.ts';

const DAY = 86_400_000;
const inc: Incremental = { param: () => 'from', lagMs: () => 3 * DAY, wholeEveryMs: () => 7 * DAY, refusedCodes: ['invalid_date'] };
const settings = { full: false } as SyncSettings;
const now = new Date('2026-11-20T12:00:00Z');

describe('incremental', () => {
  it('starts the lag before the newest day seen, as a UTC day', () => {
    expect(startDay(inc, { lastTs: '2026-11-19T00:00:00Z', lastFullAt: '2026-11-18T00:00:00Z' }, settings, now)).toBe('2026-11-16');
  });

  it('asks whole the first time, on a full sync, and once the last whole fetch is older than its period', () => {
    expect(startDay(inc, {}, settings, now)).toBeNull();
    expect(startDay(inc, { lastTs: '2026-11-19T00:00:00Z', lastFullAt: '2026-11-18T00:00:00Z' }, { full: true } as SyncSettings, now)).toBeNull();
    expect(wholeFetchDue(inc, { lastFullAt: '2026-11-13T11:59:59Z' }, settings, now)).toBe(true);
    expect(wholeFetchDue(inc, { lastFullAt: '2026-11-13T12:00:01Z' }, settings, now)).toBe(false);
    expect(startDay(inc, { lastTs: '2026-11-19T00:00:00Z', lastFullAt: '2026-11-01T00:00:00Z' }, settings, now)).toBeNull();
  });

  it('keeps the newest time read, or the last one, and moves the whole-fetch time only on a whole fetch', () => {
    const prev = { lastTs: '2026-11-19T00:00:00.000Z', lastFullAt: '2026-11-18T00:00:00.000Z' };
    expect(nextCursor(prev, new Date('2026-11-20T00:00:00Z'), true, now)).toEqual({ lastTs: '2026-11-20T00:00:00.000Z', lastFullAt: prev.lastFullAt });
    expect(nextCursor(prev, null, false, now)).toEqual({ lastTs: prev.lastTs, lastFullAt: now.toISOString() });
    expect(nextCursor({}, null, false, now)).toEqual({ lastTs: undefined, lastFullAt: now.toISOString() });
  });
});
