// JSON out. App host numbers are exact literals with more digits than a double holds, so
// they are emitted through lossless-json: a LosslessNumber prints its literal verbatim.
import { LosslessNumber, stringify } from 'lossless-json';

/** a JSON number literal written exactly as given (a canonical decimal string) */
export function num(literal: string): LosslessNumber {
  return new LosslessNumber(literal);
}

export function numOrNull(literal: string | null): LosslessNumber | null {
  return literal === null ? null : num(literal);
}

export function toJson(value: unknown): string {
  return stringify(value) ?? 'null';
}
