// A tesync started through npm (`npx tesync ...`, `npm exec`, `npm run`) ends with the npm
// process that started it. npm runs the command through `sh -c`, and forwards a SIGTERM or
// SIGINT it receives to that shell only, not to tesync below it: a SIGTERM kills the shell and
// leaves tesync running, orphaned; a SIGINT a non-interactive shell (dash, Debian's and
// Ubuntu's /bin/sh) only notes, waiting for its child, which never hears of it. So tesync
// watches the processes above it (bin/tesync.js starts this when npm's environment says npm
// started it; a direct run, under a supervisor or in a container, is never watched):
//
// - its parent gone (process.ppid changed: the shell died of the forwarded SIGTERM, or npm itself
//   when it ran tesync without a shell), or the shell's parent gone (npm killed outright), at two
//   looks in a row: the command stops as on a SIGTERM;
// - on Linux, the shell woken while it waits: a non-interactive shell wakes only for a signal it
//   catches (SIGINT) or for its child changing state (a stop and continue, which tesync sees as
//   a SIGCONT of its own). Woken, and tesync itself neither signalled nor stopped meanwhile, the
//   command stops as on Ctrl-C. /proc gives the shell's wake-ups (its context switches); on macOS
//   /bin/sh is bash, which runs a lone command in place, so npm's forward reaches tesync itself.
//
// The command stops "as on" the signal by receiving it: the watch sends it to its own process,
// so every command's own handling (src/cli/interrupt.ts, the worker's graceful close, `tesync
// sql` leaving the embedded server) runs as it would for a signal from outside. It waits to send
// it until the command listens (while it starts, the default action would end the process with
// the embedded server it just started left running); a command that never listens ends by itself.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { wrapToWidth } from '../lib/display-width.ts';

/** How often the watch looks at the processes above it. */
export const WATCH_MS = 250;
/** A look that came this late after the previous one (tesync itself was stopped, frozen or starved): the shell's wake-ups meanwhile say nothing. */
const LATE_MS = 2_000;

