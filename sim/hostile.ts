// Strings Postgres cannot hold (`SimHostile` in types.ts), served as real upstreams serve
// user-entered text: U+0000, which no Postgres text or jsonb value holds, and a lone high
// surrogate U+D83D, which no UTF-8 can encode. Both are put into the answer's JS values, so the
// JSON writer emits them as the escapes `\u0000` and `\ud83d` (lossless-json writes strings,
// keys too, as JSON.stringify does, which escapes lone surrogates: ES2019's well-formed
// JSON.stringify). Answers only: the dataset, and so `sim.data`, keeps the clean values, as
// the `omitted` losses do. New objects every time: the routes' values may be the dataset's own.
import type { DataRouteKind } from './route-kinds.ts';
import type { HostileChar, HostilePlace, SimHostile } from './types.ts';

export const HOSTILE_PLACES: readonly HostilePlace[] = ['tokenName', 'snapshotField', 'bundleString', 'objectKey', 'screenerName', 'chartPoint'];
export const HOSTILE_CHARS: readonly HostileChar[] = ['nul', 'surrogate'];

/** The character itself, as a JS string. */
export function hostileChar(char: HostileChar): string {
  return char === 'nul' ? '\u0000' : '\ud83d';
}

/** The escape the char is written as on the wire, as it appears in the body's bytes. */
export function hostileEscape(char: HostileChar): string {
  return char === 'nul' ? '\\u0000' : '\\ud83d';
}

/** The string served at `place` (for 'objectKey': the key), holding `char`. */
export function hostileText(place: HostilePlace, char: HostileChar): string {
  const c = hostileChar(char);
  switch (place) {
    case 'tokenName':
      return `O'Reilly "Quote" ${c}NUL 🚀 Token`;
    case 'snapshotField':
      return `Fees ${c} stream`;
    case 'bundleString':
      return `Driver ${c} note`;
    case 'objectKey':
      return `note${c}`;
    case 'screenerName':
      return `Screener ${c} name`;
    case 'chartPoint':
      return `Point ${c} key`;
  }
}

/** The places a gateway answer can carry (the others are app answers). */
const GATEWAY_PLACES: readonly HostilePlace[] = ['tokenName', 'screenerName', 'chartPoint'];

/** The `hostile` option, checked (at start and by setHostile): a copy. */
export function hostileOption(list: readonly SimHostile[] | undefined): SimHostile[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new RangeError('simulator option hostile must be an array of { place, char, slug?, source? }');
  return list.map((h, i) => {
    const at = `simulator option hostile[${i}]`;
    if (!HOSTILE_PLACES.includes(h?.place)) throw new RangeError(`${at}.place must be one of ${HOSTILE_PLACES.join(', ')}, got ${String(h?.place)}`);
    if (!HOSTILE_CHARS.includes(h.char)) throw new RangeError(`${at}.char must be one of ${HOSTILE_CHARS.join(', ')}, got ${String(h.char)}`);
    if (h.source !== undefined && h.source !== 'app' && h.source !== 'gateway') throw new RangeError(`${at}.source must be 'app' or 'gateway', got ${String(h.source)}`);
    if (h.source === 'gateway' && !GATEWAY_PLACES.includes(h.place)) throw new RangeError(`${at}: source 'gateway' is only for places ${GATEWAY_PLACES.map((p) => `'${p}'`).join(', ')} (the other places are app answers)`);
    if (h.slug !== undefined && (typeof h.slug !== 'string' || h.slug === '')) throw new RangeError(`${at}.slug must be a token slug`);
    return { ...h };
  });
}

/** The route each place is served on. */
function routeOf(h: SimHostile): DataRouteKind {
  if (h.place === 'tokenName') return h.source === 'gateway' ? 'gateway.tokens' : 'app.tokens';
  if (h.place === 'screenerName') return h.source === 'gateway' ? 'gateway.screener' : 'app.screener';
  if (h.place === 'chartPoint') return h.source === 'gateway' ? 'gateway.chart' : 'app.chart';
  return h.place === 'bundleString' ? 'app.bundle' : 'app.token';
}

export interface HostileTarget {
  kind: DataRouteKind | null;
  /** the slug of a token route (the second path segment), or null */
  slug: string | null;
  /** the default slug: the first token of the app list, or of the gateway list */
  firstSlug(source: 'app' | 'gateway'): string | undefined;
}

/** Pure: the answer's `data` with every hostile string set for this route in it (new objects). */
export function withHostile(list: readonly SimHostile[], target: HostileTarget, data: unknown): unknown {
  let out = data;
  for (const h of list) {
    if (routeOf(h) !== target.kind) continue;
    const slug = h.slug ?? target.firstSlug(h.source ?? 'app');
    if (slug === undefined) continue;
    out = place(h, slug, target.slug, out);
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function place(h: SimHostile, slug: string, routeSlug: string | null, data: unknown): unknown {
  const text = hostileText(h.place, h.char);
  if (h.place === 'tokenName') {
    if (!Array.isArray(data)) return data;
    const field = h.source === 'gateway' ? 'name' : 'displayName';
    return data.map((item) => (isRecord(item) && item.slug === slug ? { ...item, [field]: text } : item));
  }
  if (h.place === 'screenerName') {
    if (!Array.isArray(data)) return data;
    if (h.source === 'gateway') return data.map((row) => (isRecord(row) && row.slug === slug ? { ...row, name: text } : row));
    return data.map((row) => {
      if (!isRecord(row)) return row;
      if (isRecord(row.token) && row.token.slug === slug) return { ...row, token: { ...row.token, displayName: text } };
      return row.token === slug ? { ...row, displayName: text } : row;
    });
  }
  if (routeSlug !== slug || !isRecord(data)) return data;
  if (h.place === 'chartPoint') return chartPoint(h, text, data);
  if (h.place === 'objectKey') return { ...data, labels: { ...(isRecord(data.labels) ? data.labels : {}), [text]: 'x' } };
  if (h.place === 'snapshotField') {
    const streams = data.streams;
    if (Array.isArray(streams) && isRecord(streams[0])) return { ...data, streams: [{ ...streams[0], label: text }, ...streams.slice(1)] };
    return isRecord(data.token) ? { ...data, token: { ...data.token, displayName: text } } : data;
  }
  // bundleString
  const drivers = data.valueDrivers;
  if (Array.isArray(drivers) && isRecord(drivers[0])) return { ...data, valueDrivers: [{ ...drivers[0], description: text }, ...drivers.slice(1)] };
  return { ...data, summary: text };
}

/**
 * A chart's second row (its first when it has one): in an app chart its x cell becomes the
 * text (a key column); in a gateway chart timeframe it gets a member keyed by the text (a
 * series key) valued "1".
 */
function chartPoint(h: SimHostile, text: string, data: Record<string, unknown>): Record<string, unknown> {
  const member = h.source === 'gateway' ? 'data' : 'rows';
  const rows = data[member];
  if (!Array.isArray(rows) || rows.length === 0) return data;
  const at = rows.length > 1 ? 1 : 0;
  const row: unknown = rows[at];
  let poisoned: unknown = row;
  if (h.source === 'gateway') poisoned = isRecord(row) ? { ...row, [text]: '1' } : row;
  else if (Array.isArray(row)) poisoned = [text, ...row.slice(1)];
  else if (isRecord(row) && typeof data.x === 'string') poisoned = { ...row, [data.x]: text };
  return { ...data, [member]: rows.map((r, i) => (i === at ? poisoned : r)) };
}
