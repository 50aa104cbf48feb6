// The columns every handler's rows share (src/engine/kit/rows.ts), pure: rowMeta's defaults and
// run id (never a fetch time), the UTC day of a moment, and the freshness verdicts counted.
import { describe, expect, it } from 'vitest';
import { rowMeta, utcDate, verdictCounts } from '../../../src/engine/kit/rows.ts';
import type { JobContext } from '../../../src/engine/kit/types.ts';

// rowMeta reads the run id only.
const ctx = { runId: '6f1c1f6e-0000-4000-8000-000000000001' } as JobContext;

describe('rowMeta', () => {
  it('an ok row of this run, with no asOf or freshness, and no fetched_at (the server sets it)', () => {
    expect(rowMeta(ctx)).toEqual({ asOf: null, freshness: null, status: 'ok', runId: ctx.runId });
    expect(rowMeta(ctx, { asOf: null, freshness: null })).toEqual(rowMeta(ctx));
  });

  it('takes what the response says of the row', () => {
    const asOf = new Date('2026-06-30T12:00:00Z');
    expect(rowMeta(ctx, { asOf, freshness: 'stale', status: 'missing' })).toEqual({ asOf, freshness: 'stale', status: 'missing', runId: ctx.runId });
  });
});

describe('utcDate', () => {
  it('is the UTC calendar day, whatever the offset the moment was given in', () => {
    expect(utcDate(new Date('2026-07-01T01:30:00+02:00'))).toBe('2026-06-30');
    expect(utcDate(new Date('2026-06-30T23:59:59.999Z'))).toBe('2026-06-30');
    expect(utcDate(new Date('2026-06-30T20:00:00-05:00'))).toBe('2026-07-01');
  });
});

describe('verdictCounts', () => {
  it('counts each verdict the rows carry', () => {
    expect(verdictCounts(['fresh', 'fresh', 'stale', null, undefined, 'fresh'])).toEqual({ fresh: 3, stale: 1 });
    expect(verdictCounts(['not_materialized', 'out-of-date'])).toEqual({ not_materialized: 1, 'out-of-date': 1 });
  });

  it('ignores what is not a one-word verdict, and is null when no row carries one', () => {
    expect(verdictCounts(['fresh', '', 'very stale', '{"status":"x"}', 'stale2'])).toEqual({ fresh: 1 });
    expect(verdictCounts([null, undefined, ''])).toBeNull();
    expect(verdictCounts([])).toBeNull();
  });
});
