// A try's commit: its one store visit after the fetch, one transaction (a try is read, then
// commit: job-input.ts `outset` is the visit before it). In it, in this order: the known time
// and when the responses were received; the check that no newer response of the resource is
// written; the removals the write would make (a mass removal rolls the transaction back, so
// that the lifecycle fetches again: removals.ts); the bodies the try read, archived (taken
// from the recorder, so that no flush interrupts the read) and the rows linked to them; the
// write record; each write's rows (a new key range probed first), its removals; the resource's
// state. Rows, bodies, state and records commit together or not at all. The fields the
// responses carried (field drift) are kept after it, when the try ends (lifecycle.ts
// `keepFindings`): field drift's per-route cache is shared by the process's jobs, and a
// statement of one job's transaction awaited by another's would wait on a lock no server sees.
import { and, eq, inArray } from 'drizzle-orm';
import { resourceState } from '../../schema/warehouse/sync.ts';
import { isRecord } from '../../schema/upstream/values.ts';
import { NOTHING_TAKEN, type RawBody } from '../../ports/recorder.ts';
import { archiveBodies } from '../../store/books/request-log.ts';
import { forgetNotFound, newerReceived, retireUnplanned, writeSuccess, writeUnchanged } from '../../store/books/resource-state.ts';
import { recordWrite } from '../../store/books/write-record.ts';
import { beginWrite, beginWriteReceived, closingBody } from '../../store/write/known-time.ts';
import { removeAbsent, removeKeys, SET_KEPT_WHILE } from '../../store/write/set-removal.ts';
import type { Executor } from '../../store/write/table-shape.ts';
import { fanOut } from './fan-out.ts';
import { partialNote } from './partial-note.ts';
import { linkToBodies } from './provenance.ts';
import type { Prepared, Read } from './reading.ts';
import { pendingRemovals, type PendingRemoval } from './removals.ts';
import { usedIds, writeRecord } from './write-record.ts';
import type { JobContext, JobDefinition, JobRequest, Outcome, TableWrite } from '../kit/types.ts';

/** The job a commit writes for (lifecycle.ts `ResolvedJob`). */
export interface Committing {
  job: JobDefinition<any>;
  payload: unknown;
  resource: string;
  children: JobDefinition<any>[];
  childGroups: Record<string, string[]>;
}

/**
 * When the try's responses were received: how long ago the last one arrived, on the pacing
 * clock (conditional.ts `ConditionalUpstream.sinceLastMs`), read as the transaction starts.
 */
export type SinceLast = () => number;

/** A read written, or found older than the one written (`newer`), or not written: its removals did not stand (`rolledBack`). */
export type Committed = { rows: number; written: Outcome; followUps: JobRequest[] } | { newer: Date } | { rolledBack: PendingRemoval[] };

/** Pure: the status of a written outcome (`partial` when some cells were unreadable). */
export function committedStatus(o: Pick<Outcome, 'status' | 'cells'>): string {
  return (o.cells?.unreadable ?? 0) > 0 && o.status === 'ok' ? 'partial' : o.status;
}

/** Pure: the name a resource's writes take their turn by (`sync.begin_write`). */
function writeLock(source: string, resource: string): string {
  return `${source}/${resource}`;
}

/** Thrown inside the transaction to roll it back: the read's removals did not stand. */
class RolledBack extends Error {
  constructor(readonly pending: PendingRemoval[]) {
    super('rolled back: the removals are fetched again');
  }
}

/**
 * Writes a read: its rows and the resource's state in one transaction, unless `stands` says the
 * removals it would make (read inside it) need another response first: then nothing of it
 * stays. `etag`: the tag to keep (the one response's).
 */
export async function commitRead(
  ctx: JobContext,
  c: Committing,
  marker: string | null,
  read: Read,
  etag: string | null,
  sinceLast: SinceLast,
  stands: (pending: PendingRemoval[]) => boolean,
): Promise<Committed> {
  const { job, resource, children, childGroups } = c;
  const { o, prepared } = read;
  const { followUps, wholeList } = fanOut(children, o.listed, ctx.settings);
  const writes = (o.writes ?? []) as TableWrite[];
  const unreadable = o.cells?.unreadable ?? 0;
  const details = o.cells && unreadable > 0 ? { ...(isRecord(o.details) ? o.details : {}), ...o.cells.summary() } : o.details;
  try {
    const rows = await inWrite(ctx, c, prepared, 'read', async (tx, received, bodies) => {
      // Only if no writer of the resource wrote a newer response first: the newest response wins.
      const newer = await newerReceived(tx, { source: job.source, resource }, received);
      if (newer) return { newer };
      const pending = await pendingRemovals(tx, writes);
      if (!stands(pending)) throw new RolledBack(pending);
      const ids = await bodies();
      // Rows written: inserted, changed or removed (a row received the same is left as it is).
      let n = 0;
      // One after another: a new key range's savepoint must hold its own statements only.
      for (let i = 0; i < writes.length; i++) {
        n += await prepared.upserts[i]!.run(tx);
        const w = writes[i]!;
        if (!w.replace) continue;
        // A set kept while something else holds is judged after this transaction's earlier
        // writes; any other removes what the check before it found absent (usually nothing).
        const keptWhile = SET_KEPT_WHILE in w.replace;
        const absent = pending.find((p) => p.write === i)?.absent ?? [];
        if (!keptWhile && absent.length === 0) continue;
        // What leaves is closed by the body that no longer carried it.
        await closingBody(tx, ids[i] ?? null);
        n += keptWhile ? await removeAbsent(tx, w.table, w.rows, w.replace, ctx.runId) : await removeKeys(tx, w.table, w.replace, absent, ctx.runId);
      }
      if (wholeList) {
        await forgetNotFound(tx, job.source, wholeList);
        await retireUnplanned(tx, job.source, wholeList, childGroups);
      }
      if (o.otherStates && o.otherStates.resources.length > 0) {
        await tx
          .update(resourceState)
          .set({ status: o.otherStates.status, lastRunId: ctx.runId })
          .where(and(eq(resourceState.source, job.source), inArray(resourceState.resource, o.otherStates.resources)));
      }
      await writeSuccess(tx, {
        source: job.source,
        resource,
        kind: job.group,
        status: committedStatus(o),
        runId: ctx.runId,
        at: ctx.now(),
        freshness: o.freshness !== undefined ? o.freshness : marker,
        asOf: o.asOf ?? null,
        hash: o.hash ?? null,
        etag,
        rowCount: o.rowCount !== undefined ? o.rowCount : prepared.upserts.reduce((sum, p) => sum + p.rows, 0),
        details: details ?? null,
        // Written, but not whole: why, where people look for what went wrong.
        note: partialNote(details),
        receivedAt: received,
      });
      return n;
    }, { sinceLast });
    return typeof rows === 'number' ? { rows, written: o, followUps } : rows;
  } catch (err) {
    if (err instanceof RolledBack) return { rolledBack: err.pending };
    throw err;
  }
}

