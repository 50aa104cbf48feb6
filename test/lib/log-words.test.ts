// Log lines in words, for a person at a terminal beside a progress line: what pino would have
// written as JSON, said as a sentence, secrets still scrubbed.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logLineInWords, redirectLogger, type Logger } from '../../src/lib/logger.ts';
import { canaryKey } from '../helpers/services.ts';

const line = (o: Record<string, unknown>) => JSON.stringify({ level: 40, time: 1795758326723, pid: 8400, ...o });

/** A root logger whose own lines are kept apart, and a child of it redirected to `words`. */
function redirected(secrets: string[], rootLevel = 'info', level = 'warn'): { root: Logger; child: Logger; rootLines: string[]; words: string[] } {
  const rootLines: string[] = [];
  const root = createLogger({ level: rootLevel, secrets, destination: new Writable({ write: (c: Buffer, _e, cb) => (rootLines.push(c.toString()), cb()) }) });
  const words: string[] = [];
  const child = redirectLogger(root, { write: (s: string) => void words.push(logLineInWords(s)) }, level);
  return { root, child, rootLines, words };
}

describe('logLineInWords', () => {
  it('says a retried request: the message, the cause, then the attempt and the wait', () => {
    const retry = line({
      path: '/v1/tokens/cobalt-dex/charts',
      attempt: 2,
      err: { type: 'UpstreamServerError', message: 'GET /v1/tokens/cobalt-dex/charts failed with 503 unavailable: Service Unavailable (request id sim-80-15)', code: 'unavailable' },
      delayMs: 274,
      msg: 'upstream request failed; retrying',
    });
    expect(logLineInWords(retry)).toBe(
      'warning: upstream request failed; retrying: GET /v1/tokens/cobalt-dex/charts failed with 503 unavailable: Service Unavailable (request id sim-80-15) (attempt 2, next try in 274 ms)',
    );
  });

  it('names the resource and its job as the run summary does, unless the message names them', () => {
    const failed = line({ runId: 'r1', job: 'app.history', resource: 'token/foo/history', ms: 1234, status: 'failed', error: 'upstream answered 503', type: 'upstream', code: 'unavailable', httpStatus: 503, msg: 'job failed' });
    expect(logLineInWords(failed)).toBe('warning: job failed: token/foo/history (app.history): upstream answered 503 (after 1.2 s, code unavailable)');
    const again = line({ runId: 'r1', job: 'gateway.page', resource: 'token/basalt/page', attempt: 2, err: { type: 'UpstreamServerError', message: 'GET /v1/tokens/basalt failed with 500' }, msg: 'job failed; trying again' });
    expect(logLineInWords(again)).toBe('warning: job failed; trying again: token/basalt/page (gateway.page): GET /v1/tokens/basalt failed with 500 (attempt 2)');
    const drift = line({ job: 'app.screener', resource: 'screener', source: 'app', kind: 'app.screener', added: ['effectiveRatio.methodologyVersion'], msg: 'schema drift: app.screener fields added' });
    expect(logLineInWords(drift)).toBe('warning: schema drift: app.screener fields added (added effectiveRatio.methodologyVersion)');
  });

  it('leaves out what the message says already, and what is for machines', () => {
    const rebound = line({ source: 'app', from: 'http://a.example', to: 'http://b.example', msg: 'rebound the app source of this warehouse (--force): from http://a.example to http://b.example' });
    expect(logLineInWords(rebound)).toBe('warning: rebound the app source of this warehouse (--force): from http://a.example to http://b.example');
    expect(logLineInWords(line({ level: 30, hostname: 'h', runs: 2, msg: 'closed runs' }))).toBe('closed runs (runs 2)');
    expect(logLineInWords(line({ level: 50, err: { type: 'Error', message: 'connect failed', code: 'ECONNREFUSED' }, msg: 'metrics collection failed' }))).toBe(
      'error: metrics collection failed: connect failed (code ECONNREFUSED)',
    );
    const many = logLineInWords(line({ unmatched: ['a', 'b', 'c', 'd', 'e', 'f', 'g'], detail: { deep: { x: 'y'.repeat(200) } }, msg: 'rows kept' }));
    expect(many).toMatch(/^warning: rows kept \(unmatched a, b, c, d, e and 2 more, detail \{"deep":\{"x":"y+…\)$/);
  });

  it('one line, no terminal escapes; a line that is not JSON as it came', () => {
    expect(logLineInWords(line({ level: 50, msg: 'bad \u001b[31mred\u001b[0m\r\nsecond line\ttab' }))).toBe('error: bad red second line tab');
    expect(logLineInWords('not json\n')).toBe('not json');
    expect(logLineInWords('[1,2]\n')).toBe('[1,2]');
  });
});

describe('redirectLogger', () => {
  it('scrubs secrets before the words: a key given to the logger never reaches the screen', () => {
    const key = canaryKey('words');
    const { child, words } = redirected([key]);
    child.warn({ err: new Error(`upstream refused ${key}`), url: `https://x.example/p?key=${encodeURIComponent(key)}`, headers: { authorization: `Bearer ${key}` } }, `request with ${key} failed`);
    child.error({ apiKey: key, note: 'Bearer not-a-told-secret-123' }, 'other');
    expect(words).toHaveLength(2);
    const screen = words.join('\n');
    expect(screen).not.toContain(key);
    expect(screen).not.toContain(encodeURIComponent(key));
    expect(screen).not.toContain('not-a-told-secret-123');
    expect(screen).toContain('[REDACTED]');
    expect(words[0]).toMatch(/^warning: request with \[REDACTED\] failed: upstream refused \[REDACTED\]/);
    expect(screen).not.toContain('{"level"');
  });

  it("writes only to its own destination, at its level, never below the base's", () => {
    const info = redirected([], 'info');
    info.child.info('chatty');
    info.child.warn('said');
    info.child.child({ job: 'app.tokens' }).warn('from a child of it');
    info.root.warn('the root still writes JSON where it did');
    expect(info.words).toEqual(['warning: said', 'warning: from a child of it: app.tokens']);
    expect(info.rootLines).toHaveLength(1);
    expect(JSON.parse(info.rootLines[0]!)).toMatchObject({ level: 40, msg: 'the root still writes JSON where it did' });
    // LOG_LEVEL=error: a warning beside the progress line stays unsaid.
    const quiet = redirected([], 'error');
    quiet.child.warn('not said');
    quiet.child.error('said');
    expect(quiet.words).toEqual(['error: said']);
  });
});
