// Turns a run's failures into sentences a person can act on: which source, which
// variable, where. Keys never appear; URLs are the configured base URLs (no credentials).
import type { Config } from '../config.ts';
import type { WalkStats } from '../runner/stats.ts';

export function failureHints(stats: WalkStats, config: Config): string[] {
  const hints = new Set<string>();
  for (const f of stats.failures) {
    const source = f.job.startsWith('gateway.') ? 'gateway' : 'app';
    const url = source === 'app' ? config.app?.url : config.gateway?.url;
    const urlVar = source === 'app' ? 'TE_APP_URL' : 'TE_GATEWAY_URL';
    const keyVar = source === 'app' ? 'TE_APP_API_KEY' : 'TE_GATEWAY_API_KEY';
    const name = source === 'app' ? 'app host' : 'gateway';
    if (/failed with 401\b/.test(f.error)) {
      hints.add(`The ${name} refused the API key in ${keyVar} (401 unauthorized): check the key.`);
    } else if (/^UpstreamNetworkError|^UpstreamTimeoutError/.test(f.error)) {
      hints.add(`Could not reach the ${name} at ${url} (${urlVar}): ${f.error.split(': ').slice(2).join(': ') || f.error}`);
    } else if (/failed with 404\b/.test(f.error) && (f.resource === 'metrics' || f.resource === 'tokens')) {
      hints.add(`The ${name} at ${url} has no ${f.resource} route: is ${urlVar} the base URL, without the /api/v1 or /v1 prefix?`);
    }
  }
  return [...hints];
}
