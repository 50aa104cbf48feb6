// Exact JSON. Upstream numbers are money and ratios: a JS number would round them, so every
// JSON number is parsed to a LosslessNumber (its literal text) and written back unchanged.
import { isLosslessNumber, LosslessNumber, parse } from 'lossless-json';
import { DuplicateKeyError, refuseDuplicateNames } from './duplicate-names.ts';

export { DuplicateKeyError, isLosslessNumber, LosslessNumber };

/**
 * Parses JSON text; every number becomes a LosslessNumber. Throws SyntaxError on invalid JSON,
 * and DuplicateKeyError where an object names a key twice, whatever the two values: RFC 8259
 * leaves such an object's meaning open (JSON.parse and jsonb keep the last, other readers the
 * first), so the body is not understood.
 */
export function parseJson(text: string): unknown {
  const value = parse(text, null, {
    parseNumber: losslessNumber,
    // Called only when the two values differ; refuseDuplicateNames finds the rest.
    onDuplicateKey: ({ key, position }) => {
      throw new DuplicateKeyError(key, position);
    },
  });
  refuseDuplicateNames(text, value);
  return value;
}

/**
 * A LosslessNumber of a literal the parser has already read as a JSON number: the
 * constructor would check it again with a regular expression, for every number of a body.
 */
function losslessNumber(literal: string): LosslessNumber {
  const n = Object.create(LosslessNumber.prototype) as LosslessNumber;
  n.value = literal;
  n.isLosslessNumber = true;
  return n;
}

/** Writes a value as JSON; LosslessNumbers come out as the literals they were parsed from. */
export function stringifyJson(value: unknown): string {
  const out = jsonText(value);
  if (out === undefined) throw new TypeError('value cannot be represented as JSON');
  return out;
}

/** The JSON text of a value (a big one joined from its chunks); undefined when it has no JSON form. */
export function jsonText(value: unknown): string | undefined {
  const parts: string[] = [];
  if (!writeJson(value, (chunk) => parts.push(chunk))) return undefined;
  return parts.length === 1 ? parts[0] : parts.join('');
}

const CHUNK_CHARS = 16_384;

/**
 * Streams a value's JSON text, exactly as lossless-json's stringify writes it (no spacing),
 * to `sink` in pieces of about `chunkChars`; false when the value has no JSON form.
 *
 * Why not stringify: its whole output stays live while the text is hashed, many times the
 * body's size for a big one (docs/performance.md); here the pieces never outlive a chunk.
 */
export function writeJson(value: unknown, sink: (chunk: string) => void, chunkChars = CHUNK_CHARS): boolean {
  let buf = '';
  const put = (s: string): void => {
    buf += s;
    if (buf.length >= chunkChars) {
      sink(buf);
      buf = '';
    }
  };
  const write = (v: unknown): void => {
    if (typeof v !== 'object' || v === null || v instanceof Date || v instanceof Boolean || v instanceof Number || v instanceof String) {
      put(typeof v === 'bigint' ? v.toString() : (JSON.stringify(v) as string));
    } else if (isLosslessNumber(v)) {
      put(v.toString());
    } else if (Array.isArray(v)) {
      put('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) put(',');
        const item = jsonForm(v[i]);
        if (item === NO_FORM) put('null');
        else write(item);
      }
      put(']');
    } else {
      put('{');
      let first = true;
      for (const key of Object.keys(v)) {
        const item = jsonForm((v as Record<string, unknown>)[key]);
        if (item === NO_FORM) continue;
        put(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
        first = false;
        write(item);
      }
      put('}');
    }
  };
  const top = jsonForm(value);
  if (top === NO_FORM) return false;
  write(top);
  if (buf.length > 0) sink(buf);
  return true;
}

const NO_FORM = Symbol('no JSON form');

/** What a value is written as: its toJSON() result, or NO_FORM for what JSON leaves out. */
function jsonForm(v: unknown): unknown {
  let out = v;
  while (typeof out === 'object' && out !== null && !(out instanceof Date) && !isLosslessNumber(out) && !Array.isArray(out) && typeof (out as { toJSON?: unknown }).toJSON === 'function') {
    out = (out as { toJSON: () => unknown }).toJSON();
  }
  return out === undefined || typeof out === 'function' || typeof out === 'symbol' ? NO_FORM : out;
}

// Reading a decimal out of a parsed body: readDecimal in src/schema/upstream/values.ts.
