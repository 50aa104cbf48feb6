// A resource asked only from where its last success ended, as dlt's `incremental` declares it:
// the job's state keeps a cursor (the newest data time read, and when the resource was last
// fetched whole); the next request starts a lag before the cursor, so revised values are
// overwritten by key, and the whole resource is fetched again every so often, for revisions
// older than the lag. The resource declares the numbers (`JobDefinition.incremental`); the
// rules are here, once, pure. A filter upstream refuses is asked again whole by the reader run
// (engine/fetch/reader.ts `fetchSince`).
import { utcDate } from './rows.ts';
import type { Incremental, SyncSettings } from './types.ts';

export type { Incremental } from './types.ts';

/** What the state's details keep between runs. */
export interface Cursor {
  /** The newest data time read (ISO). */
  lastTs?: string;
  /** When the resource was last fetched whole (ISO). */
  lastFullAt?: string;
}

/** Pure: whether the resource is to be fetched whole this time, all the same. */
export function wholeFetchDue(inc: Incremental, cursor: Cursor, settings: SyncSettings, now: Date): boolean {
  return !cursor.lastFullAt || now.getTime() - new Date(cursor.lastFullAt).getTime() > inc.wholeEveryMs(settings);
}

/** Pure: the first day to ask for, or null for the whole resource. */
export function startDay(inc: Incremental, cursor: Cursor, settings: SyncSettings, now: Date): string | null {
  if (settings.full || !cursor.lastTs || wholeFetchDue(inc, cursor, settings, now)) return null;
  return utcDate(new Date(new Date(cursor.lastTs).getTime() - inc.lagMs(settings)));
}

/** Pure: the cursor after a fetch: the newest time read (or the last one kept), and when fetched whole. */
export function nextCursor(prev: Cursor, lastTs: Date | null, incremental: boolean, now: Date): Cursor {
  const ts = lastTs ?? (prev.lastTs ? new Date(prev.lastTs) : null);
  return { lastTs: ts?.toISOString(), lastFullAt: incremental ? prev.lastFullAt : now.toISOString() };
}
