// Redirects, followed by the client itself rather than by fetch: fetch would follow a
// Location anywhere and, across origins, could carry headers (the key) along. A hop is
// followed only when its target is exactly a route of the seeds on the base URL (resolveRedirect
// in safe-url.ts), not seen before in the same attempt, within a bound on hops. Whatever is
// refused fails the request with the redirect's own status, telling only the target's host: a
// Location's path or query could hold anything, a key included.
//
// A hop keeps the key rules of any request (contract: the key only where a route needs it),
// those of the exact route it goes to: a keyed route sent to a public one goes there without
// the key. A request sent without the key never gains it on the way: a public route moved onto
// a keyed one would otherwise spend the key's quota and credits on a request nobody meant to
// authenticate; it goes keyless, and upstream's refusal is recorded.
import type { UpstreamProblemFields } from '../lib/errors.ts';
import type { Bucket, Route } from './routes.ts';
import { resolveRedirect } from './safe-url.ts';

/** The 3xx statuses tesync follows; each hop is a GET again (the only method it sends). */
export const FOLLOWED_REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export function isFollowedRedirect(status: number): boolean {
  return FOLLOWED_REDIRECTS.has(status);
}

export interface Refusal {
  /** The target's host (`host:port`), or a word when there is none. */
  host: string;
  reason: string;
}

export interface HopInput {
  baseUrl: string;
  route: Route;
  location: string | null;
  /** The URL that answered with the redirect: a relative Location is resolved against it. */
  from: URL;
  secrets: readonly (string | undefined)[];
  /** Every URL requested in this attempt so far (`href`). */
  visited: ReadonlySet<string>;
  /** Hops followed so far in this attempt. */
  hops: number;
  /** How the request that got the redirect went. */
  sent: Sending;
  maxHops: number;
}

/** A request on the wire: whether it carries the key, and the bucket it counts against. */
export interface Sending {
  keyed: boolean;
  bucket: Bucket;
}

/** Pure: how a route's own request goes. */
export function sendingOf(route: Route): Sending {
  return { keyed: route.auth === 'bearer', bucket: route.bucket };
}

/**
 * Pure: how a hop to the route `target` goes after a request sent as `asked`: keyed only when
 * the request was and the target needs the key; on the target's bucket, except a keyless
 * request to a keyed route, which stays on the keyless bucket it was sent on.
 */
export function hopSending(asked: Sending, target: Route): Sending {
  const keyed = asked.keyed && target.auth === 'bearer';
  return { keyed, bucket: keyed || target.auth === 'none' ? target.bucket : asked.bucket };
}

/** Pure: the next URL to request and how it goes, or why the redirect is not followed. */
export function nextHop(h: HopInput): ({ url: URL } & Sending) | Refusal {
  const target = resolveRedirect(h.baseUrl, h.route, h.location, h.from, h.secrets);
  if (!target.follow) return { host: target.host, reason: target.reason };
  if (h.visited.has(target.url.href)) return { host: target.url.host, reason: 'a redirect loop' };
  if (h.hops >= h.maxHops) return { host: target.url.host, reason: `more than ${h.maxHops} redirects` };
  return { url: target.url, ...hopSending(h.sent, target.route) };
}

/** Pure: the host a Location points at (relative to `from`), for a refusal's message; never more of it. */
export function targetHost(location: string | null, from: URL): string {
  if (!location) return 'nowhere';
  try {
    const url = new URL(location.trim(), from);
    return url.host || url.protocol;
  } catch {
    return 'unknown';
  }
}

/**
 * The problem a refused redirect fails with: its own status and request id; nothing of its
 * body (which usually repeats the Location) and nothing of the target but its host.
 */
export function redirectRefused(res: { status: number; headers: { get(name: string): string | null } }, path: string, refusal: Refusal): UpstreamProblemFields {
  return {
    status: res.status,
    code: undefined,
    type: undefined,
    title: `redirect to ${refusal.host} not followed: ${refusal.reason}`,
    detail: undefined,
    instance: undefined,
    scope: undefined,
    requestId: res.headers.get('x-request-id') ?? undefined,
    extensions: {},
    path,
  };
}
