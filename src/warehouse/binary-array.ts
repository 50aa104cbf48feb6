// Postgres's binary array format (what `array_recv` reads), for the array parameters of
// upserts into embedded PGlite. Postgres reads an array literal a character at a time
// (`array_in`), and a timestamp's text through its date parser: together about half of
// what the database thread spent reading a history batch. In binary, each element is a
// length and its bytes, and a timestamp eight bytes. Pure functions; PGlite sends a
// Uint8Array parameter in binary as it is.
//
// Layout: int32 dimensions (1), int32 has-nulls flag, int32 element type oid, int32 length,
// int32 lower bound (1); then per element an int32 byte length (-1 for null) and the bytes.
// All big-endian.

export const TEXT_OID = 25;
export const TIMESTAMPTZ_OID = 1184;

const HEADER_BYTES = 20;
/** 2000-01-01T00:00:00Z, Postgres's timestamp epoch, in Unix milliseconds. */
const POSTGRES_EPOCH_MS = 946_684_800_000;
const TWO_32 = 2 ** 32;
// Below this length a loop over the UTF-16 units beats a call into the encoder.
const SHORT_TEXT = 32;

const encoder = new TextEncoder();

/** A `text[]` value: each element's UTF-8 bytes, as Postgres's text input would store them. */
export function textArray(values: readonly (string | null)[]): Uint8Array {
  // Sized for ASCII, which most values are; a wider text grows the buffer.
  let size = HEADER_BYTES;
  for (const v of values) size += 4 + (v === null ? 0 : v.length);
  const out = new ByteWriter(size);
  out.header(TEXT_OID, values);
  for (const v of values) {
    if (v === null) {
      out.int32(-1);
      continue;
    }
    out.reserve(4 + v.length);
    const lengthAt = out.at;
    out.at += 4;
    out.utf8(v);
    out.view.setInt32(lengthAt, out.at - lengthAt - 4);
  }
  return out.done();
}

/**
 * A `timestamptz[]` value from instants in Unix milliseconds (Date#getTime): microseconds
 * since 2000-01-01 UTC, as Postgres stores them. A NaN (an invalid Date) is refused, as
 * Date#toISOString refuses it.
 */
export function timestamptzArray(values: readonly (number | null)[]): Uint8Array {
  let size = HEADER_BYTES;
  for (const v of values) size += v === null ? 4 : 12;
  const out = new ByteWriter(size);
  out.header(TIMESTAMPTZ_OID, values);
  for (const ms of values) {
    if (ms === null) {
      out.int32(-1);
      continue;
    }
    if (!Number.isInteger(ms)) throw new RangeError(`Invalid time value: ${ms}`);
    out.int32(8);
    const us = (ms - POSTGRES_EPOCH_MS) * 1000;
    if (Number.isSafeInteger(us)) {
      // Two halves of the two's complement, without a BigInt per element.
      const high = Math.floor(us / TWO_32);
      out.view.setInt32(out.at, high);
      out.view.setUint32(out.at + 4, us - high * TWO_32);
    } else {
      out.view.setBigInt64(out.at, BigInt(ms - POSTGRES_EPOCH_MS) * 1000n);
    }
    out.at += 8;
  }
  return out.done();
}

class ByteWriter {
  bytes: Uint8Array;
  view: DataView;
  at = 0;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }

  header(oid: number, values: readonly unknown[]): void {
    this.int32(1);
    this.int32(values.includes(null) ? 1 : 0);
    this.int32(oid);
    this.int32(values.length);
    this.int32(1);
  }

  int32(n: number): void {
    this.reserve(4);
    this.view.setInt32(this.at, n);
    this.at += 4;
  }

  /** Room for `n` more bytes. */
  reserve(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  /** A string's UTF-8 bytes (lone surrogates become U+FFFD, as TextEncoder makes them). */
  utf8(s: string): void {
    let from = 0;
    if (s.length < SHORT_TEXT) {
      const bytes = this.bytes;
      let at = this.at;
      for (; from < s.length; from++) {
        const c = s.charCodeAt(from);
        if (c >= 0x80) break;
        bytes[at++] = c;
      }
      this.at = at;
      if (from === s.length) return;
    }
    const rest = from === 0 ? s : s.slice(from);
    const { read, written } = encoder.encodeInto(rest, this.bytes.subarray(this.at));
    this.at += written;
    if (read < rest.length) {
      // Out of room: a UTF-16 unit takes at most three bytes.
      const left = rest.slice(read);
      this.reserve(left.length * 3);
      this.at += encoder.encodeInto(left, this.bytes.subarray(this.at)).written;
    }
  }

  done(): Uint8Array {
    return this.at === this.bytes.length ? this.bytes : this.bytes.slice(0, this.at);
  }
}
