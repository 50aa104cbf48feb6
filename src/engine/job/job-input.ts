// What the pure parts of a resource are handed (kit/types.ts `ReadInput`): its payload and state,
// the run's settings and clock, and the warehouse's answers to what it declares it needs; and
// the try's one store visit before its fetch that gathers them (`outset`): read, then commit
// (commit.ts is the visit after it).
import { readState, type ResourceStateRow } from '../../store/books/resource-state.ts';
import { rowsOf, type Db } from '../../store/connection.ts';
import type { Executor } from '../../store/write/table-shape.ts';
import { markerUnchanged } from './change.ts';
import { gatherKnown } from './knowledge.ts';
import { stillNotFound } from './not-found.ts';
import type { DeclarationInput, Declared, JobContext, JobDefinition, KnownAsk, ReadInput, Unchanged } from '../kit/types.ts';

/** Which way a try goes: fetched, skipped as unchanged (its marker, or a replayed record), or left alone after upstream's 404. */
export type Way = 'fetch' | 'unchanged' | 'not found';

/** What a try knows before its fetch. */
export interface Outset<P> {
  state: ResourceStateRow | undefined;
  /** The job's declaration read (`JobDefinition.declared`). */
  declared: Declared;
  way: Way;
  /** What the read is handed (unchanged: the stored plan), with the answers the way taken asks for. */
  input: ReadInput<P>;
}

/**
 * The try's one visit to the store before its fetch, one transaction: the resource's state,
 * then the job's declaration read (its one call into the resource before the read), the way
 * the try goes, and the warehouse's answers to the questions of that way: the read's, or a
 * skip's stored plan's.
 */
export async function outset<P>(ctx: JobContext, job: JobDefinition<P>, payload: P, resource: string): Promise<Outset<P>> {
  return ctx.warehouse.db.transaction(async (t) => {
    const tx = t as unknown as Executor;
    const state = await readState(tx, { source: job.source, resource });
    const base = declarationInput(ctx, payload, state);
    const declared = job.declared(base);
    const way = wayOf(ctx, state, declared);
    const asks = way === 'fetch' ? declared.knows : way === 'unchanged' ? declared.unchangedKnows : [];
    const known = await gatherKnown({ db: tx as unknown as Db, query: async (s) => rowsOf(await tx.execute(s)) }, asks);
    return { state, declared, way, input: { ...base, known } };
  });
}

/** What a declaration read is handed. */
export function declarationInput<P>(ctx: JobContext, payload: P, state: ResourceStateRow | undefined): DeclarationInput<P> {
  return { payload, state, settings: ctx.settings, runId: ctx.runId, now: ctx.now };
}

/**
 * Pure: the way a try goes. A replayed try goes the way its record says (types.ts `Replaying`),
 * never by a marker; a full sync fetches everything; a marker as at the last success (and the
 * rest as before) skips the fetch; one a 404 came under leaves the resource alone.
 */
function wayOf(ctx: Pick<JobContext, 'replaying' | 'settings' | 'now'>, state: ResourceStateRow | undefined, d: Pick<Declared, 'marker' | 'sameAsBefore'>): Way {
  const replayed = ctx.replaying?.how;
  if (replayed === 'unchanged' || replayed === 'confirmed') return 'unchanged';
  if (replayed || ctx.settings.full || !d.marker) return 'fetch';
  if (markerUnchanged(state, d.marker, ctx.now(), ctx.settings.markerMaxAgeMs) && d.sameAsBefore) return 'unchanged';
  return stillNotFound(state, d.marker) ? 'not found' : 'fetch';
}

/**
 * What a job stored plans and writes when it is not read (`JobDefinition.unchanged`), from
 * `input`: whose answers are the stored plan's, or, with `asks` (`Declared.unchangedKnows`),
 * asked now, one more visit (a 304, a list that failed, a response superseded).
 */
export async function storedPlan<P>(ctx: JobContext, job: JobDefinition<P>, input: DeclarationInput<P> & { known?: ReadInput<P>['known'] }, asks?: KnownAsk): Promise<Unchanged> {
  if (!job.unchanged) return {};
  const known = asks === undefined ? (input.known ?? {}) : await gatherKnown(ctx.warehouse, asks);
  return job.unchanged.plan({ ...input, known });
}
