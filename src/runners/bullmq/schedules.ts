// The job schedulers: one per resource group family, each a cron pattern from the
// environment (TE_SCHEDULE_*). A scheduled walk reads the planners (catalog, token lists)
// and then only the groups its schedule covers.
import type { Config } from '../../lib/config.ts';

export type ScheduleId = 'catalog' | 'screener' | 'token-data' | 'bundles';

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
];

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

export interface PlannedScheduler {
  id: ScheduleId;
  /** Null: switched off (`off`): the scheduler is removed. */
  pattern: string | null;
  tz: string;
}

export function plannedSchedulers(config: Pick<Config, 'schedules' | 'scheduleTz'>): PlannedScheduler[] {
  return SCHEDULES.map((s) => ({ id: s.id, pattern: config.schedules[s.id], tz: config.scheduleTz }));
}
