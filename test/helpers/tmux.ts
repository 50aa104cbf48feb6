// A real terminal for tests: tesync in a detached tmux pane of a given width, as a person
// sees it. tmux is a Debian package (.ci/run installs it).
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { BIN } from './cli.ts';
import { patience } from './patience.ts';

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Fails, saying what to install, when tmux is missing (never a silent skip). */
export function requireTmux(): void {
  if (spawnSync('tmux', ['-V']).error) throw new Error('tmux is not installed: install it (Debian: apt-get install tmux); .ci/run does');
}

export type TmuxPane = ReturnType<typeof tmuxPane>;

/** The `sh -c` a pane started with `npm: marker` runs tesync under (Linux: from /proc); undefined when gone. */
export function shellOf(marker: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (/^\d+$/.exec(name) === null) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (path.basename(argv[0] ?? '') === 'sh' && argv[1] === '-c' && (argv[2] ?? '').endsWith(`# ${marker}`)) return Number(name);
  }
  return undefined;
}

/**
 * `tesync ARGS` in a detached tmux pane `columns` wide, under bash (a terminal's shell, which
 * goes on after a command that handled Ctrl-C itself), then `tesync exited N`; `screen()`
 * captures the pane, joining the lines the terminal wrapped. `npm`: started as npm starts a
 * command (`sh -c`, npm's environment: tesync watches the processes above it), the shell's
 * command line marked with it (shellOf finds that shell).
 */
export function tmuxPane(socket: string, dir: string, columns: number, env: Record<string, string>, args: string[], options: { npm?: string } = {}) {
  const command = `${shellQuote(process.execPath)} ${shellQuote(BIN)} ${args.map(shellQuote).join(' ')}`;
  const script = path.join(dir, `run-${args[0]}.sh`);
  writeFileSync(
    script,
    [
      // bash, as a terminal's shell: it goes on after a command that handled Ctrl-C itself.
      '#!/bin/bash',
      `cd ${shellQuote(dir)}`,
      ...Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
      // Under npm, the shell's own report of the killed \`sh -c\` ("Terminated") goes nowhere: npm
      // prints no such line, and this bash would glue it to whatever the pane shows last.
      options.npm === undefined ? command : `{ npm_lifecycle_event=npx sh -c ${shellQuote(`${command}; true # ${options.npm}`)} 2>&3; } 3>&2 2>/dev/null`,
      // Under npm the shell dies mid-walk, the progress line unended: its exit on a line of its own.
      options.npm === undefined ? 'echo "tesync exited $?"' : 'code=$?; printf \'\\ntesync exited %s\\n\' "$code"',
      // The pane stays for the captures after the exit; the test's teardown kills the server.
      `sleep ${patience(120)}`,
    ].join('\n'),
    { mode: 0o755 },
  );
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' });
  execFileSync('tmux', ['-u', '-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'run', '-x', String(columns), '-y', '50', script]);
  const screen = () => tmux('capture-pane', '-p', '-J', '-t', 'run');
  return {
    screen,
    /** The pane's rows as the terminal shows them, a wrapped line on several. */
    rows: () => tmux('capture-pane', '-p', '-t', 'run').split('\n'),
    ctrlC: () => tmux('send-keys', '-t', 'run', 'C-c'),
    /**
     * Polls the pane until `done` holds of it, or `patience(timeoutMs)` passed (a hang guard:
     * the caller checks `done` of the last capture); every capture kept.
     */
    async until(done: (text: string) => boolean, timeoutMs: number): Promise<string[]> {
      const seen: string[] = [];
      const deadline = Date.now() + patience(timeoutMs);
      for (;;) {
        const text = screen();
        seen.push(text);
        if (done(text) || Date.now() > deadline) return seen;
        await delay(200);
      }
    },
    kill: () => {
      try {
        tmux('kill-server');
      } catch {
        // Gone already.
      }
    },
  };
}
