// Fetch through the upstream client and validate; an unreadable body is refused (kept as
// `invalid` with its raw text when the job ends), and the job fails without retry (the run
// goes on). Validating writes nothing: what it saw goes to the try's findings (findings.ts).
import type { z } from 'zod';
import { envelope, readMeta } from '../../schema/upstream/envelope.ts';
import { InvalidResponseError } from '../../lib/errors.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';
import { ROUTES } from '../../upstream/routes.ts';
import type { Fetched, JobContext } from '../kit/types.ts';
import { fieldPaths } from './fields.ts';

export type { Fetched } from '../kit/types.ts';

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
  ctx.findings.received({ route, response });
  const env = envelope.safeParse(response.body);
  if (!env.success) throw invalid(ctx, route, response, `not a { data, meta } envelope: ${env.error.issues[0]?.message}`);
  const count = options.pageOfList ? null : countMismatch(env.data);
  if (count) throw invalid(ctx, route, response, count);
  const data = schema.safeParse(env.data.data);
  if (!data.success) {
    const issue = data.error.issues[0];
    throw invalid(ctx, route, response, `data ${issue?.path.join('.') || ''} ${issue?.message ?? 'is invalid'}`.trim());
  }
  ctx.findings.understood.push(response);
  // Field names first seen on this kind, or gone from it, are recorded as drift when the job ends.
  ctx.findings.sightings.push({ source: ROUTES[route].source, route, template: ROUTES[route].template, runId: ctx.runId, at: ctx.now(), fields: fieldPaths(env.data.data), path: response.path, sha256: response.sha256 || null });
  return { response, data: data.data, meta: readMeta(env.data.meta), body: env.data as Record<string, unknown> };
}

/**
 * Refuses a response: its raw body is kept as `invalid` when the job ends (the findings), the
 * reason logged; returns the error to throw. The body goes as served: its text, and its bytes
 * where the text does not say them exactly.
 */
export function invalid(ctx: JobContext, route: UpstreamRequest['route'], response: UpstreamResponse, reason: string, options: { quiet?: boolean } = {}): InvalidResponseError {
  ctx.findings.refused.push({
    source: ROUTES[route].source,
    runId: ctx.runId,
    path: response.path,
    httpStatus: response.status,
    contentType: response.headers['content-type'] ?? null,
    text: response.text,
    ...(response.raw ? { bytes: response.raw } : {}),
  });
  if (!options.quiet) ctx.logger.warn({ path: response.path, reason }, 'response failed validation; recorded as invalid');
  return new InvalidResponseError(`${response.path}: ${reason}`, response.text);
}

/** A list whose `meta.count` says another length: items were lost or added on the way. */
function countMismatch(env: { data?: unknown; meta?: Record<string, unknown> | null | undefined }): string | null {
  const { count } = readMeta(env.meta);
  if (count === undefined || !Array.isArray(env.data) || env.data.length === count) return null;
  return `meta.count says ${count} items, the list has ${env.data.length}`;
}
