// Runs a real in-process sync against a simulator, as `tesync sync` does.
import { loadConfig } from '../../src/lib/config.ts';
import { performSync, type SyncOutcome, type SyncRequest } from '../../src/cli/sync-session.ts';
import type { Logger } from '../../src/lib/logger.ts';
import type { Simulator } from '../../sim/index.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import type { Source } from '../../src/resources/index.ts';

export interface SyncEnv {
  appKey?: string;
  gatewayKey?: string;
  env?: Record<string, string>;
}

export function simConfig(sim: Simulator, e: SyncEnv, sources: Source[]) {
  return loadConfig({
    ...(sources.includes('app') ? { TE_APP_URL: sim.url, ...(e.appKey ? { TE_APP_API_KEY: e.appKey } : {}) } : {}),
    ...(sources.includes('gateway') && e.gatewayKey ? { TE_GATEWAY_URL: sim.url, TE_GATEWAY_API_KEY: e.gatewayKey } : {}),
    TE_CONCURRENCY: '8',
    TE_REQUEST_TIMEOUT_MS: '5000',
    ...e.env,
  });
}

/** `extra`: a whole fetch, the walk's tokens or groups (the planners always run), the known-time clock, the jobs. */
export function syncOnce(sim: Simulator, warehouse: Warehouse, logger: Logger, e: SyncEnv, sources: Source[], extra: { full?: boolean; tokens?: string[]; only?: string[]; clock?: () => Date; catalog?: SyncRequest['catalog'] } = {}): Promise<SyncOutcome> {
  return performSync(simConfig(sim, e, sources), logger, warehouse, { sources, trigger: 'test', retry: FAST_RETRY_POLICY, ...extra });
}

/** What a `tesync` process is given to mirror both sources of `sim` into `databaseUrl`, with `over` on top. */
export function commandEnv<V extends string | undefined = string>(sim: Pick<Simulator, 'url'>, keys: { appKey: string; gatewayKey: string }, databaseUrl: string, over: Record<string, V> = {}): Record<string, string | V> {
  return { TE_APP_URL: sim.url, TE_APP_API_KEY: keys.appKey, TE_GATEWAY_URL: sim.url, TE_GATEWAY_API_KEY: keys.gatewayKey, DATABASE_URL: databaseUrl, ...over };
}
