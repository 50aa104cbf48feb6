// What the pure parts of a resource are handed (kit/types.ts `ReadInput`): its payload and state,
// the run's settings and clock, and the warehouse's answers to what it declares it needs.
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import { gatherKnown } from './knowledge.ts';
import type { JobContext, JobDefinition, KnownAsk, ReadInput, Unchanged } from '../kit/types.ts';

export async function inputOf<P>(ctx: JobContext, payload: P, state: ResourceStateRow | undefined, knows?: (payload: P, state: ResourceStateRow | undefined) => KnownAsk): Promise<ReadInput<P>> {
  return { payload, state, known: await gatherKnown(ctx.warehouse, knows?.(payload, state)), settings: ctx.settings, runId: ctx.runId, now: ctx.now };
}

/** What a job stored plans and writes when it is not read (`JobDefinition.unchanged`). */
export async function storedPlan<P>(ctx: JobContext, job: JobDefinition<P>, payload: P, state: ResourceStateRow | undefined): Promise<Unchanged> {
  if (!job.unchanged) return {};
  return job.unchanged.plan(await inputOf(ctx, payload, state, job.unchanged.knows));
}
