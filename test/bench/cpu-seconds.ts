// CPU seconds a step costs, by where they are spent: this process (process.cpuUsage: tesync's
// JavaScript and the DuckDB it runs) and the Postgres backends serving one database, read from
// /proc while the step runs (a backend's figure is its last reading; one that ends between two
// readings loses at most a tick's worth). Where the server is not on this machine, or /proc is
// not there, the Postgres figure is null. The export leg prints both beside its wall times: on
// a machine whose cores are all busy, wall time follows the CPU a step needs (issue 56).
import { readFile } from 'node:fs/promises';
import type postgres from 'postgres';

export interface CpuSeconds {
  process: number;
  postgres: number | null;
}

const TICKS = 100; // USER_HZ on Linux

async function backendSeconds(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return null;
  }
}

/** Runs `step`, returning its result with the CPU seconds it cost (`admin`: a connection to the measured database, not counted). */
export async function cpuSeconds<T>(admin: postgres.Sql, step: () => Promise<T>): Promise<{ value: T; cpu: CpuSeconds }> {
  const backends = async () => admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
  // The server is on this machine when its backend for `admin` can be read in /proc.
  const [own] = await admin<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const local = (await backendSeconds(own!.pid)) !== null;
  const before = new Map<number, number>();
  for (const { pid } of await backends()) {
    const s = await backendSeconds(pid);
    if (s !== null) before.set(pid, s);
  }
  const last = new Map<number, number>();
  let done = false;
  const watch = (async () => {
    while (!done) {
      for (const { pid } of await backends()) {
        // null: the backend ended since it was listed; its last reading stands.
        const s = await backendSeconds(pid);
        if (s !== null) last.set(pid, s);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const c0 = process.cpuUsage();
  try {
    const value = await step();
    const c = process.cpuUsage(c0);
    done = true;
    await watch;
    let pg = 0;
    for (const [pid, s] of last) pg += s - (before.get(pid) ?? 0);
    return { value, cpu: { process: (c.user + c.system) / 1e6, postgres: local ? pg : null } };
  } finally {
    done = true;
    await watch.catch(() => {});
  }
}

/** Pure: `a` and `b` summed (null when either Postgres figure is). */
export function addCpu(a: CpuSeconds, b: CpuSeconds): CpuSeconds {
  return { process: a.process + b.process, postgres: a.postgres === null || b.postgres === null ? null : a.postgres + b.postgres };
}

/** Pure: "34.3 s here + 16.5 s Postgres". */
export function formatCpu(c: CpuSeconds): string {
  return `${c.process.toFixed(1)} s here + ${c.postgres === null ? 'n/a' : `${c.postgres.toFixed(1)} s`} Postgres`;
}
