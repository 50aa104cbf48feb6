// One bounded HTTP GET. Node's fetch defaults allow unlimited bodies and five-minute waits
// and forward custom headers (our key) on cross-origin redirects, so: one timeout for
// headers and body together, bytes counted while streaming, redirects never followed here
// (the client follows the safe ones itself, one recorded request per hop: redirects.ts).
// A fetch that fails before any response is told apart here (connect-errors.ts): refused or
// a blocked port (permanent), or unreachable, reset, timed out (transient).
// The body is kept as bytes beside its text, and the text says whether it is exactly those
// bytes: decoded strictly (bytes that are not UTF-8 are not silently U+FFFD), a byte-order
// mark kept, not stripped. The archive keeps a body that text cannot say byte for byte.
import { ResponseTooLargeError, UnsafeRequestError, UpstreamNetworkError, UpstreamTimeoutError } from '../lib/errors.ts';
import { notUtf8At } from '../lib/pg-text.ts';
import { networkReason, permanentConnectError } from './connect-errors.ts';

export interface BoundedRequest {
  url: URL;
  /** Path and query, for errors (never the host). */
  path: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** A 2xx body larger than this fails with ResponseTooLargeError. */
  maxBytes: number;
  /** Error bodies are only read this far (they are for diagnostics); the rest is dropped. */
  errorBodyMaxBytes: number;
  signal?: AbortSignal | undefined;
  /** The variable the base URL came from (`TE_APP_URL`): named by the errors of a connection that failed. */
  urlVariable?: string | undefined;
  /**
   * Called once the status and headers are in, before the body is read: what they say (a
   * Retry-After) holds for everyone from then, not only once a slow body has ended.
   */
  onHeaders?: ((status: number, headers: Headers) => Promise<void> | void) | undefined;
}

export interface BoundedResponse {
  status: number;
  statusText: string;
  headers: Headers;
  /** The body as text: exactly `raw` when `notUtf8At` is null; else decoded with U+FFFD for what is not UTF-8 (for reading, never for keeping). */
  text: string;
  /** The body bytes received (after content decoding), byte for byte. */
  raw: Uint8Array;
  /** Where `raw` stops being UTF-8 (the offset of the first byte that is not); null when `text` is exactly `raw`. */
  notUtf8At: number | null;
  /** Body bytes received (after content decoding). */
  bytes: number;
}

/** Decodes a body strictly: `notUtf8At` null says the text is the bytes, every one (nothing replaced, a byte-order mark kept). */
export function decodeBody(raw: Uint8Array): { text: string; notUtf8At: number | null } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw), notUtf8At: null };
  } catch {
    return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(raw), notUtf8At: notUtf8At(raw) ?? 0 };
  }
}

const TIMEOUT = Symbol('timeout');

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

export async function boundedGet(req: BoundedRequest): Promise<BoundedResponse> {
  const controller = new AbortController();
  let phase: 'headers' | 'body' = 'headers';
  const timer = setTimeout(() => controller.abort(TIMEOUT), req.timeoutMs);
  const onAbort = () => controller.abort(req.signal?.reason);
  req.signal?.addEventListener('abort', onAbort, { once: true });

  const fail = (err: unknown): never => {
    if (req.signal?.aborted) throw req.signal.reason;
    if (controller.signal.reason === TIMEOUT) throw new UpstreamTimeoutError(req.path, req.timeoutMs, phase);
    if (err instanceof ResponseTooLargeError) throw err;
    if (phase === 'headers') {
      // Refused, or a port fetch will not use: the same answer on every try.
      const permanent = permanentConnectError(err, req.url, req.path, req.urlVariable);
      if (permanent) throw permanent;
    }
    // fetch rejects a request it cannot even send (a bad header value) with a TypeError
    // other than "fetch failed": retrying would not help.
    if (phase === 'headers' && err instanceof TypeError && err.message !== 'fetch failed') {
      // Not err.message: it quotes the offending header value, which may be the key.
      throw new UnsafeRequestError(`GET ${req.path}: the HTTP client refused the request (an invalid header value?)`);
    }
    const reason = networkReason(err, req.url);
    throw new UpstreamNetworkError(req.path, phase === 'body' ? `body ended early: ${reason}` : reason);
  };

  try {
    let res: Response;
    try {
      res = await fetch(req.url, { method: 'GET', headers: req.headers, redirect: 'manual', signal: controller.signal });
    } catch (err) {
      return fail(err);
    }
    phase = 'body';
    await req.onHeaders?.(res.status, res.headers);
    const limit = isSuccess(res.status) ? req.maxBytes : req.errorBodyMaxBytes;
    const declared = Number(res.headers.get('content-length'));
    if (isSuccess(res.status) && Number.isFinite(declared) && declared > limit) {
      await res.body?.cancel().catch(() => {});
      throw new ResponseTooLargeError(req.path, limit);
    }
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (bytes + value.byteLength > limit) {
            await reader.cancel().catch(() => {});
            if (isSuccess(res.status)) throw new ResponseTooLargeError(req.path, limit);
            chunks.push(value.subarray(0, limit - bytes));
            bytes = limit;
            break;
          }
          chunks.push(value);
          bytes += value.byteLength;
        }
      } catch (err) {
        return fail(err);
      }
    }
    const raw = Buffer.concat(chunks);
    const { text, notUtf8At } = decodeBody(raw);
    return { status: res.status, statusText: res.statusText, headers: res.headers, text, raw, notUtf8At, bytes };
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onAbort);
    // Whatever is left of the connection (an endless or stalled body) is torn down.
    if (!controller.signal.aborted) controller.abort('done');
  }
}
