// What a walk did, for the summary, sync.runs.stats and the run's status.
import type { RunStatus } from '../warehouse/runs.ts';

export interface WalkStats {
  planned: number;
  done: number;
  failed: number;
  cancelled: number;
  rows: number;
  /** `source.group` → status → count */
  byGroup: Record<string, Record<string, number>>;
  failures: { job: string; resource: string; error: string }[];
}

export function emptyStats(): WalkStats {
  return { planned: 0, done: 0, failed: 0, cancelled: 0, rows: 0, byGroup: {}, failures: [] };
}

/**
 * succeeded: everything done and read whole; partial: some resources failed, or were written
 * with cells that could not be read; failed: nothing got done.
 */
export function runStatus(stats: WalkStats): RunStatus {
  const someIncomplete = Object.values(stats.byGroup).some((statuses) => (statuses.partial ?? 0) > 0);
  if (stats.failed === 0 && stats.cancelled === 0 && !someIncomplete) return 'succeeded';
  if (stats.done === 0) return 'failed';
  return 'partial';
}
