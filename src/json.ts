// Exact JSON. Upstream numbers are money and ratios: a JS number would round them, so every
// JSON number is parsed to a LosslessNumber (its literal text) and written back unchanged.
import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

export { isLosslessNumber, LosslessNumber };

/**
 * Parses JSON text; every number becomes a LosslessNumber. Throws SyntaxError on invalid JSON.
 * A duplicate key keeps the last value, as JSON.parse and Postgres jsonb do.
 */
export function parseJson(text: string): unknown {
  return parse(text, null, {
    parseNumber: (literal) => new LosslessNumber(literal),
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

/** Writes a value as JSON; LosslessNumbers come out as the literals they were parsed from. */
export function stringifyJson(value: unknown): string {
  const out = stringify(value);
  if (out === undefined) throw new TypeError('value cannot be represented as JSON');
  return out;
}

// Reading a decimal out of a parsed body: readDecimal in schema/upstream/values.ts.
