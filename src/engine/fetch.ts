// Fetch through the upstream client and validate; an unreadable body is recorded as
// `invalid` with its raw text kept, then the job fails without retry (the run goes on).
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { envelope, readMeta, type EnvelopeMeta } from '../schema/upstream/envelope.ts';
import { rawResponses } from '../schema/warehouse/sync.ts';
import { InvalidResponseError } from '../lib/errors.ts';
import type { UpstreamRequest, UpstreamResponse } from '../upstream/index.ts';
import { ROUTES } from '../upstream/routes.ts';
import { recordFieldDrift } from '../store/field-drift.ts';
import { SERVER_CLOCK } from '../store/known-time.ts';
import type { JobContext } from './types.ts';
import { fieldPaths } from './fields.ts';

export interface Fetched<T> {
  response: UpstreamResponse;
  data: T;
  meta: EnvelopeMeta;
  /** The whole body, for payload columns that want more than `data`. */
  body: Record<string, unknown>;
}

// The responses each job has read (a runner gives every job a context object of its own), so
// that a refusal found later, while writing, can keep the bodies it came from (understood.ts).
const received = new WeakMap<JobContext, { route: UpstreamRequest['route']; response: UpstreamResponse }[]>();

// Every response each job has read and understood, in order: the bodies its rows come from.
const understood = new WeakMap<JobContext, UpstreamResponse[]>();

/** The responses this job has read and understood so far (provenance.ts). */
export function understoodBy(ctx: JobContext): readonly UpstreamResponse[] {
  return understood.get(ctx) ?? [];
}

/** The responses this job has read since the last call. */
export function takeReceived(ctx: JobContext): { route: UpstreamRequest['route']; response: UpstreamResponse }[] {
  const list = received.get(ctx) ?? [];
  received.delete(ctx);
  return list;
}

export async function fetchData<S extends z.ZodType>(ctx: JobContext, req: Omit<UpstreamRequest, 'runId'>, schema: S): Promise<Fetched<z.output<S>>> {
  const response = await ctx.upstream.get({ ...req, runId: ctx.runId });
  return validate(ctx, req.route, response, schema);
}

/**
 * `pageOfList`: the response is one page of a longer list, whose `meta.count` may count the
 * page or the whole list; the list reader checks it once every page is read (fetch-list.ts).
 */
export async function validate<S extends z.ZodType>(
  ctx: JobContext,
  route: UpstreamRequest['route'],
  response: UpstreamResponse,
  schema: S,
  options: { pageOfList?: boolean } = {},
): Promise<Fetched<z.output<S>>> {
  const list = received.get(ctx);
  if (list) list.push({ route, response });
  else received.set(ctx, [{ route, response }]);
  const env = envelope.safeParse(response.body);
  if (!env.success) throw await invalid(ctx, route, response, `not a { data, meta } envelope: ${env.error.issues[0]?.message}`);
  const count = options.pageOfList ? null : countMismatch(env.data);
  if (count) throw await invalid(ctx, route, response, count);
  const data = schema.safeParse(env.data.data);
  if (!data.success) {
    const issue = data.error.issues[0];
    throw await invalid(ctx, route, response, `data ${issue?.path.join('.') || ''} ${issue?.message ?? 'is invalid'}`.trim());
  }
  const read = understood.get(ctx);
  if (read) read.push(response);
  else understood.set(ctx, [response]);
  // Field names first seen on this kind, or gone from it, are recorded as drift (never throws).
  await recordFieldDrift(ctx.warehouse, ctx.logger, { source: ROUTES[route].source, kind: route, template: ROUTES[route].template, runId: ctx.runId, at: ctx.now(), fields: fieldPaths(env.data.data), path: response.path, sha256: response.sha256 || null });
  return { response, data: data.data, meta: readMeta(env.data.meta), body: env.data as Record<string, unknown> };
}

/**
 * Keeps the raw body as `invalid` in sync.raw_responses (Postgres text cannot hold NUL, the
 * one character replaced) and returns the error to throw.
 */
export async function invalid(ctx: JobContext, route: UpstreamRequest['route'], response: UpstreamResponse, reason: string, options: { quiet?: boolean } = {}): Promise<InvalidResponseError> {
  const source = ROUTES[route].source;
  const sha256 = createHash('sha256').update(response.text).digest('hex');
  // The server's clock, as every time in the warehouse.
  const at = SERVER_CLOCK;
  await ctx.warehouse.db
    .insert(rawResponses)
    .values({
      runId: ctx.runId,
      source,
      path: response.path,
      fetchedAt: at,
      lastSeenAt: at,
      httpStatus: response.status,
      contentType: response.headers['content-type'] ?? null,
      // Its own hash space: the recorder may store the same bytes as a valid body.
      sha256: `invalid:${sha256}`,
      bodyText: response.text.replaceAll('\u0000', '\uFFFD'),
      status: 'invalid',
    })
    .onConflictDoUpdate({ target: [rawResponses.source, rawResponses.path, rawResponses.sha256], set: { lastSeenAt: at, runId: ctx.runId } })
    .catch((err: unknown) => ctx.logger.error({ err }, 'could not keep the invalid body'));
  if (!options.quiet) ctx.logger.warn({ path: response.path, reason }, 'response failed validation; recorded as invalid');
  return new InvalidResponseError(`${response.path}: ${reason}`, response.text);
}

/** A list whose `meta.count` says another length: items were lost or added on the way. */
function countMismatch(env: { data?: unknown; meta?: Record<string, unknown> | null | undefined }): string | null {
  const { count } = readMeta(env.meta);
  if (count === undefined || !Array.isArray(env.data) || env.data.length === count) return null;
  return `meta.count says ${count} items, the list has ${env.data.length}`;
}
