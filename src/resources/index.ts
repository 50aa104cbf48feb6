// The job catalog: name → definition. Both runners look jobs up here.
import { appBundleJob } from './app/bundle.ts';
import { appChartJob } from './app/chart.ts';
import { appChartsJob } from './app/charts.ts';
import { appHistoryJob } from './app/history.ts';
import { appMetricsJob } from './app/metrics.ts';
import { appScreenerJob } from './app/screener.ts';
import { appSnapshotJob } from './app/snapshot.ts';
import { appTokensJob } from './app/tokens.ts';
import { gatewayChartJob } from './gateway/chart.ts';
import { gatewayChartsJob } from './gateway/charts.ts';
import { gatewayHistoryJob } from './gateway/history.ts';
import { gatewayOpenapiJob } from './gateway/openapi.ts';
import { gatewayPageJob } from './gateway/page.ts';
import { gatewayScreenerJob } from './gateway/screener.ts';
import { gatewayTokensJob } from './gateway/tokens.ts';
import type { JobDefinition, JobRequest, Source } from '../engine/types.ts';

const ALL: JobDefinition<any>[] = [appMetricsJob, appTokensJob, appScreenerJob, appSnapshotJob, appHistoryJob, appChartsJob, appChartJob, appBundleJob,
  gatewayTokensJob, gatewayScreenerJob, gatewayOpenapiJob, gatewayPageJob, gatewayHistoryJob, gatewayChartsJob, gatewayChartJob];

export const catalog: ReadonlyMap<string, JobDefinition<any>> = new Map(ALL.map((j) => [j.name, j]));

/** Where a walk of a source starts; everything else is a follow-up. */
export function walkRoots(sources: readonly Source[]): JobRequest[] {
  const roots: JobRequest[] = [];
  if (sources.includes('app')) roots.push({ name: 'app.metrics', payload: {} });
  if (sources.includes('gateway')) roots.push({ name: 'gateway.tokens', payload: {} });
  return roots;
}

/** Resource groups, for `--only`. */
export function groups(): string[] {
  return [...new Set(ALL.map((j) => j.group))];
}

export type { JobContext, JobDefinition, JobRequest, JobResult, Source, SyncSettings } from '../engine/types.ts';
