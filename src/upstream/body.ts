// Reading a 2xx (or 4xx) body as JSON, and whether the warehouse can hold it exactly: its
// bytes UTF-8, and no string in it (a name or a value) holding U+0000 or an unpaired
// surrogate, which Postgres text and jsonb cannot store (src/lib/pg-text.ts). A body that
// cannot be held is not understood: the client refuses it before anything of it is written
// and archives it `invalid` byte for byte; not retried, since it is how the body was written,
// as a key named twice. A list's body may instead come back with those strings located
// (`locate`): the engine then refuses the items that hold them, alone, or the body whole
// when one lies outside every item (src/engine/kit/item-refusals.ts).
import { DuplicateKeyError, parseJson } from '../lib/json.ts';
import { unholdableStrings, visibleText, type UnholdableAt } from '../lib/pg-text.ts';
import type { BoundedResponse } from './http.ts';

/** The text JSON is read from: a byte-order mark is not part of it (RFC 8259 lets a reader ignore one). */
const jsonTextOf = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** A JSON escape of U+0000 or of a surrogate (false alarms, such as `\\u0000`, only cost a walk). */
const MAYBE_UNHOLDABLE = /\\u(?:0000|[dD][89a-fA-F])/;

/** The body's bytes, where its text does not say them exactly. */
export const rawOf = (r: BoundedResponse): Uint8Array | undefined => (r.notUtf8At === null ? undefined : r.raw);

/**
 * Why a parsed body cannot be stored exactly, or null: its bytes are not UTF-8, or a string
 * in it holds what Postgres text cannot (the message never carries the character itself).
 */
function unholdable(res: BoundedResponse, body: unknown, limit: number): { whole: string } | { found: UnholdableAt[] } {
  if (res.notUtf8At !== null) return { whole: `body is not valid UTF-8 (byte ${res.notUtf8At})` };
  // Text decoded from UTF-8 holds no unpaired surrogate, and JSON admits a U+0000 only escaped:
  // a parsed string can hold either only where the text has such an escape. Most bodies have
  // none, and are not walked.
  if (!MAYBE_UNHOLDABLE.test(res.text)) return { found: [] };
  return { found: unholdableStrings(body, limit) };
}

/** Strings Postgres cannot hold located in one body at most: past it the body is refused whole. */
export const MAX_LOCATED = 1000;

export type BodyReading = { ok: true; body: unknown; unholdable?: UnholdableAt[] } | { ok: false; reason: string; retry: boolean };

/**
 * Pure: a body parsed exactly (numbers as LosslessNumber), or why not and whether asking
 * again could help (invalid JSON may be a body cut short; a key named twice or a string
 * Postgres cannot hold is how it was written). With `locate`, a body whose only fault is
 * strings Postgres cannot hold (at most MAX_LOCATED) comes back with them located instead.
 */
export function readJsonBody(res: BoundedResponse, options: { locate?: boolean } = {}): BodyReading {
  let body: unknown;
  try {
    body = parseJson(jsonTextOf(res.text));
  } catch (err) {
    // The parser quotes what it met, a U+0000 too: the message stays readable and storable.
    return { ok: false, reason: visibleText(`invalid JSON in a ${res.status} response: ${(err as Error).message}`), retry: !(err instanceof DuplicateKeyError) };
  }
  const unheld = unholdable(res, body, options.locate ? MAX_LOCATED + 1 : 1);
  if ('whole' in unheld) return { ok: false, reason: `not understood: ${unheld.whole}`, retry: false };
  const [first] = unheld.found;
  if (first === undefined) return { ok: true, body };
  if (!options.locate) return { ok: false, reason: `not understood: ${visibleText(`${first.path} ${first.what}`)}`, retry: false };
  if (unheld.found.length > MAX_LOCATED) return { ok: false, reason: `not understood: more than ${MAX_LOCATED} strings Postgres cannot store exactly, the first: ${visibleText(`${first.path} ${first.what}`)}`, retry: false };
  return { ok: true, body, unholdable: unheld.found };
}
