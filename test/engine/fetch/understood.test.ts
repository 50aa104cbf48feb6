// refuse (src/engine/fetch/understood.ts), without IO: it refuses what the job read since the last
// refusal, every body kept `invalid` and the reason logged once, with the last body's text on
// the error; with nothing read since, the reason alone.
import { describe, expect, it } from 'vitest';
import { TryFindings } from '../../../src/engine/fetch/findings.ts';
import type { JobContext } from '../../../src/engine/kit/types.ts';
import { refuse } from '../../../src/engine/fetch/understood.ts';
import { InvalidResponseError, NotUnderstoodError } from '../../../src/lib/errors.ts';
import type { UpstreamResponse } from '../../../src/upstream/request.ts';
import { createTestLogger } from '../../helpers/services.ts';

const response = (path: string, text: string): UpstreamResponse => ({ status: 200, notModified: false, path, body: JSON.parse(text), text, sha256: `sha-${path}`, headers: { 'content-type': 'application/json' } });

function context() {
  const log = createTestLogger([], 'info');
  // refuse uses the findings, the logger and the run id; nothing here reaches a server.
  const ctx = { findings: new TryFindings(), logger: log.logger, runId: '6f1c1f6e-0000-4000-8000-000000000002' } as JobContext;
  const warnings = () => log.lines().filter((l) => l.includes('"level":40'));
  return { ctx, warnings };
}

describe('refuse', () => {
  it('keeps every body read since the last refusal invalid, logs once, and carries the last body', () => {
    const { ctx, warnings } = context();
    const a = response('/api/v1/tokens?page=1', '{"data":[1]}');
    const b = response('/api/v1/tokens?page=2', '{"data":[2]}');
    ctx.findings.received({ route: 'app.tokens', response: a });
    ctx.findings.received({ route: 'app.tokens', response: b });
    const err = refuse(ctx, 'two rows for one key');
    expect(err).toBeInstanceOf(NotUnderstoodError);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toBe('/api/v1/tokens?page=2: not understood: two rows for one key');
    expect(err.rawBody).toBe(b.text);
    expect(ctx.findings.refused).toEqual([
      { source: 'app', runId: ctx.runId, path: a.path, httpStatus: 200, contentType: 'application/json', text: a.text },
      { source: 'app', runId: ctx.runId, path: b.path, httpStatus: 200, contentType: 'application/json', text: b.text },
    ]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toContain('two rows for one key');
    // Judged: they are not refused again.
    expect(ctx.findings.takeReceived()).toEqual([]);
  });

  it('with nothing read since the last refusal, refuses the reason alone and keeps no body', () => {
    const { ctx, warnings } = context();
    ctx.findings.received({ route: 'gateway.screener', response: response('/v1/screener', '{"data":[]}') });
    refuse(ctx, 'first');
    const err = refuse(ctx, 'second');
    expect(err).toBeInstanceOf(NotUnderstoodError);
    expect(err.message).toBe('second');
    expect(err.rawBody).toBeUndefined();
    expect(ctx.findings.refused.map((r) => [r.source, r.path])).toEqual([['gateway', '/v1/screener']]);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toContain('rows refused: not understood');
  });
});
