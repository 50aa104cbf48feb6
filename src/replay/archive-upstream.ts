// The upstream of a replay: a port that answers each request a job makes from the archive, never
// the network. It holds the bodies one recorded try read (sync.writes `bodies`, in order) and
// answers a request with the first one not yet served whose path is the one asked, as the
// client would have archived it (the route's path below the base URL, and its query): a 2xx as
// the client hands it on (parsed exactly, strings Postgres cannot hold located for a list that
// asks), a refusal's body (4xx) as the error the client throws. A request none answers is a
// gap: the job fails with NotInArchive, and the replay counts it.
import { PermanentError } from '../lib/errors.ts';
import { decodeBody, type BoundedResponse } from '../upstream/http.ts';
import { readJsonBody } from '../upstream/body.ts';
import { parseProblem, problemError } from '../upstream/problem.ts';
import { buildUrl, pathOf } from '../upstream/safe-url.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../upstream/request.ts';
import { InvalidResponseError } from '../lib/errors.ts';

/** One archived body, as the replay reads it from sync.raw_responses. */
export interface ArchivedBody {
  id: number;
  path: string;
  sha256: string;
  httpStatus: number;
  contentType: string | null;
  /** The body's bytes as served (UTF-8 of its text where text or jsonb held it). */
  bytes: Uint8Array;
}

/** A request the archive holds no answer to: the try it belongs to cannot be repeated whole. */
export class NotInArchive extends PermanentError {
  override readonly name = 'NotInArchive';
  constructor(readonly path: string) {
    super(`${path}: no archived body answers it`);
  }
}

// Any origin: paths are compared below it, whatever base URL the archive was fetched from.
const NOWHERE = 'http://replay.invalid';

/** Pure: a path and query as compared, the query's parameters in order. */
export function comparablePath(pathAndQuery: string): { path: string; query: string } {
  const u = new URL(pathAndQuery, `${NOWHERE}/`);
  u.searchParams.sort();
  return { path: u.pathname, query: u.searchParams.toString() };
}

/** Pure: what a request asks, as comparablePath says it (a link, or the route with its parameters). */
export function askedPath(req: UpstreamRequest): { path: string; query: string } {
  if (typeof req.link === 'string' && req.link !== '') {
    const u = new URL(req.link, `${NOWHERE}/`);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) u.searchParams.set(k, v);
    return comparablePath(`${u.pathname}${u.search}`);
  }
  return comparablePath(pathOf(buildUrl(NOWHERE, req.route, req.params ?? {}, req.query ?? {})));
}

/** Pure: whether an archived path answers what was asked (below whatever base path it had). */
export function answers(archived: string, asked: { path: string; query: string }): boolean {
  const a = comparablePath(archived);
  return a.query === asked.query && (a.path === asked.path || a.path.endsWith(asked.path));
}

export class ArchiveUpstream implements Upstream {
  private readonly served = new Set<number>();
  /** Requests no body answered. */
  readonly gaps: string[] = [];

  /** `bodies`: in the order the try read them. */
  constructor(private readonly bodies: readonly ArchivedBody[]) {}

  async get(req: UpstreamRequest): Promise<UpstreamResponse> {
    req.signal?.throwIfAborted();
    const asked = askedPath(req);
    const i = this.bodies.findIndex((b, n) => !this.served.has(n) && answers(b.path, asked));
    if (i < 0) {
      const path = asked.query ? `${asked.path}?${asked.query}` : asked.path;
      this.gaps.push(path);
      throw new NotInArchive(path);
    }
    this.served.add(i);
    const b = this.bodies[i]!;
    const { text, notUtf8At } = decodeBody(b.bytes);
    const headers = new Headers(b.contentType ? { 'content-type': b.contentType } : {});
    const res: BoundedResponse = { status: b.httpStatus, statusText: '', headers, text, raw: b.bytes, notUtf8At, bytes: b.bytes.byteLength };
    if (b.httpStatus >= 400) {
      const problem = parseProblem({ status: b.httpStatus, headers, text, path: b.path });
      problem.sha256 = b.sha256;
      throw problemError(problem);
    }
    const read = readJsonBody(res, { locate: req.refusableItems === true });
    if (!read.ok) throw new InvalidResponseError(`GET ${b.path}: ${read.reason}`, text);
    return {
      status: b.httpStatus,
      notModified: false,
      path: b.path,
      body: read.body,
      text,
      ...(notUtf8At === null ? {} : { raw: b.bytes }),
      sha256: b.sha256,
      headers: Object.fromEntries(headers),
      ...(read.unholdable ? { unholdable: read.unholdable } : {}),
    };
  }
}
