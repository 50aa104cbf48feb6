// The watch of the processes above a tesync started through npm (src/cli/parent-watch.ts): what
// a look at them says, read from /proc; and, with real processes under `sh -c` as npm runs them,
// that a signal npm forwards to its shell reaches the command once, as the signal it was, while
// a terminal's Ctrl-C (which reaches every process of the job) is not passed on a second time,
// nor a SIGTERM to the whole job (`timeout`) while the command's loop is busy, and a stop and
// continue (Ctrl-Z, fg) passes nothing on.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { isShellCommand, launcherChange, onTerminal, parseStat, parseWakeups, type Look } from '../../src/cli/parent-watch.ts';
import { patience } from '../helpers/patience.ts';

describe('a look at the processes above', () => {
  const first: Look = { ppid: 40, shell: { ppid: 30, state: 'S', wakeups: 7 } };

  it('gone, stopped, woken, or nothing', () => {
    expect(launcherChange(first, first)).toBeUndefined();
    expect(launcherChange(first, { ...first, ppid: 1 })).toBe('gone');
    expect(launcherChange(first, { ppid: 40, shell: { ppid: 1, state: 'S', wakeups: 7 } })).toBe('gone');
    expect(launcherChange(first, { ppid: 40, shell: { ppid: 30, state: 'T', wakeups: 9 } })).toBe('stopped');
    expect(launcherChange(first, { ppid: 40, shell: { ppid: 30, state: 'S', wakeups: 8 } })).toBe('woken');
    // No shell (npm ran tesync itself), or one that could not be read: its parent only.
    expect(launcherChange({ ppid: 40 }, { ppid: 40 })).toBeUndefined();
    expect(launcherChange({ ppid: 40 }, { ppid: 41 })).toBe('gone');
    expect(launcherChange(first, { ppid: 40 })).toBeUndefined();
  });

  it('its line on a terminal: the progress line cleared first, broken within the columns', () => {
    const line = 'tesync: npm, which started this command, has ended: stopping as on SIGTERM\n';
    expect(onTerminal(line, {})).toBe(line);
    expect(onTerminal(line, { isTTY: true, columns: 80 })).toBe(`\r\x1b[K${line}`);
    expect(onTerminal(line, { isTTY: true, columns: 40 })).toBe('\r\x1b[Ktesync: npm, which started this\n  command, has ended: stopping as on\n  SIGTERM\n');
  });

  it('reads /proc: stat past a command name with spaces and parentheses, the context switches, a shell running a command line', () => {
    expect(parseStat('4242 (sh (x) y) S 4240 4242 4100 0 -1 4194560 96 0 0 0')).toEqual({ state: 'S', ppid: 4240 });
    expect(parseStat('')).toBeUndefined();
    expect(parseWakeups('Name:\tsh\nvoluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t4\n')).toBe(7);
    expect(parseWakeups('Name:\tsh\n')).toBeUndefined();
    expect(isShellCommand("sh\0-c\0'tesync' worker --demo\0")).toBe(true);
    expect(isShellCommand('/bin/dash\0-c\0tesync sql\0')).toBe(true);
    expect(isShellCommand('-bash\0')).toBe(false);
    expect(isShellCommand('node\0/usr/lib/node_modules/npm/bin/npm-cli.js\0exec\0tesync\0')).toBe(false);
  });
});

const CHILD = fileURLToPath(new URL('../helpers/watched-child.mjs', import.meta.url));

interface Watched {
  shell: ChildProcess;
  /** The watched process, under the shell. */
  pid: number;
  /** The signals it received, in order. */
  signals(): string[];
  stderr(): string;
  closed: Promise<void>;
}

/** The watched child under `sh -c`, in a process group of its own (as a terminal's job is), once it is ready. */
async function startWatched(mode = ''): Promise<Watched> {
  const shell = spawn('sh', ['-c', `'${process.execPath}' '${CHILD}' ${mode}`], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  shell.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  shell.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // The child holds the pipes: closed when it has ended, whatever happened to the shell.
  const closed = new Promise<void>((resolve) => shell.stdout!.once('close', () => resolve()));
  const deadline = Date.now() + patience(15_000);
  while (!/^ready \d+\n/.test(out)) {
    if (Date.now() > deadline) throw new Error(`the watched child did not start: ${err}`);
    await delay(20);
  }
  const pid = Number(/^ready (\d+)/.exec(out)![1]);
  return { shell, pid, signals: () => out.split('\n').slice(1).filter(Boolean), stderr: () => err, closed };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Within the hang guard, or the case fails. */
async function ended(w: Watched): Promise<void> {
  const hung = delay(patience(15_000)).then(() => {
    throw new Error(`still running; signals ${JSON.stringify(w.signals())}, stderr ${w.stderr()}`);
  });
  await Promise.race([w.closed, hung]);
}

describe.runIf(process.platform === 'linux')('under `sh -c`, as npm runs a command', () => {
  const started: Watched[] = [];
  afterEach(() => {
    for (const w of started.splice(0)) {
      for (const pid of [w.pid, w.shell.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('SIGINT to the shell (npm forwarding it): the command receives SIGINT, once', async () => {
    const w = await startWatched();
    started.push(w);
    process.kill(w.shell.pid!, 'SIGINT');
    await ended(w);
    expect(w.signals()).toEqual(['SIGINT']);
    expect(w.stderr()).toContain('npm, which started this command, was interrupted: stopping as on Ctrl-C');
  });

  it('SIGTERM to the shell, which dies of it: the command receives SIGTERM', async () => {
    const w = await startWatched();
    started.push(w);
    process.kill(w.shell.pid!, 'SIGTERM');
    await ended(w);
    expect(w.signals()).toEqual(['SIGTERM']);
    expect(w.stderr()).toContain('npm, which started this command, has ended: stopping as on SIGTERM');
  });

  it("a terminal's Ctrl-C, to the whole job: the command's own SIGINT, not a second one from the watch", async () => {
    const w = await startWatched();
    started.push(w);
    process.kill(-w.shell.pid!, 'SIGINT');
    await ended(w);
    expect(w.signals()).toEqual(['SIGINT']);
    expect(w.stderr()).toBe('');
  });

  it('SIGTERM to the whole job, as `timeout` sends it, while the command is busy: its own SIGTERM, once', async () => {
    // The issue: the shell gone and the command's own SIGTERM both waited behind a busy loop;
    // the watch passed the shell's end on first, and the command counted one signal twice.
    const w = await startWatched('busy');
    started.push(w);
    // Into its busy turns (a signal before the first one is read at once).
    await delay(1_000);
    process.kill(-w.shell.pid!, 'SIGTERM');
    await ended(w);
    expect(w.signals()).toEqual(['SIGTERM']);
    expect(w.stderr()).toBe('');
  });

  it('stopped and continued (Ctrl-Z, fg): nothing passed on; a SIGINT after it still is', async () => {
    const w = await startWatched();
    started.push(w);
    process.kill(w.pid, 'SIGSTOP');
    await delay(300);
    process.kill(w.pid, 'SIGCONT');
    // Looks enough for a wake-up of the shell, had it been taken for a signal, to be passed on.
    await delay(1_500);
    expect(w.signals()).toEqual([]);
    expect(alive(w.pid)).toBe(true);
    process.kill(w.shell.pid!, 'SIGINT');
    await ended(w);
    expect(w.signals()).toEqual(['SIGINT']);
  });
});
