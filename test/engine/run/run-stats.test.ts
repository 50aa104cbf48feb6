import { describe, expect, it } from 'vitest';
import { runStatus } from '../../../src/engine/run/run-stats.ts';
import { emptyStats } from '../../../src/ports/run-ledger.ts';

describe('runStatus', () => {
  it('is partial when a resource was written with cells it could not read, not only when one failed', () => {
    const s = { ...emptyStats(), planned: 2, done: 2, byGroup: { 'app.history': { ok: 2 } } };
    expect(runStatus(s)).toBe('succeeded');
    expect(runStatus({ ...s, byGroup: { 'app.history': { ok: 1, partial: 1 } } })).toBe('partial');
    expect(runStatus({ ...s, done: 1, failed: 1 })).toBe('partial');
    expect(runStatus({ ...s, done: 0, failed: 2 })).toBe('failed');
  });
});
