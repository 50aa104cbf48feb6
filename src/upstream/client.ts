// The one HTTP client for both upstreams: routes from the table only, safe URLs, the rate
// budget before every attempt, retries with backoff (p-retry), bounded responses, typed
// errors, and a record of every attempt.
//
// A 429 is not a failed attempt: it blocks the bucket (Retry-After, else backoff) for every
// caller, and the request is tried again once the budget lets it go, without spending one
// of `maxAttempts` (p-retry's shouldConsumeRetry). It is bounded by a count, and the time
// spent waiting for budget is bounded by `maxRateWaitMs` (then RateLimitedError).
//
// A `Retry-After` on any other response (a 503 announcing maintenance) blocks the bucket the
// same way: upstream said when to come back, to every caller. A 5xx that carried one is
// retried once the block ends, again without spending an attempt; a 5xx without one keeps
// its backoff.
//
// A connection refused, or a port Node's fetch will not use (connect-errors.ts), is permanent:
// tried once, recorded like any request that got no answer (no HTTP status), and thrown.
//
// Redirects are followed here, hop by hop, never by fetch (redirects.ts): each hop goes
// through the budget and is recorded, with the key and on the bucket its own path is due
// (hopSending); the response keeps the path of the route asked for.
//
// What a response's headers say of the budget (a Retry-After, the remaining count) is folded
// in as soon as they arrive, before the body is read (holdOf): a hold announced on a slow or
// large body holds the bucket's other callers from that instant.
//
// A 2xx body is understood only when it parses and the warehouse can hold it exactly
// (body.ts); otherwise it is refused here and archived `invalid` byte for byte. A list's
// body (`refusableItems`) whose only fault is strings Postgres cannot hold is handed back with
// them located, archived `partial` as served: the engine refuses what holds them (an item
// alone, or the body whole).
import pRetry from 'p-retry';
import type { Upstream, UpstreamOptions, UpstreamRequest, UpstreamResponse } from './request.ts';
import { InvalidResponseError, RateLimitedError, TransientError, UnsafeRequestError, UpstreamNotConfiguredError, UpstreamServerError } from '../lib/errors.ts';
import { backoffDelay } from './backoff.ts';
import { holdOf } from './budget/hold.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';
import { systemPacingClock } from '../ports/pacing-clock.ts';
import { jsonBodyHash, servedBodyHash } from '../lib/hash.ts';
import { SOURCE_URL_VARIABLE } from './connect-errors.ts';
import { boundedGet, type BoundedResponse } from './http.ts';
import { rawOf, readJsonBody } from './body.ts';
import { parseProblem, problemError, scrubProblem } from './problem.ts';
import { keptEtag, scrubbedError, scrubbingRecorder, upstreamScrub } from './scrubbed.ts';
import { readRateLimitHeaders, type RateLimitHeaders } from './budget/rate-limit-headers.ts';
import { NullRecorder } from '../ports/recorder.ts';
import { isRouteName, ROUTES, type Route } from './routes.ts';
import { isFollowedRedirect, nextHop, redirectRefused, sendingOf, targetHost, type Sending } from './redirects.ts';
import { STOPPED_REQUEST } from '../ports/recorder.ts';
import { buildUrl, pathOf, resolveLink, type Query } from './safe-url.ts';

/** Visible ASCII (inner spaces allowed), as a header value must be; an ETag came from upstream. */
const SAFE_ETAG = /^[\x21-\x7e](?:[\x20-\x7e]{0,510}[\x21-\x7e])?$/;

/** A 429 response: the budget already knows; retried without spending an attempt. */
class RateLimitedResponse extends RateLimitedError {}

/** A 5xx that said when to come back (Retry-After): the budget holds the bucket; retried without spending an attempt. */
class AnnouncedOutage extends UpstreamServerError {}

/** A 200 whose body did not parse: retried a few times, then surfaced as InvalidResponseError. */
class InvalidJsonAttempt extends InvalidResponseError {}

/** Offered: Node's fetch decodes all three. */
const ACCEPT_ENCODING = 'br, gzip, deflate';

