// What a resource written `partial` says in `last_error`, for people: a success clears the
// last failure's message, but a list that is not whole, or whose items were refused alone,
// should say why where `tesync status`, the status page and the sync's summary look. Pure:
// read from the outcome's own details (`incomplete`: the sign of more, fetch/fetch-list.ts;
// `refusedItems` and `refused`: the items refused alone, kit/item-refusals.ts), so every list
// and chart says it in the same form, and one that is both says both.
import { isRecord } from '../../schema/upstream/values.ts';

/**
 * Pure: `incomplete: <sign>` and `<n> item(s) refused: <the first reason>`, joined by `; `;
 * null when the details say neither.
 */
export function partialNote(details: unknown): string | null {
  if (!isRecord(details)) return null;
  const parts: string[] = [];
  if (typeof details.incomplete === 'string' && details.incomplete !== '') parts.push(`incomplete: ${details.incomplete}`);
  const n = details.refusedItems;
  const [first] = Array.isArray(details.refused) ? details.refused : [];
  if (typeof n === 'number' && n > 0) parts.push(`${n} ${n === 1 ? 'item' : 'items'} refused${typeof first === 'string' ? `: ${first}` : ''}`);
  return parts.length > 0 ? parts.join('; ') : null;
}
