// The memory of tesync and of the Postgres server it runs. With the embedded warehouse the
// server is processes of its own (postmaster, a backend per connection, checkpointer, WAL
// writer...) that pg_ctl starts detached, so they are not tesync's descendants: they are found
// through the postmaster's pid in the data folder's postmaster.pid, and their tree. Sampled
// from /proc (Linux; nothing elsewhere) by the bench's parent process, so the sampling costs
// tesync nothing.
//
// RSS summed over processes counts a shared page once per process that touched it: every
// backend that read or wrote shared_buffers carries those pages in its RSS, so the sum is an
// upper bound. PSS divides each shared page among its sharers, so its sum is what the processes
// take together; it needs /proc/<pid>/smaps_rollup, which another user's processes may hide.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface MemorySample {
  /** RSS of tesync's process and its descendants (pg_ctl while it runs), MB. */
  tesyncMb: number;
  /** RSS of the server's processes, summed, MB. */
  serverMb: number;
  /** Both, summed. */
  totalMb: number;
  /** PSS of the same processes, summed, MB; null when some process's could not be read. */
  pssMb: number | null;
  tesyncPssMb: number | null;
  serverPssMb: number | null;
  /** Server processes counted. */
  serverProcesses: number;
}

export interface MemoryPeak {
  /** The sample with the highest summed RSS. */
  atPeak: MemorySample;
  /** The sample with the highest summed PSS (not necessarily the same moment); null if unreadable. */
  atPeakPss: MemorySample | null;
  /** Its summed PSS. */
  peakPssMb: number | null;
  samples: number;
}

interface Proc {
  ppid: number;
}

/** Every process's parent, from /proc/<pid>/stat. */
function processTable(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the command name (which may hold spaces): state, then ppid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.set(pid, { ppid });
    } catch {
      // Gone since the listing.
    }
  }
  return out;
}

/** `roots` and every process below them. */
export function descendants(table: ReadonlyMap<number, Proc>, roots: readonly number[]): Set<number> {
  const children = new Map<number, number[]>();
  for (const [pid, p] of table) {
    const list = children.get(p.ppid);
    if (list) list.push(pid);
    else children.set(p.ppid, [pid]);
  }
  const out = new Set<number>();
  const stack = roots.filter((r) => table.has(r));
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (out.has(pid)) continue;
    out.add(pid);
    for (const c of children.get(pid) ?? []) stack.push(c);
  }
  return out;
}

/** The postmaster.pid files under `dir` (the data folder's place is embedded-server.ts's business). */
export function findPostmasterPidFiles(dir: string, depth = 4): string[] {
  const out: string[] = [];
  const walk = (d: string, left: number) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isFile() && e.name === 'postmaster.pid') out.push(path.join(d, e.name));
      // A data folder's own subfolders (base, pg_wal...) hold no other server.
      else if (e.isDirectory() && left > 0 && !e.name.startsWith('pg_') && e.name !== 'base' && e.name !== 'global') walk(path.join(d, e.name), left - 1);
    }
  };
  walk(dir, depth);
  return out;
}

/** The postmaster's pid, the first line of its postmaster.pid. */
function postmasterPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n', 1)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function kbField(text: string, field: string): number | null {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

function rssKb(pid: number): number {
  try {
    return kbField(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') ?? 0;
  } catch {
    return 0;
  }
}

function pssKb(pid: number): number | null {
  try {
    return kbField(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
  } catch (err) {
    // Exited between the listing and now: it takes nothing any more.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ESRCH' ? 0 : null;
  }
}

/**
 * One sample: `rootPid` (tesync) and its descendants, and the tree of every postmaster whose
 * postmaster.pid is under `serverDir`. Null where /proc is not there.
 */
export function sampleMemory(rootPid: number, serverDir: string, pidFiles: () => string[] = () => findPostmasterPidFiles(serverDir)): MemorySample | null {
  const table = processTable();
  if (table.size === 0) return null;
  const postmasters = pidFiles()
    .map(postmasterPid)
    .filter((p): p is number => p !== null);
  const server = descendants(table, postmasters);
  const tesync = descendants(table, [rootPid]);
  for (const pid of server) tesync.delete(pid);
  const rss = (pids: Iterable<number>) => {
    let kb = 0;
    for (const pid of pids) kb += rssKb(pid);
    return kb / 1024;
  };
  const pss = (pids: Iterable<number>) => {
    let kb = 0;
    for (const pid of pids) {
      const p = pssKb(pid);
      if (p === null) return null;
      kb += p;
    }
    return kb / 1024;
  };
  const tesyncMb = rss(tesync);
  const serverMb = rss(server);
  const tesyncPssMb = pss(tesync);
  const serverPssMb = pss(server);
  return {
    tesyncMb,
    serverMb,
    totalMb: tesyncMb + serverMb,
    pssMb: tesyncPssMb === null || serverPssMb === null ? null : tesyncPssMb + serverPssMb,
    tesyncPssMb,
    serverPssMb,
    serverProcesses: server.size,
  };
}

/**
 * Samples every `everyMs` until `stop()`, which returns the peak (null if no sample could be
 * taken). The postmaster.pid files are looked for again until one is found: the server starts
 * after tesync does.
 */
export function watchMemory(rootPid: number, serverDir: string, everyMs = 200): { stop(): MemoryPeak | null } {
  let files: string[] = [];
  const pidFiles = () => (files.length > 0 ? files : (files = findPostmasterPidFiles(serverDir)));
  let peak: MemorySample | null = null;
  let peakPss: MemorySample | null = null;
  let pssReadable = true;
  let samples = 0;
  const take = () => {
    const s = sampleMemory(rootPid, serverDir, pidFiles);
    if (!s) return;
    samples++;
    if (!peak || s.totalMb > peak.totalMb) peak = s;
    if (s.pssMb === null) pssReadable = false;
    else if (peakPss === null || s.pssMb > peakPss.pssMb!) peakPss = s;
  };
  take();
  const timer = setInterval(take, everyMs);
  let result: MemoryPeak | null | undefined;
  return {
    stop() {
      if (result !== undefined) return result;
      clearInterval(timer);
      take();
      const byPss = pssReadable ? peakPss : null;
      return (result = peak ? { atPeak: peak, atPeakPss: byPss, peakPssMb: byPss?.pssMb ?? null, samples } : null);
    },
  };
}
