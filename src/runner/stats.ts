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

/** succeeded: everything done; partial: some resources failed; failed: nothing got done. */
export function runStatus(stats: WalkStats): RunStatus {
  if (stats.failed === 0 && stats.cancelled === 0) return 'succeeded';
  if (stats.done === 0) return 'failed';
  return 'partial';
}
