// The binary array encoders, read back by an independent decoder of the same layout
// (Postgres's array_recv): every element's bytes, nulls, and exact microseconds.
import { describe, expect, it } from 'vitest';
import { TEXT_OID, TIMESTAMPTZ_OID, textArray, timestamptzArray } from '../../src/warehouse/binary-array.ts';

interface Decoded {
  dims: number;
  hasNulls: number;
  oid: number;
  length: number;
  lowerBound: number;
  elements: (Uint8Array | null)[];
}

function decode(bytes: Uint8Array): Decoded {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Decoded = { dims: view.getInt32(0), hasNulls: view.getInt32(4), oid: view.getInt32(8), length: view.getInt32(12), lowerBound: view.getInt32(16), elements: [] };
  let at = 20;
  for (let i = 0; i < out.length; i++) {
    const n = view.getInt32(at);
    at += 4;
    if (n === -1) out.elements.push(null);
    else {
      out.elements.push(bytes.slice(at, at + n));
      at += n;
    }
  }
  // Nothing after the last element: Postgres refuses trailing bytes.
  expect(at).toBe(bytes.byteLength);
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const EPOCH_2000_US = 946_684_800_000_000n;

describe('textArray', () => {
  it('writes a one-dimensional text[] whose elements are each value in UTF-8, nulls as -1', () => {
    const values = ['plain', '', null, 'NULL', `quote " backslash \\ comma , braces {} tab\tnewline\n`, '✨ 日本 é', 'x'.repeat(40), `${'long '.repeat(20)}✨ after the first 32 units`, '\u{1F600} pair', null];
    const d = decode(textArray(values));
    expect(d).toMatchObject({ dims: 1, hasNulls: 1, oid: TEXT_OID, length: values.length, lowerBound: 1 });
    expect(d.elements.map((e) => (e === null ? null : utf8.decode(e)))).toEqual(values);
  });

  it('says it has no nulls when it has none, and takes an empty array', () => {
    expect(decode(textArray(['a', 'b'])).hasNulls).toBe(0);
    expect(decode(textArray([]))).toMatchObject({ length: 0, elements: [] });
  });

  it('grows past its ASCII estimate for wide texts, byte for byte what TextEncoder writes', () => {
    // Every element three bytes a unit, long and short, so the buffer grows several times.
    const values = Array.from({ length: 50 }, (_, i) => '日本語'.repeat(1 + (i % 7) * 9));
    const d = decode(textArray(values));
    const enc = new TextEncoder();
    d.elements.forEach((e, i) => expect(e).toEqual(enc.encode(values[i])));
  });

  it('turns a lone surrogate into U+FFFD, as the text form does on its way out of JavaScript', () => {
    const d = decode(textArray(['a\uD800b', `${'y'.repeat(40)}\uDC00`]));
    expect(d.elements.map((e) => utf8.decode(e!))).toEqual(['a\uFFFDb', `${'y'.repeat(40)}\uFFFD`]);
  });
});

describe('timestamptzArray', () => {
  const microsSince2000 = (e: Uint8Array) => new DataView(e.buffer, e.byteOffset, 8).getBigInt64(0);

  it('writes each instant as int64 microseconds since 2000-01-01 UTC, exactly, across the range of Date', () => {
    const instants = [
      '2000-01-01T00:00:00.000Z',
      '1999-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '2026-01-02T03:04:05.678Z',
      '0001-01-01T00:00:00.001Z',
      '9999-12-31T23:59:59.999Z',
    ].map((s) => Date.parse(s));
    // The ends of Date's range, whose microseconds are past 2^53: the BigInt path.
    instants.push(8.64e15, -8.64e15);
    for (let i = 0; i < 500; i++) instants.push(Math.round((Math.random() * 2 - 1) * 8.64e15));
    const d = decode(timestamptzArray([...instants, null]));
    expect(d).toMatchObject({ dims: 1, hasNulls: 1, oid: TIMESTAMPTZ_OID, length: instants.length + 1, lowerBound: 1 });
    expect(d.elements.at(-1)).toBeNull();
    instants.forEach((ms, i) => {
      expect(d.elements[i]!.byteLength).toBe(8);
      expect(microsSince2000(d.elements[i]!)).toBe(BigInt(ms) * 1000n - EPOCH_2000_US);
    });
  });

  it('refuses an invalid Date, as toISOString does', () => {
    expect(() => timestamptzArray([0, Number.NaN])).toThrow(RangeError);
  });
});
