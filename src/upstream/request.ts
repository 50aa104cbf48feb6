// What a request to the upstream asks and what comes back: the client's interface
// (client.ts builds it), apart from how it gets there.
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { UnholdableAt } from '../lib/pg-text.ts';
import type { RequestRecorder } from '../ports/recorder.ts';
import type { RateBudget } from './budget/budget.ts';
import type { PacingClock } from '../ports/pacing-clock.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { RouteName } from './routes.ts';
import type { Query } from './safe-url.ts';

export type UpstreamConfig = Pick<Config, 'app' | 'gateway' | 'requestTimeoutMs' | 'maxResponseBytes' | 'maxAttempts' | 'maxRateWaitMs'>;

/** `now` and `sleep`: the pacing clock (the process's own when not given). */
export interface UpstreamOptions extends Partial<PacingClock> {
  config: UpstreamConfig;
  budget: RateBudget;
  recorder?: RequestRecorder;
  logger: Logger;
  random?: () => number;
  /** Overrides of the retry delays and bounds; tests shorten them here. */
  retry?: Partial<RetryPolicy>;
  userAgent?: string;
  /** What upstream's words are scrubbed of (config.secrets); the sources' keys when not given. */
  secrets?: readonly string[];
}

export interface UpstreamRequest {
  route: RouteName;
  params?: Record<string, string>;
  query?: Query;
  /** A link upstream gave for this resource; used only when it is safe (see resolveLink). */
  link?: string | undefined;
  /** The link is the request (a list's next page): an unsafe one is refused, never replaced by the documented path. */
  linkOnly?: boolean;
  /** Sent as If-None-Match; a 304 comes back as `notModified`. */
  etag?: string | undefined;
  /**
   * The body is a list whose items can be refused one by one (src/engine/kit/item-refusals.ts):
   * strings Postgres cannot hold exactly are located (`UpstreamResponse.unholdable`), not
   * refused here.
   */
  refusableItems?: boolean;
  /** At most this many body bytes (what is left of a list's byte budget); a larger body fails with ResponseTooLargeError. */
  maxBytes?: number | undefined;
  /**
   * Hashes of bodies this list has archived already: a page served again with one of them is
   * a loop (src/engine/fetch/fetch-list.ts), not archived a second time.
   */
  archivedBodies?: ReadonlySet<string> | undefined;
  runId?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Overrides config.maxRateWaitMs for this request. */
  maxRateWaitMs?: number;
}

export interface UpstreamResponse {
  /** 2xx, or 304 when `etag` matched. */
  status: number;
  notModified: boolean;
  /** Path and query as requested (no host): the route's own, also when redirects led elsewhere. */
  path: string;
  /** parseJson of the body (numbers as LosslessNumber); undefined on 304. */
  body: unknown;
  /** The body as text; exactly the body served unless `raw` is given. */
  text: string;
  /**
   * The body as served (after content decoding), byte for byte, when `text` does not say it
   * exactly. The client refuses such a 2xx body, so a response it returns has none; a refused
   * body keeps them (src/engine/fetch/fetch.ts `invalid`).
   */
  raw?: Uint8Array | undefined;
  etag?: string | undefined;
  requestId?: string | undefined;
  /** sha256 of the body without meta.servedAt; '' on 304. */
  sha256: string;
  /** Strings of the body Postgres cannot store exactly, located (only where `refusableItems` asked for them). */
  unholdable?: readonly UnholdableAt[];
  /** Response headers, lower-cased names. */
  headers: Record<string, string>;
}

export interface Upstream {
  get(req: UpstreamRequest): Promise<UpstreamResponse>;
}
