// A job is one resource of one source. Its definition is a catalog entry: name, payload
// schema, and a handler that fetches, validates, normalizes, writes, and returns follow-ups.
// Handlers know neither runner (in-process or BullMQ).
import type { z } from 'zod';
import type { Logger } from '../src/logger.ts';
import type { Upstream } from '../src/upstream/index.ts';
import type { Warehouse } from '../src/warehouse/connection.ts';

export type Source = 'app' | 'gateway';

/** Settings a handler may read; built once by the composition root. */
export interface SyncSettings {
  /** Ignore change markers and fetch everything. */
  full: boolean;
  /** App key configured: bundles are fetched (else recorded `skipped`). */
  appBundles: boolean;
  historyOverlapDays: number;
  historyFromParam: string;
  gatewayHistoryPeriods: readonly string[];
  gatewayChartTimeframes: readonly string[];
  /** How long an unchanged marker is trusted before the resource is fetched anyway. */
  markerMaxAgeMs: number;
  /** Write batch size for large row sets. */
  batchSize: number;
}

export interface JobContext {
  warehouse: Warehouse;
  upstream: Upstream;
  logger: Logger;
  now: () => Date;
  runId: string;
  settings: SyncSettings;
}

/** Work a handler asks for next; the runner dedupes by resource. */
export interface JobRequest {
  name: string;
  payload: unknown;
}

export interface JobResult {
  /** ok | unchanged | skipped | not_materialized | unauthorized | no_credits | missing_scope | partial */
  status: string;
  rows: number;
  followUps?: JobRequest[];
}

export interface JobDefinition<P = unknown> {
  name: string;
  source: Source;
  /** Resource group: for status reports, schedules and `--only`. */
  group: string;
  payload: z.ZodType<P>;
  /** The resource this payload stands for (resource_state key, job id). */
  resource(payload: P): string;
  /** The token the job is about, for `--token` filters. */
  token?(payload: P): string | undefined;
  handle(ctx: JobContext, payload: P): Promise<JobResult>;
}

export function defineJob<P>(definition: JobDefinition<P>): JobDefinition<P> {
  return definition;
}

export function request<P>(job: JobDefinition<P>, payload: P): JobRequest {
  return { name: job.name, payload };
}
