// The write record (sync.writes): each write of a job, with its known time and the archived
// bodies it used, written in the write's own transaction; and each try that read bodies and
// wrote none. With the archive (sync.raw_responses) it is all `tesync replay` writes a
// warehouse again from (src/replay/): the rows say which body they came from, but not which
// job read it, nor the bodies read beside it, nor a write that used none.
import { sql } from 'drizzle-orm';
import { writes } from '../../schema/warehouse/sync.ts';
import { jsonText } from '../../lib/json.ts';
import { SERVER_CLOCK } from '../warehouse-clock.ts';
import type { Executor } from '../write/table-shape.ts';

/**
 * How a try ended, as its record says: `read`, rows written from bodies; `unchanged`, a marker's
 * skip that still wrote what it stored; `confirmed`, a 304 that did; `refused`, bodies read and
 * not understood; `unwritten`, bodies read and nothing written otherwise (a failure, a
 * response superseded by a newer one).
 */
export type WriteHow = 'read' | 'unchanged' | 'confirmed' | 'refused' | 'unwritten';

/** The hows of a try that wrote: their known time is their write's. */
export const WRITTEN: readonly WriteHow[] = ['read', 'unchanged', 'confirmed'];

export interface WriteRecord {
  runId: string;
  source: string;
  resource: string;
  /** The job's name and payload: what replay runs again. */
  job: string;
  payload: unknown;
  how: WriteHow;
  /** sync.raw_responses ids, in the order the try read them. */
  bodies: readonly number[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Records a try. One that wrote is recorded inside its write, after `beginWrite`: its known
 * time is the transaction's (`sync.known_at()`), and it commits or not with the rows. One that
 * wrote nothing is recorded when it ends, at the warehouse's clock then.
 */
export async function recordWrite(db: Pick<Executor, 'insert'>, r: WriteRecord): Promise<void> {
  await db.insert(writes).values({
    knownAt: WRITTEN.includes(r.how) ? sql`"sync"."known_at"()` : SERVER_CLOCK,
    runId: UUID.test(r.runId) ? r.runId : null,
    source: r.source,
    resource: r.resource,
    job: r.job,
    // Lossless: a payload's numbers go as written.
    payload: sql`${jsonText(r.payload) ?? 'null'}::jsonb`,
    how: r.how,
    bodies: [...r.bodies],
  });
}
