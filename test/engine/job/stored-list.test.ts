// Which failures of a list still plan its children (walksOnBelow), and that children planned
// from a stored list carry no marker (unvouched): pure.
import { describe, expect, it } from 'vitest';
import { unvouched } from '../../../src/engine/job/fan-out.ts';
import { walksOnBelow } from '../../../src/engine/job/stored-list.ts';

describe('walksOnBelow', () => {
  it.each([
    ['a refused (invalid) answer', { status: 'invalid' as const }, true],
    ['a 500 that outlived its retries', { status: 'failed' as const, httpStatus: 500 }, true],
    ['a 503', { status: 'failed' as const, httpStatus: 503 }, true],
    ['a bucket held too long', { status: 'rate_limited' as const }, true],
    ['upstream saying it does not exist', { status: 'not_found' as const, httpStatus: 404, answered: true }, false],
    ['a key refused (401)', { status: 'failed' as const, httpStatus: 401 }, false],
    ['a 400', { status: 'failed' as const, httpStatus: 400 }, false],
    ['no answer at all (connection refused, timeout)', { status: 'failed' as const }, false],
  ])('%s: %s', (_name, failure, expected) => {
    expect(walksOnBelow(failure)).toBe(expected);
  });
});

describe('unvouched', () => {
  it('takes the marker out of every payload that has one, and leaves the rest as it is', () => {
    const out = unvouched([
      { name: 'app.snapshot', payload: { slug: 'a', marker: 'm1' } },
      { name: 'gateway.history', payload: { slug: 'b', marker: 'm2', period: '365d' } },
      { name: 'app.screener', payload: {} },
      { name: 'odd', payload: null },
    ]);
    expect(out).toEqual([
      { name: 'app.snapshot', payload: { slug: 'a' } },
      { name: 'gateway.history', payload: { slug: 'b', period: '365d' } },
      { name: 'app.screener', payload: {} },
      { name: 'odd', payload: null },
    ]);
  });
});
