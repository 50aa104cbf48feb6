// Delivery of the outbox to each TE_NOTIFY_URL: each endpoint gets its events in order, one
// attempt at a time, signed; a failure waits for its backoff (or the endpoint's Retry-After)
// and holds the events after it back; the tenth failure makes it dead. Any worker, or a sync
// at its end, delivers; a lease on the event being sent keeps two from sending it at once, and
// lets it go when its deliverer dies. Delivery never throws: what went wrong is recorded.
import { createHash } from 'node:crypto';
import type { Logger } from '../../lib/logger.ts';
import { scrub } from '../../lib/logger.ts';
import { SIGNATURE_HEADER, signature } from '../../lib/notify-signature.ts';
import { errorLine } from '../../lib/recordable.ts';
import { claimNext, fanOut, recordAttempt, type AttemptOutcome, type Claimed } from '../../store/books/notifications.ts';
import type { Warehouse } from '../../store/connection.ts';
import { parseRetryAfter } from '../../upstream/budget/rate-limit-headers.ts';
import { payloadOf, type StoredEvent } from './events.ts';

/** Waits after the 1st, 2nd, ... failed attempt: 10 attempts over about a day (22.9 h). */
export const BACKOFF_MS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 21_600_000, 32_400_000] as const;
export const MAX_ATTEMPTS = BACKOFF_MS.length + 1;
/** One attempt's answer may take this long. */
export const NOTIFY_TIMEOUT_MS = 10_000;
/** The longest Retry-After honoured: a day, as long as all the retries. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/** An endpoint: its URL (a secret) and the label it is recorded and shown by. */
export interface Endpoint {
  url: string;
  label: string;
}

/** Pure: `https://hooks.example.com#1a2b3c4d`: scheme, host and port, and a hash of the whole URL. */
export function endpointLabel(url: string): string {
  const hash = createHash('sha256').update(url).digest('hex').slice(0, 8);
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}#${hash}`;
  } catch {
    return `endpoint#${hash}`;
  }
}

export const endpointsOf = (urls: readonly string[]): Endpoint[] => urls.map((url) => ({ url, label: endpointLabel(url) }));

export interface DeliverOptions {
  warehouse: Warehouse;
  urls: readonly string[];
  secret: string | undefined;
  /** The warehouse as payloads name it (never a password). */
  warehouseName: string;
  /** Scrubbed from every payload and every error recorded. */
  secrets: readonly string[];
  logger: Logger;
  timeoutMs?: number;
  /** The pacing clock, ms since 1970: the signature's `t`, and the budget. */
  now?: () => number;
  /** Stop taking events once this long has gone (a sync's end); the rest waits for the next. */
  budgetMs?: number;
}

export interface DeliveryReport {
  delivered: number;
  failed: number;
  dead: number;
}

/** Sends what is due, endpoint by endpoint at once; never throws. */
export async function deliverPending(o: DeliverOptions): Promise<DeliveryReport> {
  const report: DeliveryReport = { delivered: 0, failed: 0, dead: 0 };
  const endpoints = endpointsOf(o.urls);
  if (endpoints.length === 0) return report;
  const now = o.now ?? Date.now;
  const started = now();
  try {
    await fanOut(o.warehouse, endpoints.map((e) => e.label));
  } catch (err) {
    o.logger.warn({ err: errorLine(err) }, 'notifications: could not read the outbox');
    return report;
  }
  await Promise.all(endpoints.map((e) => deliverTo(o, e, report, now, started)));
  return report;
}