/** A shell running a command line (`sh -c ...`): npm's, for a script or an npx command. */
const SHELLS = new Set(['sh', 'dash', 'bash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

/** What one look sees of the processes above tesync. */
export interface Look {
  /** tesync's parent. */
  ppid: number;
  /** The parent when it is a shell running a command line, as /proc shows it (Linux only). */
  shell?: { ppid: number; state: string; wakeups: number } | undefined;
}

export type LauncherChange = 'gone' | 'woken' | 'stopped';

/**
 * Pure: what a look says, against the first one: `gone` (the parent, or the shell's parent, is
 * no longer the one that started tesync), `stopped` (the shell is stopped or traced: its
 * wake-ups say nothing), `woken` (the shell woke up while it waited), or nothing.
 */
export function launcherChange(first: Look, now: Look): LauncherChange | undefined {
  if (now.ppid !== first.ppid) return 'gone';
  if (!first.shell || !now.shell) return undefined;
  if (now.shell.ppid !== first.shell.ppid) return 'gone';
  if (now.shell.state === 'T' || now.shell.state === 't') return 'stopped';
  if (now.shell.wakeups !== first.shell.wakeups) return 'woken';
  return undefined;
}

/** Pure: /proc/<pid>/stat's state and parent (after the command name, which may hold spaces and parentheses). */
export function parseStat(stat: string): { state: string; ppid: number } | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(fields[1]);
  return fields[0] && Number.isInteger(ppid) ? { state: fields[0], ppid } : undefined;
}

/** Pure: the context switches in /proc/<pid>/status: how often the process went to sleep and woke. */
export function parseWakeups(status: string): number | undefined {
  const count = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
  const total = count('voluntary_ctxt_switches') + count('nonvoluntary_ctxt_switches');
  return Number.isFinite(total) ? total : undefined;
}

/** Pure: whether /proc/<pid>/cmdline is a shell running a command line. */
export function isShellCommand(cmdline: string): boolean {
  const argv = cmdline.split('\0');
  return SHELLS.has(path.basename(argv[0] ?? '').replace(/^-/, '')) && argv.includes('-c');
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Looks at the parent; `shellPid`: the parent found a shell at the first look. */
function look(shellPid: number | undefined): Look {
  const ppid = process.ppid;
  if (shellPid === undefined || ppid !== shellPid) return { ppid };
  const stat = parseStat(readProc(shellPid, 'stat') ?? '');
  const wakeups = parseWakeups(readProc(shellPid, 'status') ?? '');
  return { ppid, shell: stat && wakeups !== undefined ? { ...stat, wakeups } : undefined };
}

type Signal = 'SIGINT' | 'SIGTERM';

/**
 * Pure: a line as the watch writes it to `out`. On a terminal it goes where a progress line may
 * be drawn: that line is cleared first, not written onto (the command draws it again below),
 * and the line is broken between words within the terminal's width.
 */
export function onTerminal(line: string, out: { isTTY?: boolean; columns?: number }): string {
  if (!out.isTTY) return line;
  const columns = out.columns && out.columns > 0 ? out.columns : 80;
  return `\r\x1b[K${wrapToWidth(line.trimEnd(), columns - 1, '  ').join('\n')}\n`;
}

export interface LauncherWatch {
  stop(): void;
}

export interface LauncherWatchOptions {
  /** Says what happened, one line (stderr). */
  say?: (line: string) => void;
  intervalMs?: number;
}

/**
 * Watches the processes above this one until it ends (the timer keeps nothing alive), as the
 * header says. Returns undefined when there is nothing to watch (already orphaned).
 */
export function watchLauncher(options: LauncherWatchOptions = {}): LauncherWatch | undefined {
  const say = options.say ?? ((line: string) => void process.stderr.write(onTerminal(line, process.stderr)));
  const intervalMs = options.intervalMs ?? WATCH_MS;
  const parent = process.ppid;
  // Windows has no orphans to find (a parent's pid stays) and no signals to pass on.
  if (parent <= 1 || process.platform === 'win32') return undefined;
  const shellPid = process.platform === 'linux' && isShellCommand(readProc(parent, 'cmdline') ?? '') ? parent : undefined;
  let first = look(shellPid);
  let lastAt = Date.now();
  let suspect = false;
  let goneSeen = false;
  let continued = false;
  let pending: Signal | undefined;
  let ended = false;

  // A signal of its own (a terminal's Ctrl-C reaches every process of the job): the command is
  // ending by it, and the shell's wake-up that came with it is no second one to pass on. Alone
  // (the command does not listen), the signal is raised again with its default action restored:
  // the process ends as it would have without the watch.
  const onSignal = (signal: Signal) => {
    const alone = !process.listeners(signal).some((l) => l !== listeners[signal]);
    stop();
    if (alone) process.kill(process.pid, signal);
  };
  const listeners: Record<Signal, () => void> = { SIGINT: () => onSignal('SIGINT'), SIGTERM: () => onSignal('SIGTERM') };
  const onContinue = () => {
    continued = true;
  };

  const deliver = () => {
    if (!pending || ended) return;
    // Only once the command listens (besides this watch): see the header.
    if (!process.listeners(pending).some((l) => l !== listeners[pending!])) return;
    const signal = pending;
    stop();
    process.kill(process.pid, signal);
  };

  const tick = () => {
    const now = Date.now();
    const late = now - lastAt > LATE_MS;
    lastAt = now;
    if (pending) return deliver();
    const seen = look(shellPid);
    const change = launcherChange(first, seen);
    // Gone: passed on at the next look, unless a signal of tesync's own explains it by then. A
    // signal sent to the whole job (`timeout`, a service manager) ends npm too, and may wait,
    // unread, behind this look while the command's loop was busy: passed on at once, it would
    // reach the command as a second signal, and a second signal quits at once.
    if (change === 'gone' && !goneSeen) {
      goneSeen = true;
      return;
    }
    if (change === 'gone') {
      pending = 'SIGTERM';
      say('tesync: npm, which started this command, has ended: stopping as on SIGTERM\n');
      return deliver();
    }
    if (change === 'woken' && !late && !continued && suspect) {
      pending = 'SIGINT';
      say('tesync: npm, which started this command, was interrupted: stopping as on Ctrl-C\n');
      return deliver();
    }
    // Seen once: passed on at the next look, unless a signal of tesync's own explains it by then.
    if (change === 'woken' && !late && !continued) {
      suspect = true;
      return;
    }
    // Stopped, continued, late, or nothing: this look is the one to compare with from now on.
    if (change !== undefined || late || continued) first = seen;
    suspect = false;
    continued = false;
  };

  const timer = setInterval(tick, intervalMs);
  timer.unref();
  process.on('SIGINT', listeners.SIGINT);
  process.on('SIGTERM', listeners.SIGTERM);
  process.on('SIGCONT', onContinue);

  function stop() {
    ended = true;
    clearInterval(timer);
    process.off('SIGINT', listeners.SIGINT);
    process.off('SIGTERM', listeners.SIGTERM);
    process.off('SIGCONT', onContinue);
  }
  return { stop };
}
