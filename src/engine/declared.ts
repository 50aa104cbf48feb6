// A job declared by its request, its schema and a pure read (JobDefinition.read): the engine
// sends the one request, validates the response and hands it to the read; a Refusal the read
// returns goes back to the lifecycle like a handler's.
import { fetchData } from './fetch.ts';
import type { JobContext, JobDefinition, Outcome, Refusal } from './types.ts';

/** Whether a definition reads declaratively (request, schema, read) rather than by `handle`. */
export const isDeclared = (job: Pick<JobDefinition<any, any>, 'read' | 'schema'>): boolean => job.read !== undefined && job.schema !== undefined;

export async function readDeclared(ctx: JobContext, job: JobDefinition<any, any>, payload: unknown): Promise<Outcome | Refusal> {
  const fetched = await fetchData(ctx, { route: job.route, ...job.request?.(payload) }, job.schema!);
  const read = job.read!(ctx, payload, fetched);
  return 'refused' in read ? read : { asOf: fetched.meta.asOf, hash: fetched.response.sha256, ...read };
}