async function deliverTo(o: DeliverOptions, e: Endpoint, report: DeliveryReport, now: () => number, started: number): Promise<void> {
  const timeoutMs = o.timeoutMs ?? NOTIFY_TIMEOUT_MS;
  try {
    for (;;) {
      if (o.budgetMs !== undefined && now() - started >= o.budgetMs) return;
      const c = await claimNext(o.warehouse, e.label, timeoutMs + 30_000);
      if (!c) return;
      const body = JSON.stringify(payloadOf(c, o.warehouseName, o.secrets));
      const outcome = await postEvent(e.url, body, { type: c.type, id: c.id, secret: o.secret, timeoutMs, now, secrets: o.secrets });
      const status = await recordAttempt(o.warehouse, e.label, c.id, outcome, BACKOFF_MS[c.attempts] ?? BACKOFF_MS[BACKOFF_MS.length - 1]!, MAX_ATTEMPTS);
      logAttempt(o.logger, e, c, outcome, status);
      if (status === 'delivered') report.delivered++;
      else if (status === 'dead') report.dead++;
      else report.failed++;
      // A failure holds the endpoint's later events back until it is delivered or dead.
      if (status === 'pending') return;
    }
  } catch (err) {
    o.logger.warn({ endpoint: e.label, err: scrub(errorLine(err), o.secrets) }, 'notifications: delivery stopped; the next round goes on');
  }
}

function logAttempt(logger: Logger, e: Endpoint, c: Claimed, o: AttemptOutcome, status: string): void {
  const fields = { endpoint: e.label, event: c.id, type: c.type, attempt: c.attempts + 1, httpStatus: o.httpStatus, durationMs: o.durationMs, error: o.error, retryAfterMs: o.retryAfterMs };
  if (status === 'delivered') logger.debug(fields, 'notification delivered');
  else if (status === 'dead') logger.error(fields, `notification dead after ${MAX_ATTEMPTS} attempts`);
  else logger.warn(fields, 'notification not delivered; tried again later');
}

export interface PostOptions {
  type: string;
  id: string;
  secret: string | undefined;
  timeoutMs: number;
  now: () => number;
  secrets: readonly string[];
}

/** What one POST came to, and the start of what the endpoint answered (for `tesync notify --test`). */
export interface PostAnswer extends AttemptOutcome {
  answer: string;
}

/** One signed POST of `body` to `url`; never throws. Redirects are not followed: a webhook that moved says so. */
export async function postEvent(url: string, body: string, p: PostOptions): Promise<PostAnswer> {
  const t0 = performance.now();
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'tesync',
    'x-tesync-event': p.type,
    'x-tesync-delivery': p.id,
  };
  if (p.secret) headers[SIGNATURE_HEADER.toLowerCase()] = signature(p.secret, Math.floor(p.now() / 1000), body);
  const ms = () => Math.round(performance.now() - t0);
  try {
    const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(p.timeoutMs) });
    const text = await res.text().catch(() => '');
    const delivered = res.status >= 200 && res.status < 300;
    const retryAfter = parseRetryAfter(res.headers.get('retry-after'), Date.now(), Date.parse(res.headers.get('date') ?? '') || null);
    return {
      delivered,
      httpStatus: res.status,
      durationMs: ms(),
      error: delivered ? null : `answered ${res.status}${res.status >= 300 && res.status < 400 ? ' (a redirect: not followed)' : ''}`,
      retryAfterMs: retryAfter === null ? null : Math.min(retryAfter, MAX_RETRY_AFTER_MS),
      answer: scrub(text.slice(0, 200), p.secrets),
    };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    const why = timedOut ? `no answer within ${p.timeoutMs} ms` : scrub(causeOf(err), p.secrets);
    return { delivered: false, httpStatus: null, durationMs: ms(), error: why, retryAfterMs: null, answer: '' };
  }
}

/** `fetch failed` says nothing: its cause (a refused connection, a name not found) does. Never the URL. */
function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String((cause as { code: unknown }).code) : null;
  return code ? `could not reach it (${code})` : errorLine(cause);
}

/** The test event of `tesync notify --test`, sent now to each endpoint, outside the outbox's order. */
export async function sendTest(o: Omit<DeliverOptions, 'warehouse' | 'budgetMs'>, event: StoredEvent): Promise<{ endpoint: string; answer: PostAnswer }[]> {
  const now = o.now ?? Date.now;
  const body = JSON.stringify(payloadOf(event, o.warehouseName, o.secrets));
  return Promise.all(
    endpointsOf(o.urls).map(async (e) => ({
      endpoint: e.label,
      answer: await postEvent(e.url, body, { type: event.type, id: event.id, secret: o.secret, timeoutMs: o.timeoutMs ?? NOTIFY_TIMEOUT_MS, now, secrets: o.secrets }),
    })),
  );
}
