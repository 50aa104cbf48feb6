// The bundled simulator as `tesync demo` runs it (and `tesync worker --demo` after it): the same
// data every time (its seed), keys of its own, a rate budget like a real upstream's.
import { randomBytes } from 'node:crypto';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import type { Config } from '../lib/config.ts';

export const DEMO_TOKENS = 12;
/** As `tesync sim --tokens` allows. */
export const MAX_DEMO_TOKENS = 100_000;

export interface DemoSimulator {
  sim: Simulator;
  appKey: string;
  gatewayKey: string;
}

export async function startDemoSimulator(options: { tokens?: number; pageSize?: number } = {}): Promise<DemoSimulator> {
  const appKey = `demo_app_${randomBytes(8).toString('hex')}`;
  const gatewayKey = `demo_gw_${randomBytes(8).toString('hex')}`;
  const sim = await startSimulator({
    tokens: options.tokens ?? DEMO_TOKENS,
    historyDays: 365,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
    // A budget like a real upstream's, so the pacing shows.
    rateLimits: { appPublic: { limit: 120, windowMs: 10_000 }, appKey: { limit: 60, windowMs: 10_000 }, gateway: { limit: 120, windowMs: 10_000 } },
    latencyMs: [5, 40],
    paging: { pageSize: options.pageSize ?? 0 },
    // ETags and 304s, so the demo's second sync shows conditional requests.
    etags: true,
  });
  return { sim, appKey, gatewayKey };
}

/** Pure: `config` with the demo simulator as both upstreams (its keys among the secrets). */
export function withDemoUpstreams(config: Config, demo: Pick<DemoSimulator, 'appKey' | 'gatewayKey'> & { url: string }): Config {
  return {
    ...config,
    app: { url: demo.url, apiKey: demo.appKey },
    gateway: { url: demo.url, apiKey: demo.gatewayKey },
    secrets: [...config.secrets, demo.appKey, demo.gatewayKey],
  };
}
