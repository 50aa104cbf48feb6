// Where upstream's words enter tesync's records: the client's request records and the errors
// it throws are scrubbed of the secrets here (src/lib/secrets.ts), once, so nothing
// downstream (resource state, run stats, logs, the summary, the status page) ever holds a key
// the upstream repeated. The raw archive (`response`) keeps bodies as served.
import type { Config } from '../lib/config.ts';
import { scrubberFor, type Scrub } from '../lib/secrets.ts';
import type { RequestRecord, RequestRecorder } from '../ports/recorder.ts';

/** The client's scrub: of `secrets` (config.secrets: keys and passwords), else of the sources' own keys. */
export function upstreamScrub(secrets: readonly string[] | undefined, config: Pick<Config, 'app' | 'gateway'>): Scrub {
  return scrubberFor(secrets ?? [config.app?.apiKey, config.gateway?.apiKey].filter((k): k is string => k !== undefined));
}

/** `recorder`, its request records' texts (error, problem code, request id, path) scrubbed. */
export function scrubbingRecorder(recorder: RequestRecorder, scrub: Scrub): RequestRecorder {
  const t = (v: string | undefined) => (v === undefined ? undefined : scrub(v));
  return {
    request: (r: RequestRecord) => recorder.request({ ...r, path: scrub(r.path), error: t(r.error), problemCode: t(r.problemCode), requestId: t(r.requestId) }),
    response: (r) => recorder.response(r),
    flush: () => recorder.flush(),
    rawResponseIds: (source, bodies) => recorder.rawResponseIds(source, bodies),
    take: (source, bodies) => recorder.take(source, bodies),
    close: () => recorder.close(),
  };
}

/** The most causes scrubbed: a cycle of causes must not hang the client. */
const MAX_CAUSES = 5;

/**
 * `err` with its message, and its causes' messages, scrubbed (in place: its class, stack
 * and fields stay what callers decide by). An upstream problem's fields were scrubbed as it
 * was parsed.
 */
export function scrubbedError(err: unknown, scrub: Scrub): unknown {
  let e: unknown = err;
  for (let depth = 0; depth < MAX_CAUSES && e instanceof Error; depth++, e = e.cause) {
    const clean = scrub(e.message);
    if (clean === e.message) continue;
    try {
      e.message = clean;
      if (typeof e.stack === 'string') e.stack = scrub(e.stack);
    } catch {
      // a frozen error: its message is said through recordable, which scrubs it again
    }
  }
  return err;
}

/** An ETag is sent back as it came: one that holds a secret is not kept. */
export function keptEtag(etag: string | null | undefined, scrub: Scrub): string | undefined {
  return etag && scrub(etag) === etag ? etag : undefined;
}
