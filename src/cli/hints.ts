// Turns a run's failures into sentences a person can act on: which source, which
// variable, where. Keys never appear; URLs are the configured base URLs (no credentials).
// The hint is chosen by the failure's fields (HTTP status, error class), never by its text:
// a reworded message keeps its hint.
import type { Config } from '../lib/config.ts';
import type { WalkFailure, WalkStats } from '../ports/run-ledger.ts';

/** No answer, and maybe one next time: a DNS name not found, a host unreachable, a timeout, a reset (the message says which). */
const UNREACHABLE = new Set(['UpstreamNetworkError', 'UpstreamTimeoutError']);
/** No answer, and the same next time: src/upstream/connect-errors.ts. Their messages name the address and the variable. */
const REFUSED = 'UpstreamRefusedError';
const BAD_PORT = 'UpstreamBadPortError';
const TLS = 'UpstreamTlsError';

export function failureHints(stats: WalkStats, config: Config): string[] {
  const hints = new Set<string>();
  for (const f of stats.failures) {
    const hint = failureHint(f, config);
    if (hint) hints.add(hint);
  }
  return [...hints];
}

function failureHint(f: WalkFailure, config: Config): string | undefined {
  // Entries without a source name it in their job (`gateway.screener`).
  const named = f.source ?? f.job.split('.')[0];
  const source = named === 'gateway' || named === 'app' ? named : undefined;
  if (!source) return undefined;
  const url = source === 'app' ? config.app?.url : config.gateway?.url;
  const urlVar = source === 'app' ? 'TE_APP_URL' : 'TE_GATEWAY_URL';
  const keyVar = source === 'app' ? 'TE_APP_API_KEY' : 'TE_GATEWAY_API_KEY';
  const name = source === 'app' ? 'app host' : 'gateway';
  if (f.httpStatus === 401) return `The ${name} refused the API key in ${keyVar} (401 unauthorized): check the key.`;
  if (f.type === REFUSED) return `Could not connect to the ${name}: ${withoutType(f)}; is it running there, and is ${urlVar} its base URL?`;
  if (f.type === BAD_PORT) return `Could not connect to the ${name}: ${withoutType(f)}; serve it on another port (or behind a proxy) and point ${urlVar} there.`;
  if (f.type === TLS) return `Could not connect to the ${name}: ${withoutType(f)}; check the server's certificate, or that ${urlVar} has the scheme and host it is issued for.`;
  if (f.type !== undefined && UNREACHABLE.has(f.type)) return `Could not reach the ${name} at ${url} (${urlVar}): ${withoutType(f)}`;
  if (f.httpStatus === 404 && (f.resource === 'metrics' || f.resource === 'tokens')) {
    return `The ${name} at ${url} has no ${f.resource} route: is ${urlVar} the base URL, without the /api/v1 or /v1 prefix?`;
  }
  // Only a redirect tesync refused fails a resource: one whose target is no route of the seeds on the base URL.
  if (f.httpStatus !== undefined && f.httpStatus >= 300 && f.httpStatus < 400) {
    return `The ${name} at ${url} redirected requests where tesync does not follow (${f.httpStatus}; only redirects to a documented ${source === 'app' ? '/api/v1' : '/v1'} route on ${urlVar} are followed): if the API moved, point ${urlVar} at its new base URL.`;
  }
  return undefined;
}

/** The message for people, without the class name the hint already stands for. */
function withoutType(f: WalkFailure): string {
  const prefix = `${f.type}: `;
  return f.error.startsWith(prefix) ? f.error.slice(prefix.length) : f.error;
}
