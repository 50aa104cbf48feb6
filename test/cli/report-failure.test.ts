// What a command that failed prints: the error's own message, whatever the error carries.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reportFailure } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { createTestLogger } from '../helpers/services.ts';

describe('reportFailure', () => {
  afterEach(() => vi.restoreAllMocks());

  it("says the error's message when its code is a number (BullMQ's errors), exit 1", () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const err = Object.assign(new Error('Cannot create job scheduler iteration - job ID already exists'), { code: -10 });
    expect(reportFailure(err, loadConfig({}), createTestLogger().logger)).toBe(1);
    expect(written.join('')).toBe('tesync: error: Cannot create job scheduler iteration - job ID already exists\n');
  });

  it('a failed query: the driver\'s message on one line, never drizzle\'s with the parameters', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    // Shaped as drizzle's DrizzleQueryError (its message lists every parameter) around postgres.js's error.
    const cause = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { name: 'PostgresError', code: '22021' });
    const err = Object.assign(new Error(`Failed query: insert into t (a, b) values ($1, $2)\nparams: a\u0000b,param_canary${'x'.repeat(4000)}`), {
      query: 'insert into t (a, b) values ($1, $2)',
      params: ['a\u0000b', `param_canary${'x'.repeat(4000)}`],
      cause,
    });
    expect(reportFailure(err, loadConfig({}), createTestLogger().logger)).toBe(1);
    expect(written.join('')).toBe('tesync: error: invalid byte sequence for encoding "UTF8": 0x00\n');
  });

  it('a long message is cut after its secrets are scrubbed, and shown on one line without control characters', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const key = 'te_key_0123456789abcdef0123456789';
    const config = loadConfig({ TE_APP_URL: 'http://127.0.0.1:9', TE_APP_API_KEY: key });
    // The key straddles where the line is cut: cut first, its start would be left unscrubbed.
    expect(reportFailure(new Error(`${'y'.repeat(450)}${key}\u001b[2J${'z'.repeat(4000)}`), config, createTestLogger().logger)).toBe(1);
    const line = written.join('');
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toContain('\n');
    expect(line).not.toContain(key.slice(0, 10));
    expect(line).not.toContain('\u001b');
    expect(line.length).toBeLessThanOrEqual('tesync: error: \n'.length + 500);
    expect(line).toMatch(/^tesync: error: y+\[REDACTED\]\\u001b\[2Jz*… \(\d+ more characters\)\n$/);
  });

  it("a parseArgs error is a usage error, exit 2", () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const err = Object.assign(new TypeError("Unknown option '--nope'"), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
    expect(reportFailure(err, loadConfig({}), createTestLogger().logger)).toBe(2);
  });
});
