// Conditional requests (RFC 9110 If-None-Match): a resource read from one response keeps that
// response's ETag (sync.resource_state.etag); its next fetch sends it, and upstream's 304 says
// the body is the one already written, so nothing is read or written and the resource is
// confirmed as it stands. Only the job's first request, on its own route, carries the tag; a
// job that read several responses (pages, streams, a confirming fetch) keeps none, since one
// tag cannot stand for them.
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';
import type { RouteName } from '../../upstream/routes.ts';
import { monotonicNow, type PacingClock } from '../../ports/pacing-clock.ts';

/** Upstream answered 304 to the job's conditional request: the resource is as last written. */
export class NotModified extends Error {
  override readonly name = 'NotModified';
  constructor(readonly path: string) {
    super(`${path}: not modified (304)`);
  }
}

/**
 * An upstream that makes one job's first request conditional, remembers the tags it saw, and
 * when the last answer arrived (on the process's monotonic counter: the commit dates the answer
 * by how long ago that was, commit.ts).
 */
export class ConditionalUpstream implements Upstream {
  private requests = 0;
  private readonly tags: (string | undefined)[] = [];
  private arrived: number | undefined;

  constructor(
    private readonly upstream: Upstream,
    private readonly route: RouteName,
    private readonly etag: string | undefined,
    private readonly clock: Pick<PacingClock, 'now'> = { now: monotonicNow },
  ) {}

  async get(req: UpstreamRequest): Promise<UpstreamResponse> {
    const first = ++this.requests === 1;
    const conditional = first && this.etag !== undefined && req.route === this.route && req.etag === undefined;
    let response: UpstreamResponse;
    try {
      response = await this.upstream.get(conditional ? { ...req, etag: this.etag } : req);
    } finally {
      // An answer that is a problem (a 404, a bundle's 402) is an answer received too.
      this.arrived = this.clock.now();
    }
    if (response.notModified) {
      // Only the request that asked conditionally may be answered so.
      if (conditional) throw new NotModified(response.path);
      throw new Error(`${response.path}: a 304 to a request that sent no If-None-Match`);
    }
    this.tags.push(response.etag);
    return response;
  }

  /** How long ago the last answer arrived, in milliseconds of the monotonic counter (0: none yet). */
  sinceLastMs(): number {
    return this.arrived === undefined ? 0 : this.clock.now() - this.arrived;
  }

  /** The ETag to keep: the one response's, when the job read exactly one on its route (else none). */
  keptTag(): string | null {
    return this.requests === 1 && this.tags.length === 1 ? (this.tags[0] ?? null) : null;
  }
}
