// The bundled simulator as `tesync demo` runs it (and `tesync worker --demo` after it): the same
// data every time (its seed), dated up to today (demoCalendar), keys of its own, a rate budget
// like a real upstream's.
import { randomBytes } from 'node:crypto';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import type { Config } from '../lib/config.ts';

export const DEMO_TOKENS = 12;
/** As `tesync sim --tokens` allows. */
export const MAX_DEMO_TOKENS = 100_000;

/** Whole UTC days from `from` to `to` ('YYYY-MM-DD'). */
function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/**
 * Pure: the demo's history, as the simulator's `lastDate` and `historyDays`: from the first day
 * of the month a year before `today`'s month up to `today` (UTC), so that right after a demo
 * `tesync status` finds its data hours old, not months (the simulator's own default calendar
 * ends on a fixed day, for tests that want the same bytes every day). A demo on a later day of
 * the same month finds every earlier day as it was (the simulator's series are generated from
 * their first day) and adds the new ones; the first day moves once a month.
 */
export function demoCalendar(today: Date = new Date()): { lastDate: string; historyDays: number } {
  const lastDate = today.toISOString().slice(0, 10);
  const firstDate = new Date(Date.UTC(today.getUTCFullYear() - 1, today.getUTCMonth(), 1)).toISOString().slice(0, 10);
  return { lastDate, historyDays: daysBetween(firstDate, lastDate) + 1 };
}

export interface DemoSimulator {
  sim: Simulator;
  appKey: string;
  gatewayKey: string;
}

export async function startDemoSimulator(options: { tokens?: number; pageSize?: number; today?: Date } = {}): Promise<DemoSimulator> {
  const appKey = `demo_app_${randomBytes(8).toString('hex')}`;
  const gatewayKey = `demo_gw_${randomBytes(8).toString('hex')}`;
  const sim = await startSimulator({
    tokens: options.tokens ?? DEMO_TOKENS,
    ...demoCalendar(options.today),
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
