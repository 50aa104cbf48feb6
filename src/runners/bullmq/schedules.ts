// The job schedulers: one per resource group family, each a cron pattern from the
// environment (TE_SCHEDULE_*). A scheduled walk reads the planners (catalog, token lists)
// and then only the groups its schedule covers. One more, `export`, walks nothing: it writes
// the daily archives out as Parquet into TE_EXPORT_DIR (export-job.ts), and only when that is set.
import type { Config } from '../../lib/config.ts';

export type ScheduleId = 'catalog' | 'screener' | 'token-data' | 'bundles' | 'export';

export interface ScheduleSpec {
  id: ScheduleId;
  /** Resource groups the schedule covers; `rest`: every group no other schedule names. */
  groups: readonly string[] | 'rest';
}

export const SCHEDULES: readonly ScheduleSpec[] = [
  { id: 'catalog', groups: ['catalog', 'tokens', 'contract'] },
  { id: 'screener', groups: ['screener'] },
  { id: 'bundles', groups: ['bundle'] },
  // Snapshots, history, chart catalogs and data, gateway pages, and any group added later.
  { id: 'token-data', groups: 'rest' },
  // No walk, no upstream request: the daily archives into TE_EXPORT_DIR.
  { id: 'export', groups: [] },
];

/** The schedule whose job exports the daily archives instead of walking (export-job.ts). */
export const EXPORT_SCHEDULE = 'export' satisfies ScheduleId;

export function isScheduleId(id: string): id is ScheduleId {
  return SCHEDULES.some((s) => s.id === id);
}

/** The groups a schedule covers, given every group of the job catalog. */
export function scheduleGroups(id: ScheduleId, allGroups: readonly string[]): string[] {
  const spec = SCHEDULES.find((s) => s.id === id)!;
  if (spec.groups !== 'rest') return [...spec.groups];
  const named = new Set(SCHEDULES.flatMap((s) => (s.groups === 'rest' ? [] : s.groups)));
  return allGroups.filter((g) => !named.has(g));
}

export interface ConfiguredSchedule {
  id: ScheduleId;
  /** Null: switched off (`off`): the scheduler is removed. */
  pattern: string | null;
  tz: string;
}

/** Pure: each schedule's pattern; the export's only where it has somewhere to write (TE_EXPORT_DIR). */
export function configuredSchedules(config: Pick<Config, 'schedules' | 'scheduleTz' | 'exportDir'>): ConfiguredSchedule[] {
  return SCHEDULES.map((s) => ({ id: s.id, pattern: s.id === EXPORT_SCHEDULE && !config.exportDir ? null : config.schedules[s.id], tz: config.scheduleTz }));
}
