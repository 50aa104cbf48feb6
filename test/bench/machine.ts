// What the rest of the machine did while a run was measured, from /proc/stat (Linux; null
// elsewhere). On a shared host the same code can take 15 % longer at a slower moment: the
// hypervisor running another guest shows as steal time, a leftover of the previous run (a
// checkpoint, writeback) as cores busy with processes that are not the run's. The bench waits
// for a quiet machine before each measured run and reports both, so that a slow figure can be
// told from slow code.
import { readFileSync } from 'node:fs';

/** Cumulative CPU time of all cores, in clock ticks. */
export interface CpuTimes {
  total: number;
  /** Idle and waiting for I/O. */
  idle: number;
  steal: number;
}

/** Linux's USER_HZ: /proc reports CPU time in hundredths of a second. */
export const CLOCK_TICK_MS = 10;

export function readCpuTimes(): CpuTimes | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    if (v.length < 8 || v.some((x) => !Number.isFinite(x))) return null;
    // guest time is already inside user and nice.
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    return { total, idle: v[3]! + v[4]!, steal: v[7]! };
  } catch {
    return null;
  }
}

/** Busy share of all cores between two readings (steal not counted as busy). */
export function busyShare(a: CpuTimes, b: CpuTimes): number | null {
  const total = b.total - a.total;
  return total > 0 ? busyTicks(a, b) / total : null;
}

function busyTicks(a: CpuTimes, b: CpuTimes): number {
  return b.total - a.total - (b.idle - a.idle) - (b.steal - a.steal);
}

export interface MachineDuring {
  /** How long the bench waited for the machine to go quiet before the run. */
  settledMs: number;
  /** CPU that processes other than the run's (tesync, the simulator, its Postgres backends) used, as a share of all cores over the run. */
  othersShare: number | null;
  /** Time the hypervisor gave the cores to someone else, as a share of all cores over the run. */
  stealShare: number | null;
}

/**
 * The share of the machine the run's own processes did not account for. `ownCpuMs` is their
 * CPU time; the rest of the busy time was someone else's.
 */
export function machineDuring(a: CpuTimes | null, b: CpuTimes | null, ownCpuMs: number, settledMs: number): MachineDuring {
  if (!a || !b || b.total <= a.total) return { settledMs, othersShare: null, stealShare: null };
  const total = b.total - a.total;
  const busyMs = busyTicks(a, b) * CLOCK_TICK_MS;
  return {
    settledMs,
    othersShare: Math.max(0, busyMs - ownCpuMs) / (total * CLOCK_TICK_MS),
    stealShare: (b.steal - a.steal) / total,
  };
}

/**
 * Waits until one second passes with the machine less than `busyBelow` busy (a share of all
 * cores), for at most `maxMs`. Returns how long it waited, that second included.
 */
export async function settle(busyBelow = 0.15, maxMs = 60_000, sampleMs = 1000): Promise<number> {
  const start = Date.now();
  let prev = readCpuTimes();
  if (!prev) return 0;
  while (Date.now() - start < maxMs) {
    await new Promise((r) => setTimeout(r, sampleMs));
    const now = readCpuTimes();
    if (!now) return Date.now() - start;
    const busy = busyShare(prev, now);
    if (busy !== null && busy < busyBelow) break;
    prev = now;
  }
  return Date.now() - start;
}
