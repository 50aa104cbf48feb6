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

  it("a parseArgs error is a usage error, exit 2", () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const err = Object.assign(new TypeError("Unknown option '--nope'"), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
    expect(reportFailure(err, loadConfig({}), createTestLogger().logger)).toBe(2);
  });
});
