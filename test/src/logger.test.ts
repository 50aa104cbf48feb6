import { describe, expect, it } from 'vitest';
import { scrub } from '../../src/logger.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

describe('redaction', () => {
  it('removes a secret wherever it appears in a log line', () => {
    const key = canaryKey('logger');
    const { logger, lines } = createTestLogger([key]);
    logger.info({ headers: { authorization: `Bearer ${key}` } }, 'headers');
    logger.info({ url: `https://x.example.com/p?key=${encodeURIComponent(key)}` }, 'in a url');
    logger.error({ err: new Error(`upstream said ${key} is bad`) }, 'in an error message');
    logger.info({ nested: { deep: { apiKey: key, text: `x${key}y` } } }, `in the message ${key}`);
    const all = lines().join('\n');
    expect(lines()).toHaveLength(4);
    expect(all).not.toContain(key);
    expect(all).toContain('[REDACTED]');
  });

  it('redacts Bearer credentials it was not told about', () => {
    expect(scrub('Authorization: Bearer abc.DEF-123_xyz', [])).toBe('Authorization: Bearer [REDACTED]');
  });

  it('hides stack traces unless the level is debug', () => {
    const info = createTestLogger([], 'info');
    info.logger.error({ err: new Error('boom') }, 'failed');
    expect(info.lines()[0]).not.toContain('"stack"');
    const debug = createTestLogger([], 'debug');
    debug.logger.error({ err: new Error('boom') }, 'failed');
    expect(debug.lines()[0]).toContain('"stack"');
  });
});
