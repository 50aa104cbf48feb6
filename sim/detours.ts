// Redirects and announced outages: how a real upstream answers on a day it moves a route or
// goes down for maintenance. Both are plain state the server consults per request; nothing
// here touches the dataset.
import type { LimitedBucket } from './rate-limit.ts';
import type { OutageWindow, SimOutage, SimRedirect } from './types.ts';

/**
 * The query parameter a same-origin redirect ('alias') adds: the route moves to itself with
 * another query (`/api/v1/tokens/x/charts?moved=1`), a URL of the documented route that serves
 * exactly what the route serves (unknown parameters are ignored) and is never redirected again.
 */
export const ALIAS_PARAM = 'moved';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Whether a request (path and query, as received) is a redirect's alias: it carries ALIAS_PARAM. */
export function isAlias(rawUrl: string): boolean {
  const qi = rawUrl.indexOf('?');
  return qi >= 0 && new URLSearchParams(rawUrl.slice(qi + 1)).has(ALIAS_PARAM);
}

function checkRedirect(r: SimRedirect): Required<Pick<SimRedirect, 'from' | 'status' | 'to'>> & { left: number } {
  const status = r.status ?? 307;
  if (!REDIRECT_STATUSES.has(status)) throw new RangeError(`simulator redirect status must be 301, 302, 303, 307 or 308, got ${String(r.status)}`);
  if (typeof r.from !== 'string' || !r.from.startsWith('/')) throw new RangeError(`simulator redirect 'from' must be a path starting with /, got ${String(r.from)}`);
  const to = r.to ?? 'alias';
  if (to !== 'alias' && !/^https?:\/\/[^/]+\/?$/.test(to)) throw new RangeError(`simulator redirect 'to' must be 'alias' or a base URL like http://127.0.0.1:8080, got ${String(r.to)}`);
  const times = r.times ?? Number.POSITIVE_INFINITY;
  if (!(times > 0)) throw new RangeError(`simulator redirect 'times' must be positive, got ${String(r.times)}`);
  return { from: r.from, status, to, left: times };
}

export class Redirects {
  private list: ReturnType<typeof checkRedirect>[] = [];

  add(r: SimRedirect): void {
    this.list.push(checkRedirect(r));
  }

  clear(): void {
    this.list = [];
  }

  /**
   * The redirect a request gets, if any: its status and Location. An alias is never
   * redirected again (the route moved once).
   */
  take(rawUrl: string): { status: number; location: string } | null {
    if (isAlias(rawUrl)) return null;
    const r = this.list.find((x) => x.left > 0 && rawUrl.startsWith(x.from));
    if (!r) return null;
    r.left--;
    if (r.to !== 'alias') return { status: r.status, location: `${r.to.replace(/\/$/, '')}${rawUrl}` };
    return { status: r.status, location: `${rawUrl}${rawUrl.includes('?') ? '&' : '?'}${ALIAS_PARAM}=1` };
  }
}

/** One outage at a time: armed, then running for `seconds` from its first answer, then over. */
export class Outages {
  private armed: (SimOutage & { seen: number }) | null = null;
  private running: OutageWindow | null = null;
  readonly windows: OutageWindow[] = [];

  set(o: SimOutage | null): void {
    this.running = null;
    if (o === null) {
      this.armed = null;
      return;
    }
    if (!(Number.isFinite(o.seconds) && o.seconds > 0)) throw new RangeError(`simulator outage seconds must be positive, got ${String(o.seconds)}`);
    if (o.after !== undefined && !(Number.isInteger(o.after) && o.after >= 0)) throw new RangeError(`simulator outage 'after' must be an integer >= 0, got ${String(o.after)}`);
    this.armed = { ...o, seen: 0 };
  }

  /** When the request falls in the outage: the instant it ends (its Retry-After counts down to it). */
  hit(bucket: LimitedBucket | 'none', now: number): number | null {
    if (this.running && this.running.bucket === bucket && now < this.running.endsAt) return this.running.endsAt;
    const a = this.armed;
    if (!a || a.bucket !== bucket) return null;
    if (a.seen++ < (a.after ?? 0)) return null;
    this.armed = null;
    this.running = { bucket: a.bucket, seconds: a.seconds, startedAt: now, endsAt: now + a.seconds * 1000 };
    this.windows.push(this.running);
    return this.running.endsAt;
  }
}
