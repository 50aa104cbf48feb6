// recordable: whatever an error said, text Postgres can hold and a person can read, short.
import { describe, expect, it } from 'vitest';
import { errorLine, errorMessage, isQueryError, MESSAGE_CHARS, recordable, recordableJson, reportedError } from '../../src/lib/recordable.ts';

/** True when `s` holds U+0000 or a surrogate not part of a pair. */
const unrecordable = (s: string) => /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

describe('recordable', () => {
  it('shows U+0000 and other C0 controls as visible escapes; keeps tab and newline', () => {
    expect(recordable('a\u0000b')).toBe('a\\u0000b');
    expect(recordable('bell\u0007 esc\u001b[31m cr\r')).toBe('bell\\u0007 esc\\u001b[31m cr\\u000d');
    expect(recordable('tab\there\nnext line')).toBe('tab\there\nnext line');
    expect(recordable('plain text, é and € and 中文')).toBe('plain text, é and € and 中文');
  });

  it('escapes an unpaired surrogate of either half, and keeps a pair', () => {
    expect(recordable('x\ud83dy')).toBe('x\\ud83dy');
    expect(recordable('x\ude00y')).toBe('x\\ude00y');
    expect(recordable('\ude00\ud83d')).toBe('\\ude00\\ud83d');
    expect(recordable('end\ud800')).toBe('end\\ud800');
    expect(recordable('ok 😀 ok')).toBe('ok 😀 ok');
    // The low half first, then a pair: the lone one escaped, the pair kept.
    expect(recordable('\ude00\ud83d\ude00')).toBe('\\ude00😀');
    for (const s of ['x\ud83dy', 'x\ude00y', '\ude00\ud83d\ude00', 'a\u0000b']) expect(unrecordable(recordable(s))).toBe(false);
  });

  it('cuts 4 KB to at most max characters, saying how many were left out', () => {
    const long = `${'0123456789'.repeat(400)}!`;
    const out = recordable(long);
    expect(out.length).toBeLessThanOrEqual(MESSAGE_CHARS);
    expect(out.length).toBeGreaterThan(MESSAGE_CHARS - 10);
    const m = /^(0123456789)+\d*… \((\d+) more characters\)$/.exec(out);
    expect(m).not.toBeNull();
    const kept = out.indexOf('…');
    expect(Number(m![2])).toBe(long.length - kept);
    expect(recordable(long, 50).length).toBeLessThanOrEqual(50);
    // Exactly max fits whole; one more is cut.
    expect(recordable('x'.repeat(300))).toBe('x'.repeat(300));
    expect(recordable('x'.repeat(301))).not.toBe('x'.repeat(301));
    expect(recordable('x'.repeat(301)).length).toBeLessThanOrEqual(300);
  });

  it('counts escapes against the bound and never cuts one in half', () => {
    const out = recordable('\u0000'.repeat(100), 40);
    expect(out.length).toBeLessThanOrEqual(40);
    const head = out.slice(0, out.indexOf('…'));
    expect(head).toMatch(/^(\\u0000)+$/);
    expect(out).toMatch(new RegExp(`… \\(${100 - head.length / 6} more characters\\)$`));
  });

  it('cuts at a code point: an emoji at the boundary is kept whole or left out whole', () => {
    // For every position of the emoji around the cut, and both bounds that put its halves on either side.
    for (let pad = 260; pad < 290; pad++) {
      const s = `${'a'.repeat(pad)}😀${'b'.repeat(400)}`;
      for (const max of [299, 300]) {
        const out = recordable(s, max);
        expect(out.length, `pad ${pad} max ${max}`).toBeLessThanOrEqual(max);
        expect(unrecordable(out), `pad ${pad} max ${max}: ${JSON.stringify(out.slice(pad - 2, pad + 4))}`).toBe(false);
        const head = out.slice(0, out.indexOf('…'));
        const left = Number(/\((\d+) more characters\)$/.exec(out)![1]);
        // Every code point is either shown or counted as left out.
        expect([...head].length + left).toBe([...s].length);
      }
    }
  });

  it('a bound too small for the count still holds', () => {
    expect(recordable('x'.repeat(100), 5)).toBe('…');
    expect(recordable('x'.repeat(100), 0)).toBe('');
    expect(recordable('short', 5)).toBe('short');
  });

  it('never throws, whatever it is given', () => {
    expect(recordable(undefined)).toBe('undefined');
    expect(recordable(null)).toBe('null');
    expect(recordable(42)).toBe('42');
    expect(recordable(Symbol('s'))).toBe('Symbol(s)');
    expect(recordable(new Error('boom\u0000'))).toBe('Error: boom\\u0000');
    expect(recordable(Object.create(null))).toBe('[object Object]');
    expect(recordable({ toString: () => { throw new Error('no'); } })).toBe('[object Object]');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(() => recordable(revoked.proxy)).not.toThrow();
    expect(recordable('x'.repeat(10), Number.NaN)).toBe('x'.repeat(10));
  });
});

describe('recordableJson', () => {
  it('escapes every string, keys too, cuts values to the bound, and leaves the rest', () => {
    const v = { 'k\u0000': ['a\u0000b', 'x\ud800'], n: 3, nested: { long: 'y'.repeat(1000), ok: true, none: null } };
    const out = recordableJson(v, 100) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['k\\u0000', 'n', 'nested']);
    expect(out['k\\u0000']).toEqual(['a\\u0000b', 'x\\ud800']);
    expect(out.n).toBe(3);
    const nested = out.nested as Record<string, unknown>;
    expect((nested.long as string).length).toBeLessThanOrEqual(100);
    expect(nested).toMatchObject({ ok: true, none: null });
    expect(unrecordable(JSON.stringify(out).replace(/\\u0000/g, ''))).toBe(false);
  });

  it('throws on what JSON cannot hold', () => {
    expect(() => recordableJson({ n: 1n })).toThrow(TypeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => recordableJson(cycle)).toThrow(TypeError);
  });
});

describe('a failed query, said', () => {
  // Shaped as drizzle's DrizzleQueryError (drizzle-orm/errors.js) wraps the driver's error.
  class DrizzleQueryError extends Error {
    constructor(readonly query: string, readonly params: unknown[], override readonly cause: unknown) {
      super(`Failed query: ${query}\nparams: ${params.join(',')}`);
    }
  }
  const cause = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { name: 'PostgresError', code: '22021' });
  const wrapped = new DrizzleQueryError('insert into t (a) values ($1)', ['secret-value\u0000'], cause);

  it('is the driver error, never the parameters', () => {
    expect(isQueryError(wrapped)).toBe(true);
    expect(isQueryError(cause)).toBe(false);
    expect(reportedError(wrapped)).toBe(cause);
    expect(errorMessage(wrapped)).toBe('invalid byte sequence for encoding "UTF8": 0x00');
    expect(errorLine(wrapped)).toBe('PostgresError: invalid byte sequence for encoding "UTF8": 0x00');
  });

  it('takes the parameters out of a message that quotes one', () => {
    const quoting = new Error(`could not write: ${wrapped.message}`);
    expect(errorMessage(quoting)).toBe('could not write: Failed query: insert into t (a) values ($1) (parameters not shown)');
    expect(errorMessage(quoting)).not.toContain('secret-value');
  });

  it('says any other value without throwing', () => {
    expect(errorMessage('a string')).toBe('a string');
    expect(errorMessage({ message: 'an object' })).toBe('an object');
    expect(errorLine(new TypeError('t'))).toBe('TypeError: t');
    expect(errorLine(undefined)).toBe('undefined');
  });
});
