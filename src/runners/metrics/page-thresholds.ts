// The status page's thresholds per resource group: how long tesync may go without confirming a
// group's resources, and how old its data may be by its own clock, before the page calls the
// group overdue. By default from the schedule that walks the group (TE_SCHEDULE_*): two of its
// rounds for confirmation (one walk may be missed or still running; the rule operations.md
// gives for alerting on tesync_resource_last_success_timestamp_seconds), and a day more for
// the data, which upstream itself may date up to a day back. `tesync status --serve
// --max-age / --max-unconfirmed` set one threshold for every group instead.
import { getNextMillis } from 'bullmq';
import type { Config } from '../../lib/config.ts';
import { configuredSchedules, SCHEDULES, type ScheduleId } from '../bullmq/schedules.ts';

export interface GroupThreshold {
  /** Data older than this by its own clock is overdue; null: not judged. */
  maxAgeHours: number | null;
  /** Resources not confirmed by tesync within this are overdue; null: not judged. */
  maxUnconfirmedHours: number | null;
  /** Below this percentage of what its lists promise, a group is not on time (TE_MIN_COVERAGE, or --min-coverage). */
  minCoveragePct: number;
  /** Where the thresholds come from, for people. */
  basis: string;
}

export interface ThresholdFlags {
  maxAgeHours?: number | undefined;
  maxUnconfirmedHours?: number | undefined;
  minCoveragePct?: number | undefined;
}

/** Upstream may date its data up to a day back (a daily series' newest point is yesterday's). */
export const UPSTREAM_LAG_HOURS = 24;
/** Occurrences looked at to find a schedule's longest gap (a pattern may skip nights or weekends). */
const OCCURRENCES = 32;

/** Pure: the schedule that walks a group (the one naming it, else the one that takes the rest). */
export function scheduleOfGroup(group: string): ScheduleId {
  const named = SCHEDULES.find((s) => s.groups !== 'rest' && s.groups.includes(group));
  return (named ?? SCHEDULES.find((s) => s.groups === 'rest')!).id;
}

/** The variable that sets a schedule's pattern. */
export const scheduleVariable = (id: ScheduleId) => `TE_SCHEDULE_${id.toUpperCase().replace(/-/g, '_')}`;

/** The longest gap between consecutive runs of a cron pattern from `nowMs` on; null when it cannot be told. */
export function scheduleRoundMs(pattern: string, tz: string, nowMs: number): number | null {
  try {
    let at = getNextMillis(nowMs, { pattern, tz });
    if (at === undefined) return null;
    let longest = 0;
    for (let i = 0; i < OCCURRENCES; i++) {
      const next = getNextMillis(at, { pattern, tz });
      if (next === undefined || next <= at) break;
      longest = Math.max(longest, next - at);
      at = next;
    }
    return longest > 0 ? longest : null;
  } catch {
    return null;
  }
}

const hours = (h: number) => `${Number.isInteger(h) ? h : h.toFixed(1)}h`;

/** Each group's thresholds, from `flags` where given, else from the schedule that walks it. */
export function pageThresholds(config: Pick<Config, 'schedules' | 'scheduleTz' | 'exportDir'> & Partial<Pick<Config, 'minCoverage'>>, nowMs: number, flags: ThresholdFlags = {}): (group: string) => GroupThreshold {
  const minCoveragePct = flags.minCoveragePct ?? config.minCoverage ?? 100;
  const configured = new Map(configuredSchedules(config).map((s) => [s.id, s]));
  const cache = new Map<ScheduleId, GroupThreshold>();
  const fromSchedule = (id: ScheduleId): GroupThreshold => {
    const s = configured.get(id);
    const variable = scheduleVariable(id);
    const round = s?.pattern ? scheduleRoundMs(s.pattern, s.tz, nowMs) : null;
    if (!s?.pattern || round === null) {
      return { maxAgeHours: null, maxUnconfirmedHours: null, minCoveragePct, basis: s?.pattern ? `${variable} (${s.pattern}): its rounds cannot be told` : `no schedule (${variable} off)` };
    }
    const confirm = (2 * round) / 3600_000;
    return {
      maxAgeHours: confirm + UPSTREAM_LAG_HOURS,
      maxUnconfirmedHours: confirm,
      minCoveragePct,
      basis: `2 rounds of ${variable} (${s.pattern}, every ${hours(round / 3600_000)} at most)`,
    };
  };
  return (group) => {
    const id = scheduleOfGroup(group);
    let base = cache.get(id);
    if (!base) cache.set(id, (base = fromSchedule(id)));
    if (flags.maxAgeHours === undefined && flags.maxUnconfirmedHours === undefined) return base;
    const given = [flags.maxAgeHours === undefined ? null : `--max-age ${flags.maxAgeHours}`, flags.maxUnconfirmedHours === undefined ? null : `--max-unconfirmed ${flags.maxUnconfirmedHours}`].filter((x) => x !== null);
    return {
      maxAgeHours: flags.maxAgeHours ?? base.maxAgeHours,
      maxUnconfirmedHours: flags.maxUnconfirmedHours ?? base.maxUnconfirmedHours,
      minCoveragePct,
      basis: `${given.join(', ')}${given.length < 2 ? `; otherwise ${base.basis}` : ''}`,
    };
  };
}
