// The write record (store/books/write-record.ts) from the lifecycle's side: the bodies a try
// used, in the order it read them, and the record of a try that read bodies and wrote none.
// A write records itself inside its own transaction (lifecycle.ts), so that the record and the
// rows commit together; this only gathers what it says.
import { bodyKey, type RawBody } from '../../ports/recorder.ts';
import { recordWrite, type WriteHow, type WriteRecord } from '../../store/books/write-record.ts';
import type { JobContext, JobDefinition } from '../kit/types.ts';

/** The job a record names: what replay runs again. */
export interface Writer {
  job: Pick<JobDefinition<any>, 'name' | 'source'>;
  payload: unknown;
  resource: string;
}

export function writeRecord(ctx: JobContext, w: Writer, how: WriteHow, bodies: readonly number[]): WriteRecord {
  return { runId: ctx.runId, source: w.job.source, resource: w.resource, job: w.job.name, payload: w.payload, how, bodies };
}

/**
 * The archived ids of the bodies the try read, in order (a body read twice, twice: a confirming
 * fetch may bring the same one again), then those its writes name that it did not read (the
 * body of a refusal a row links to). A body never archived (a 304) has none.
 */
export async function bodiesUsed(ctx: JobContext, source: JobDefinition<any>['source'], named: readonly (number | null)[] = []): Promise<number[]> {
  const read = ctx.findings.responses.filter((r) => r.sha256 !== '');
  const ids = read.length === 0 ? new Map<string, number>() : await ctx.recorder.rawResponseIds(source, read);
  return usedIds(read, ids, named);
}

/** Pure: bodiesUsed's list, from the ids of the bodies (`ids`, by `bodyKey`): in a commit, its own archive's. */
export function usedIds(read: readonly RawBody[], ids: ReadonlyMap<string, number>, named: readonly (number | null)[] = []): number[] {
  const out: number[] = [];
  for (const r of read) {
    const id = r.sha256 === '' ? undefined : ids.get(bodyKey(r));
    if (id !== undefined) out.push(id);
  }
  for (const id of named) if (id !== null && !out.includes(id)) out.push(id);
  return out;
}

/**
 * A try that read bodies and wrote nothing, recorded when it ends: `refused` when it refused
 * them (replay reads them again at their receipt), else `unwritten`. Never fails the job.
 */
export async function recordUnwritten(ctx: JobContext, w: Writer): Promise<void> {
  if (ctx.findings.written || ctx.findings.responses.length === 0) return;
  try {
    const bodies = await bodiesUsed(ctx, w.job.source);
    if (bodies.length > 0) await recordWrite(ctx.warehouse.db, writeRecord(ctx, w, ctx.findings.refused.length > 0 ? 'refused' : 'unwritten', bodies));
  } catch (err) {
    ctx.logger.error({ err }, 'could not record the bodies the try read');
  }
}
