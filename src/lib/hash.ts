// The identity of a body for the raw archive: sha256 of its JSON with `meta.servedAt` left
// out (it changes on every call), so an unchanged resource hashes the same across runs. A
// body that is not kept as JSON is named by the sha256 of its bytes as served.
import { createHash } from 'node:crypto';
import { isLosslessNumber, writeJson } from './json.ts';

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function withoutServedAt(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || isLosslessNumber(body)) return body;
  const meta = (body as Record<string, unknown>).meta;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta) || !Object.hasOwn(meta, 'servedAt')) return body;
  const { servedAt: _servedAt, ...rest } = meta as Record<string, unknown>;
  return { ...(body as Record<string, unknown>), meta: rest };
}

/** Hash of a parsed JSON body (servedAt left out). */
export function jsonBodyHash(body: unknown): string {
  // Streamed into the hash: a big body's JSON text never exists whole.
  const hash = createHash('sha256');
  if (!writeJson(withoutServedAt(body), (chunk) => hash.update(chunk, 'utf8'))) throw new TypeError('body cannot be represented as JSON');
  return hash.digest('hex');
}

/**
 * Hash of a body that is not JSON: its text as received, as UTF-8. For a text decoded exactly
 * (every byte UTF-8, nothing replaced) that is the sha256 of the bytes served.
 */
export function textBodyHash(text: string): string {
  return sha256(text);
}

/**
 * Hash of a body as served: the sha256 of its bytes when there are bytes (text that does not
 * say them exactly), else of its text's UTF-8 (textBodyHash: the same bytes when it does).
 */
export function servedBodyHash(text: string, bytes?: Uint8Array): string {
  return bytes ? createHash('sha256').update(bytes).digest('hex') : sha256(text);
}