export function createUpstream(options: UpstreamOptions): Upstream {
  const { config, budget, logger } = options;
  const scrub = upstreamScrub(options.secrets, config);
  const recorder = scrubbingRecorder(options.recorder ?? new NullRecorder(), scrub);
  const now = options.now ?? systemPacingClock.now;
  const sleep = options.sleep ?? systemPacingClock.sleep;
  const random = options.random ?? Math.random;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const userAgent = options.userAgent ?? 'tesync';

  function sourceOf(route: Route): { url: string; apiKey: string | undefined } {
    const source = config[route.source];
    if (!source) throw new UpstreamNotConfiguredError(route.source, 'url');
    if (route.auth === 'bearer' && !source.apiKey) throw new UpstreamNotConfiguredError(route.source, 'apiKey');
    return source;
  }

  function requestUrl(route: Route, req: UpstreamRequest, baseUrl: string): URL {
    const params = { ...req.params };
    let query: Query = { ...req.query };
    if (req.link !== undefined) {
      const link = resolveLink(baseUrl, route, req.link, params);
      if (link) {
        Object.assign(params, link.params);
        query = { ...link.query, ...req.query };
      } else if (req.linkOnly) {
        throw new UnsafeRequestError('upstream link not followed: off the base URL or the route');
      } else {
        logger.warn({ route: req.route, link: String(req.link).slice(0, 200) }, 'upstream link not followed (off the base URL or route); using the documented path');
      }
    }
    return buildUrl(baseUrl, route, params, query);
  }

  async function get(req: UpstreamRequest): Promise<UpstreamResponse> {
    // Job payloads come from a queue: the route name is checked at run time too.
    if (!isRouteName(req.route)) throw new UnsafeRequestError(`unknown upstream route ${JSON.stringify(String(req.route).slice(0, 60))}`);
    const route = ROUTES[req.route];
    const source = sourceOf(route);
    // Everything that could be unsafe is refused here, before the budget or the wire.
    const url = requestUrl(route, req, source.url);
    const path = pathOf(url);
    const headers: Record<string, string> = { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING, 'user-agent': userAgent };
    // Only requests to paths that need it ever carry the key (sendingOf, hopSending).
    const keyHeader: Record<string, string> = source.apiKey ? { authorization: `Bearer ${source.apiKey}` } : {};
    if (req.etag && SAFE_ETAG.test(req.etag)) headers['if-none-match'] = req.etag;
    else if (req.etag) logger.debug({ path }, 'stored ETag is not a valid header value; fetching unconditionally');

    const maxRateWaitMs = req.maxRateWaitMs ?? config.maxRateWaitMs;
    const secrets = [config.app?.apiKey, config.gateway?.apiKey];
    let [rateWaitedMs, rateLimitHits] = [0, 0];
    /** Responses whose stated wait the budget held the bucket for (429s and announced outages): bounded together. */
    let heldHits = 0;
    let spent = 0;
    let invalidJson = 0;
    let plan = { retry: false, consume: true, delayMs: 0 };

    /** One request on the wire: through the budget, observed by it, returned with its record (not yet written). */
    async function send(target: URL, targetPath: string, attemptNumber: number, how: Sending) {
      const { waitedMs } = await budget.acquire(how.bucket, { maxWaitMs: Math.max(0, maxRateWaitMs - rateWaitedMs), signal: req.signal });
      rateWaitedMs += waitedMs;
      req.signal?.throwIfAborted(); // stopped while it waited its turn: never sent, never a request
      const startedAt = now();
      // The budget's observation of this response, made once its headers are in (undefined: none yet).
      let told: Promise<void> | undefined;
      let rl: RateLimitHeaders | undefined;
      let heldMs: number | undefined;
      let res: BoundedResponse;
      try {
        res = await boundedGet({
          url: target,
          path: targetPath,
          headers: how.keyed ? { ...headers, ...keyHeader } : headers,
          timeoutMs: config.requestTimeoutMs,
          maxBytes: Math.min(config.maxResponseBytes, req.maxBytes ?? Infinity),
          errorBodyMaxBytes: policy.errorBodyMaxBytes,
          signal: req.signal,
          urlVariable: SOURCE_URL_VARIABLE[route.source],
          onHeaders: (status, h) => {
            const at = now();
            rl = readRateLimitHeaders(h, at);
            if (status === 429) rateLimitHits++;
            const hold = holdOf({ status, headers: rl, receivedAtMs: at, sentAtMs: startedAt, rateLimitHits, policy, random });
            heldMs = hold.heldMs;
            // This process holds the bucket at once (observe's first, synchronous part); the
            // shared store hears of it while the body is read, not after, and not before it.
            told = Promise.resolve(budget.observe(how.bucket, hold.observation));
          },
        });
      } catch (err) {
        // Exactly one observation per grant, even when the body then fails.
        if (told) await told.catch(() => {});
        else await budget.observe(how.bucket, { status: null, sentAtMs: startedAt });
        // A request its walk stopped (an interrupt, a shutdown) is no fault of the network's.
        const error = req.signal?.aborted ? `${STOPPED_REQUEST}${(err as Error).message}` : (err as Error).message;
        recorder.request({ ...base(attemptNumber, startedAt, targetPath, how), httpStatus: null, error });
        throw err;
      }
      const receivedAt = now();
      await told;
      const record = {
        ...base(attemptNumber, startedAt, targetPath, how),
        httpStatus: res.status,
        durationMs: receivedAt - startedAt,
        bytes: res.bytes,
        rateLimitRemaining: rl?.remaining ?? undefined,
        rateLimitLimit: rl?.limit ?? undefined,
        retryAfterMs: heldMs,
        requestId: res.headers.get('x-request-id') ?? undefined,
      };
      return { res, receivedAt, heldMs, record, how };
    }

    const attempt = async (attemptNumber: number): Promise<UpstreamResponse> => {
      let target = url;
      let targetPath = path;
      let how = sendingOf(route);
      const visited = new Set([url.href]);
      for (let hops = 0; ; hops++) {
        const sent = await send(target, targetPath, attemptNumber, how);
        if (!isFollowedRedirect(sent.res.status)) return answer(sent, target);
        const hop = nextHop({ baseUrl: source.url, route, location: sent.res.headers.get('location'), from: target, secrets, visited, hops, maxHops: policy.maxRedirects, sent: how });
        if (!('url' in hop)) {
          const problem = scrubProblem(redirectRefused(sent.res, path, hop), scrub);
          recorder.request({ ...sent.record, requestId: problem.requestId, error: problem.title });
          throw problemError(problem);
        }
        const next = hop.url;
        const nextPath = pathOf(next);
        recorder.request({ ...sent.record, error: `redirect ${sent.res.status} followed to ${nextPath}` });
        logger.debug({ path: targetPath, status: sent.res.status, to: nextPath, keyed: hop.keyed, bucket: hop.bucket }, 'upstream redirect followed');
        visited.add(next.href);
        target = next;
        targetPath = nextPath;
        how = { keyed: hop.keyed, bucket: hop.bucket };
      }
    };

    /** The final response of an attempt (`from`: the URL that gave it): a result, or the error it means. */
    function answer(sent: Awaited<ReturnType<typeof send>>, from: URL): UpstreamResponse {
      const { res, receivedAt, record } = sent;
      if (res.status === 304) {
        recorder.request(record);
        return { ...success(res), status: 304, notModified: true, body: undefined, text: '', sha256: '', etag: keptEtag(res.headers.get('etag'), scrub) ?? req.etag };
      }
      if (res.status >= 200 && res.status < 300) {
        const read = readJsonBody(res, { locate: req.refusableItems === true });
        if (!read.ok) {
          archiveInvalid(res, receivedAt, record, read.reason);
          // A body cut short may come whole next time; one written so (a key named twice, a NUL) will not.
          if (read.retry) throw new InvalidJsonAttempt(`GET ${path}: ${read.reason}`, res.text);
          throw new InvalidResponseError(`GET ${path}: ${read.reason}`, res.text);
        }
        const body = read.body;
        const sha256 = jsonBodyHash(body);
        recorder.request(record);
        // Archived under the path asked for, whatever hops it took: rows read from it, and
        // their provenance, belong to that route (the hops are in the request log).
        if (!req.archivedBodies?.has(sha256)) recorder.response({ ...archive(res, receivedAt), sha256, status: read.unholdable ? 'partial' : 'ok' });
        return { ...success(res), body, sha256, ...(read.unholdable ? { unholdable: read.unholdable } : {}) };
      }
      if (res.status >= 300 && res.status < 400) {
        // A 3xx tesync does not follow (300, 305, ...): refused like one off the route.
        const problem = scrubProblem(redirectRefused(res, path, { host: targetHost(res.headers.get('location'), from), reason: `a ${res.status} is not a redirect tesync follows` }), scrub);
        recorder.request({ ...record, requestId: problem.requestId, error: problem.title });
        throw problemError(problem);
      }
      const problem = parseProblem({ status: res.status, statusText: res.statusText, headers: res.headers, text: res.text, path }, scrub);
      // A refusal's body is archived too: what it refused links to it (a bundle's 401/402/403).
      if (res.status >= 400 && res.status < 500 && res.status !== 429 && res.text !== '') problem.sha256 = archiveRefusal(res, receivedAt);
      recorder.request({ ...record, problemCode: problem.code, requestId: problem.requestId, error: problem.title });
      if (res.status === 429) {
        throw new RateLimitedResponse(sent.how.bucket, sent.heldMs ?? 0, `429${problem.code ? ` ${problem.code}` : ''}`);
      }
      if (res.status >= 500 && sent.heldMs !== undefined) throw new AnnouncedOutage(problem);
      throw problemError(problem);
    }

    function success(r: BoundedResponse) {
      return {
        status: r.status,
        notModified: false,
        path,
        text: r.text,
        raw: rawOf(r),
        etag: keptEtag(r.headers.get('etag'), scrub),
        requestId: r.headers.get('x-request-id') ? scrub(r.headers.get('x-request-id')!) : undefined,
        headers: Object.fromEntries(r.headers),
      };
    }

    function base(attemptNumber: number, startedAt: number, targetPath: string, how: Sending) {
      return {
        runId: req.runId,
        source: route.source,
        bucket: how.bucket,
        path: targetPath,
        attempt: attemptNumber,
        startedAt: new Date(startedAt),
        durationMs: now() - startedAt,
      };
    }

    /** Records a 2xx attempt whose body was refused, and archives the body `invalid`, as served. */
    function archiveInvalid(res: BoundedResponse, receivedAt: number, record: Awaited<ReturnType<typeof send>>['record'], reason: string): void {
      recorder.request({ ...record, error: reason });
      recorder.response({ ...archive(res, receivedAt), sha256: servedBodyHash(res.text, rawOf(res)), status: 'invalid' });
    }

    /** Archives a 4xx body (as JSON where it parses and can be held exactly; else `invalid`, as served) and returns its hash. */
    function archiveRefusal(res: BoundedResponse, receivedAt: number): string {
      const read = readJsonBody(res);
      let sha256 = read.ok ? jsonBodyHash(read.body) : undefined;
      const status = sha256 === undefined ? 'invalid' : 'ok';
      sha256 ??= servedBodyHash(res.text, rawOf(res));
      recorder.response({ ...archive(res, receivedAt), sha256, status });
      return sha256;
    }

    function archive(res: BoundedResponse, receivedAt: number) {
      return {
        runId: req.runId,
        source: route.source,
        path,
        fetchedAt: new Date(receivedAt),
        httpStatus: res.status,
        contentType: res.headers.get('content-type') ?? undefined,
        text: res.text,
        bytes: rawOf(res),
      };
    }

    /** What to do after a failed attempt: retry or not, spend an attempt or not, wait how long. */
    function planFor(err: Error): typeof plan {
      if (err instanceof RateLimitedResponse || err instanceof AnnouncedOutage) {
        // The budget holds every caller back until the block ends: no delay of our own.
        return { retry: heldHits <= policy.maxRateLimitRetries, consume: false, delayMs: 0 };
      }
      const transient = err instanceof TransientError || (err instanceof InvalidJsonAttempt && invalidJson <= policy.invalidJsonRetries);
      if (!transient) return { retry: false, consume: true, delayMs: 0 };
      return { retry: spent < config.maxAttempts, consume: true, delayMs: backoffDelay(spent, policy, random()) };
    }

    try {
      return await pRetry(attempt, {
        // Our own shouldRetry bounds spent attempts; this ceiling only has to leave room for
        // the 429s that spend none (p-retry gives up when its count runs out).
        retries: config.maxAttempts - 1 + policy.maxRateLimitRetries,
        minTimeout: 0,
        signal: req.signal,
        onFailedAttempt: async ({ error, attemptNumber }) => {
          if (error instanceof RateLimitedResponse || error instanceof AnnouncedOutage) heldHits++;
          else spent++;
          if (error instanceof InvalidJsonAttempt) invalidJson++;
          plan = planFor(error);
          if (plan.retry && error instanceof RateLimitedResponse) {
            logger.info({ path, bucket: error.bucket, attempt: attemptNumber, waitMs: error.waitMs }, 'upstream rate limited (429); waiting for the budget');
          } else if (plan.retry && error instanceof AnnouncedOutage) {
            logger.info({ path, bucket: route.bucket, attempt: attemptNumber, status: error.status, code: error.code }, 'upstream announced when to come back (Retry-After); waiting for the budget');
          } else if (plan.retry) {
            logger.warn({ path, attempt: attemptNumber, err: error, delayMs: plan.delayMs }, 'upstream request failed; retrying');
          }
          if (plan.retry && plan.delayMs > 0) await sleep(plan.delayMs, req.signal);
        },
        shouldConsumeRetry: () => plan.consume,
        shouldRetry: () => plan.retry,
      });
    } catch (thrown) {
      const err = scrubbedError(thrown, scrub);
      if (err instanceof InvalidJsonAttempt) throw new InvalidResponseError(err.message, err.rawBody);
      if (err instanceof RateLimitedResponse) {
        throw new RateLimitedError(err.bucket, err.waitMs, `still rate limited after ${rateLimitHits} 429 responses`);
      }
      throw err;
    }
  }

  return { get };
}
