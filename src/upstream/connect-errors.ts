// Why a request got no answer at all, told apart where fetch fails (http.ts), so that each is
// judged on what it is. A refused connection (nothing listens at the configured address) and a
// port Node's fetch will not use fail the same way on every try: asking again, 15 times over
// 20 seconds, only delays the message. They are permanent errors: the request is not retried
// and the job is not either (judgeFailure). A name DNS does not know, a host or network that
// cannot be reached, a connect that timed out may clear up: they stay transient
// (UpstreamNetworkError), with a reason that says which. A certificate Node refuses is as
// permanent as a refusal (UpstreamTlsError).
//
// Messages name the address as the configuration has it (host:port of the base URL) and the
// variable it came from; never a path's query, never a key.
import { PermanentError } from '../lib/errors.ts';
import type { Source } from './routes.ts';

/** The variable each source's base URL comes from: what a connection error names. */
export const SOURCE_URL_VARIABLE: Readonly<Record<Source, string>> = { app: 'TE_APP_URL', gateway: 'TE_GATEWAY_URL' };

/**
 * The ports Node's fetch refuses to connect to: the Fetch standard's "bad ports"
 * (https://fetch.spec.whatwg.org/#port-blocking), as undici lists them. A request to one
 * fails at once with `bad port`, before any connection (test/upstream/connect-errors.test.ts
 * checks this list against the running Node).
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139,
  143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659,
  4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

const suffix = (variable: string | undefined) => (variable ? ` (${variable})` : '');

/** Nothing accepted the connection at the configured address (ECONNREFUSED): not retried. */
export class UpstreamRefusedError extends PermanentError {
  override readonly name = 'UpstreamRefusedError';
  constructor(
    /** Path and query of the request (no host): data, not in the message. */
    readonly path: string,
    /** host:port of the base URL. */
    readonly address: string,
    readonly variable: string | undefined,
  ) {
    super(`connection refused by ${address}${suffix(variable)}`);
  }
}

/** The base URL's port is one Node's fetch will not connect to (FETCH_BAD_PORTS): nothing was sent; not retried. */
export class UpstreamBadPortError extends PermanentError {
  override readonly name = 'UpstreamBadPortError';
  constructor(
    readonly path: string,
    readonly port: number,
    readonly variable: string | undefined,
  ) {
    super(`port ${port} is one Node's fetch refuses to use${suffix(variable)}`);
  }
}

/**
 * The server's TLS certificate was not accepted (expired, self-signed, for another name, of an
 * issuer not trusted), or an https base URL points at a server that does not speak TLS: the
 * same on every try; not retried. Node's own reason is kept (`certificate has expired`).
 */
export class UpstreamTlsError extends PermanentError {
  override readonly name = 'UpstreamTlsError';
  constructor(
    readonly path: string,
    readonly address: string,
    readonly code: string,
    reason: string,
    readonly variable: string | undefined,
  ) {
    super(`${reason} from ${address} (${code})${suffix(variable)}`);
  }
}

/** Codes of a certificate Node refused (its X509 verification codes, ERR_TLS_CERT_*) and of a peer that is no TLS server. */
const TLS_CODE = /^(ERR_TLS_CERT_|CERT_|UNABLE_TO_(GET|VERIFY|DECRYPT)_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|HOSTNAME_MISMATCH$|ERR_SSL_WRONG_VERSION_NUMBER$)/;

/** Pure: how a person would say what the TLS handshake found. */
function tlsReason(code: string, message: unknown): string {
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER') return 'no TLS answer (is the base URL http, not https?)';
  const said = typeof message === 'string' && message !== '' ? message.replace(/^Hostname\/IP does not match certificate's altnames: /, 'a certificate for another name: ') : code;
  return `TLS certificate not accepted: ${said}`;
}

/** Pure: host:port of a URL, the port spelled out also when it is the scheme's default (no credentials, no path, no query). */
export function hostPort(url: URL): string {
  return `${url.hostname}:${effectivePort(url)}`;
}

function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** What undici puts in a failed fetch's `cause`: a system error, or an AggregateError of one per address tried. */
interface Cause {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
}

function causeOf(err: unknown): Cause | undefined {
  const cause = (err as { cause?: unknown } | null)?.cause;
  return typeof cause === 'object' && cause !== null ? (cause as Cause) : undefined;
}

/** The system error codes of a cause: its own, else those of each address tried. */
function codesOf(cause: Cause | undefined): string[] {
  if (!cause) return [];
  if (typeof cause.code === 'string') return [cause.code];
  if (!Array.isArray(cause.errors)) return [];
  return cause.errors.map((e: unknown) => (e as { code?: unknown } | null)?.code).filter((c): c is string => typeof c === 'string');
}

/**
 * Pure: the permanent error a failed fetch (before any response) stands for, or undefined
 * when it is not one: a refused connection (every address tried refused it), or a port
 * fetch will not use.
 */
export function permanentConnectError(err: unknown, url: URL, path: string, variable: string | undefined): PermanentError | undefined {
  if (!(err instanceof TypeError)) return undefined;
  const cause = causeOf(err);
  const codes = codesOf(cause);
  // undici's own words for a blocked port, and the list, in case the words change.
  const port = effectivePort(url);
  if (cause?.message === 'bad port' || (codes.length === 0 && FETCH_BAD_PORTS.has(port) && err.message === 'fetch failed')) {
    return new UpstreamBadPortError(path, port, variable);
  }
  if (codes.length > 0 && codes.every((c) => c === 'ECONNREFUSED')) return new UpstreamRefusedError(path, hostPort(url), variable);
  const tls = codes.find((c) => TLS_CODE.test(c));
  if (tls !== undefined) return new UpstreamTlsError(path, hostPort(url), tls, tlsReason(tls, cause?.message), variable);
  return undefined;
}

/** What each transient code means, for people: the cause, then where. */
const REASONS: Readonly<Record<string, (host: string, address: string) => string>> = {
  ENOTFOUND: (host) => `DNS name not found: ${host}`,
  EAI_AGAIN: (host) => `DNS lookup of ${host} failed for now`,
  EHOSTUNREACH: (_, address) => `host unreachable: ${address}`,
  ENETUNREACH: (_, address) => `network unreachable: ${address}`,
  EHOSTDOWN: (_, address) => `host down: ${address}`,
  ETIMEDOUT: (_, address) => `timed out connecting to ${address}`,
  UND_ERR_CONNECT_TIMEOUT: (_, address) => `timed out connecting to ${address}`,
  ECONNRESET: (_, address) => `connection reset by ${address}`,
  EPIPE: (_, address) => `connection closed by ${address} while sending`,
  UND_ERR_SOCKET: (_, address) => `connection closed by ${address}`,
};

/**
 * Pure: why a fetch failed without a response, for UpstreamNetworkError: which of DNS, an
 * unreachable host or network, a connect timeout, a reset, with the system code
 * ("DNS name not found: api.example.com (ENOTFOUND)"); otherwise fetch's message with the
 * cause's code, as before ("fetch failed (UND_ERR_...)").
 */
export function networkReason(err: unknown, url: URL): string {
  const cause = causeOf(err);
  const code = codesOf(cause)[0];
  const reason = code !== undefined ? REASONS[code] : undefined;
  if (code !== undefined && reason) return `${reason(url.hostname, hostPort(url))} (${code})`;
  const e = err as { message?: string } | null;
  const detail = code ?? (typeof cause?.message === 'string' ? cause.message : undefined);
  return `${e?.message ?? String(err)}${detail ? ` (${detail})` : ''}`;
}
