import { describe, expect, it } from 'vitest';
import { scrub, serializeError } from '../../src/lib/logger.ts';
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

describe('errors in log lines', () => {
  it('are { type, message, code? } whatever was thrown', () => {
    expect(serializeError(new TypeError('bad'))).toEqual({ type: 'TypeError', message: 'bad' });
    expect(serializeError('Payload invalid: slug')).toEqual({ type: 'string', message: 'Payload invalid: slug' });
    expect(serializeError(null)).toEqual({ type: 'null', message: 'null' });
    expect(serializeError(undefined)).toEqual({ type: 'undefined', message: 'undefined' });
    expect(serializeError(42)).toEqual({ type: 'number', message: '42' });
    expect(serializeError({ name: 'Weird', message: 'thrown as a plain object', code: 7 })).toEqual({ type: 'Weird', message: 'thrown as a plain object', code: '7' });
    expect(serializeError({ status: 500 })).toEqual({ type: 'object', message: '{"status":500}' });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(serializeError(circular)).toEqual({ type: 'object', message: '[object Object]' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', errno: -111, address: '127.0.0.1' });
    expect(serializeError(refused)).toEqual({ type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' });
  });

  it('tell subclasses apart, follow causes, and read an AggregateError without a message', () => {
    class HostError extends Error {}
    expect(serializeError(new HostError('x')).type).toBe('HostError');
    expect(serializeError(new Error('outer', { cause: new Error('inner') })).message).toBe('outer: inner');
    const agg = Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:6390'), new Error('connect ECONNREFUSED 127.0.0.1:6390')], ''), { code: 'ECONNREFUSED' });
    expect(serializeError(agg)).toEqual({ type: 'AggregateError', message: 'connect ECONNREFUSED ::1:6390; connect ECONNREFUSED 127.0.0.1:6390', code: 'ECONNREFUSED' });
    expect(serializeError(new Error('e'), { stack: true }).stack).toContain('logger.test.ts');
  });

  it('are one object per error in the JSON lines, never one key per character, with secrets scrubbed', () => {
    const key = canaryKey('errs');
    for (const level of ['info', 'debug']) {
      const { logger, lines } = createTestLogger([key], level);
      logger.error({ err: `Payload invalid: ${key}` }, 'a string');
      logger.error({ err: { message: `object with ${key}`, code: 'E_ODD', apiKey: key } }, 'an object');
      logger.error({ err: null }, 'null');
      logger.error({ err: new Error(`message with ${key}`, { cause: new Error(`cause with ${key}`) }) }, 'an error');
      logger.error(Object.assign(new Error(`first argument ${key}`), { code: 'ECONNREFUSED', rawBody: `body ${key}` }), 'as the first argument');
      const parsed = lines().map((l) => JSON.parse(l) as { err: Record<string, unknown> });
      expect(parsed).toHaveLength(5);
      expect(parsed.map((p) => p.err.type)).toEqual(['string', 'object', 'null', 'Error', 'Error']);
      expect(parsed[0]!.err.message).toBe('Payload invalid: [REDACTED]');
      expect(parsed[1]!.err).toMatchObject({ message: 'object with [REDACTED]', code: 'E_ODD' });
      expect(parsed[3]!.err.message).toBe('message with [REDACTED]: cause with [REDACTED]');
      expect(parsed[4]!.err).toMatchObject({ message: 'first argument [REDACTED]', code: 'ECONNREFUSED' });
      for (const p of parsed) {
        expect(Object.keys(p.err).sort()).toEqual(level === 'debug' && p.err.type === 'Error' ? ['message', 'stack', 'type', ...(p.err.code ? ['code'] : [])].sort() : ['message', 'type', ...(p.err.code ? ['code'] : [])].sort());
        expect(p.err).not.toHaveProperty('0');
      }
      expect(lines().join('\n')).not.toContain(key);
      if (level === 'debug') expect(String(parsed[3]!.err.stack)).toContain('caused by: Error: cause with [REDACTED]');
    }
  });

  it('cut a long message to 1000 characters after scrubbing its secrets, so no start of a secret is left', () => {
    const key = canaryKey('cut');
    const { logger, lines } = createTestLogger([key], 'info');
    // The key straddles where the message is cut: cut before the scrub, its start would stay.
    logger.error({ err: new Error(`${'y'.repeat(960)}${key}\u0000${'z'.repeat(4000)}`) }, 'long');
    const message = String((JSON.parse(lines()[0]!) as { err: Record<string, unknown> }).err.message);
    expect(message.length).toBeLessThanOrEqual(1000);
    expect(message).toMatch(/^y{960}\[REDACTED\]\\u0000z*… \(\d+ more characters\)$/);
    expect(lines()[0]).not.toContain(key.slice(0, 12));
  });
});