/**
 * A job found unchanged: its state says so, with what it still writes (no body read), in one
 * transaction. `confirmed`: upstream said so (a 304, received `sinceLast` ago; a replayed one,
 * at its record's time), which counts as a successful fetch, unless a newer response of the
 * resource is written by then.
 */
export async function commitUnchanged(ctx: JobContext, c: Committing, prepared: Prepared, confirmed: SinceLast | null): Promise<number | { newer: Date }> {
  const { job, resource } = c;
  const key = { source: job.source, resource, runId: ctx.runId, at: ctx.now(), confirmed: confirmed !== null };
  // A marker's skip writes no row and confirms no response of its own: one statement.
  if (prepared.upserts.length === 0 && !confirmed) {
    await writeUnchanged(ctx.warehouse.db, key);
    return 0;
  }
  return inWrite(
    ctx,
    c,
    prepared,
    confirmed ? 'confirmed' : 'unchanged',
    async (tx, received, bodies) => {
      const newer = confirmed && (await newerReceived(tx, key, received));
      if (newer) return { newer };
      await bodies();
      let n = 0;
      for (const p of prepared.upserts) n += await p.run(tx);
      await writeUnchanged(tx, { ...key, receivedAt: confirmed ? received : null });
      return n;
    },
    confirmed ? { sinceLast: confirmed } : {},
  );
}

/**
 * The transaction of a write, and what every write does in it: the known time first (after
 * any writer of the resource that took its own first), with when the responses were received;
 * then `write`, which calls `bodies` once it knows it writes: the try's bodies archived, its
 * rows linked to them, its record written; the fields its responses carried last. Returns
 * what `write` returns; the bodies taken from the recorder go back to it unless they commit.
 */
async function inWrite<T>(
  ctx: JobContext,
  c: Committing,
  prepared: Prepared,
  how: 'read' | 'unchanged' | 'confirmed',
  write: (tx: Executor, received: Date, bodies: () => Promise<(number | null)[]>) => Promise<T>,
  o: { sinceLast?: SinceLast },
): Promise<T> {
  const { job, resource } = c;
  const read = ctx.findings.responses;
  const wanted: RawBody[] = [...read, ...prepared.links.bodies].filter((b) => b.sha256 !== '');
  const taken = (wanted.length > 0 && ctx.recorder.take?.(job.source, wanted)) || NOTHING_TAKEN;
  // A body the recorder is writing now is looked up once that write is done.
  await taken.written;
  let wrote = false;
  try {
    const result = await ctx.warehouse.db.transaction(async (t) => {
      const tx = t as unknown as Executor;
      const lock = writeLock(job.source, resource);
      const replayed = ctx.replaying;
      // When the answer was received, on the warehouse's clock: the clock at the transaction's
      // start less how long ago its last response arrived (a duration, on the process's
      // monotonic counter): the newest response of a resource wins, and reading the clock costs no visit
      // of its own between the fetch and the commit. A replayed try's, as its record says.
      const received = replayed ? (await beginWrite(tx, null, lock, replayed.knownAt), replayed.at) : (await beginWriteReceived(tx, lock, o.sinceLast?.() ?? 0)).received;
      const bodies = async () => {
        const ids = await archiveBodies(tx, job.source, taken.records, wanted, ctx.logger);
        const ofWrite = linkToBodies(prepared.links, ids, prepared.upserts.map((u) => u.sending));
        // The body whose answer closes what the write removes, and every version it closes.
        if (ofWrite[0] != null) await closingBody(tx, ofWrite[0]);
        if (how === 'read' || prepared.upserts.length > 0) await recordWrite(tx, writeRecord(ctx, c, how, how === 'read' ? usedIds(read, ids, ofWrite) : []));
        return ofWrite;
      };
      return write(tx, received, bodies);
    });
    wrote = typeof result === 'number';
    if (wrote) ctx.findings.written = true;
    return result;
  } finally {
    // Bodies not archived here go back to the recorder.
    if (!wrote) taken.giveBack();
  }
}

