// `tesync status` text: failing resources counted by cause, from the failure columns.
import { describe, expect, it } from 'vitest';
import { formatCause, formatStatus } from '../../../src/commands/status.ts';
import type { GroupStatus } from '../../../src/warehouse/status.ts';

const now = new Date('2026-11-24T12:00:00Z');
const group = (over: Partial<GroupStatus>): GroupStatus => ({
  source: 'gateway',
  group: 'charts',
  resources: 5,
  ok: 2,
  failing: 3,
  lastSuccessAt: new Date('2026-11-24T11:00:00Z'),
  oldestVerifiedAt: new Date('2026-11-24T10:00:00Z'),
  rows: 100,
  statuses: { ok: 2, failed: 3 },
  failures: [],
  lastError: null,
  ...over,
});

describe('formatStatus', () => {
  it('lists each failing group by cause under the table', () => {
    const g = group({
      failures: [
        { status: 'failed', type: 'ProblemError', code: 'missing_scope', httpStatus: 403, resources: 2 },
        { status: 'failed', type: 'UpstreamTimeoutError', code: null, httpStatus: null, resources: 1 },
      ],
      lastError: 'ProblemError: GET /v1/x failed with 403 missing_scope',
    });
    const text = formatStatus('postgres://db', [g, group({ source: 'app', group: 'tokens', failing: 0, statuses: { ok: 5 } })], [], now);
    expect(text).toMatch(/source\s+group\s+resources\s+last success/);
    expect(text).toContain('Failing resources by cause:\n  gateway.charts: 2 failed ProblemError 403 missing_scope, 1 failed UpstreamTimeoutError\n');
    expect(text).not.toContain('app.tokens:');
  });

  it('says nothing of causes when nothing fails', () => {
    expect(formatStatus('postgres://db', [group({ failing: 0, statuses: { ok: 5 } })], [], now)).not.toContain('by cause');
  });

  it('a failure recorded before the columns existed still counts', () => {
    expect(formatCause({ status: 'invalid', type: null, code: null, httpStatus: null, resources: 4 })).toBe('4 invalid unknown error');
  });
});
