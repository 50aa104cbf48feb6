import { createHash } from 'node:crypto';
import { stringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../../src/lib/json.ts';
import { backoffDelay } from '../../src/upstream/backoff.ts';
import { jsonBodyHash, textBodyHash } from '../../src/lib/hash.ts';

describe('backoffDelay', () => {
  const P = { baseDelayMs: 100, maxDelayMs: 1000 };
  it('doubles per retry, within [step/2, step], capped', () => {
    expect(backoffDelay(1, P, 0)).toBe(50);
    expect(backoffDelay(1, P, 1)).toBe(100);
    expect(backoffDelay(3, P, 0)).toBe(200);
    expect(backoffDelay(3, P, 1)).toBe(400);
    expect(backoffDelay(20, P, 1)).toBe(1000);
  });
});

describe('body hashes', () => {
  it('leave out meta.servedAt only', () => {
    const a = parseJson('{"data":[1.10],"meta":{"servedAt":"2025-01-01T00:00:00Z","asOf":"x"}}');
    const b = parseJson('{"data":[1.10],"meta":{"servedAt":"2025-01-02T00:00:00Z","asOf":"x"}}');
    const c = parseJson('{"data":[1.1],"meta":{"servedAt":"2025-01-02T00:00:00Z","asOf":"x"}}');
    const d = parseJson('{"data":[1.10],"meta":{"servedAt":"2025-01-02T00:00:00Z","asOf":"y"}}');
    expect(jsonBodyHash(a)).toBe(jsonBodyHash(b));
    expect(jsonBodyHash(a)).not.toBe(jsonBodyHash(c));
    expect(jsonBodyHash(a)).not.toBe(jsonBodyHash(d));
    expect(jsonBodyHash(parseJson('[1]'))).toMatch(/^[0-9a-f]{64}$/);
    expect(textBodyHash('<html>')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hash a big body streamed exactly as its whole JSON text (hashes in a warehouse stay valid)', () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `{"slug":"t${i}","v":${i}.10,"name":"💰 \\"${i}\\""}`);
    const body = parseJson(`{"data":[${rows.join(',')}],"meta":{"asOf":"x"}}`);
    const whole = createHash('sha256').update(stringify(body)!, 'utf8').digest('hex');
    expect(jsonBodyHash(body)).toBe(whole);
  });
});
