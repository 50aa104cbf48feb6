// Commands that print text for a person and keep running until Ctrl-C, on an 80-column terminal
// (tmux): `tesync status --serve` and `tesync sim`. What they print fits the columns, and their
// log lines are never raw pino JSON among that text: on a terminal a warning comes in words,
// and what they do (serving, stopping) their text says. tmux is a Debian package (.ci/run
// installs it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/lib/display-width.ts';
import { patience } from '../helpers/patience.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';
import { uniqueName } from '../helpers/services.ts';
import { requireTmux, tmuxPane, type TmuxPane } from '../helpers/tmux.ts';

const COLUMNS = 80;
const lines = (capture: string) => capture.split('\n').filter((l) => l.trim() !== '');

describe('status --serve and sim on an 80-column terminal (tmux)', () => {
  let dir: string;
  const db = useTestDatabase({ migrated: true });
  const panes: TmuxPane[] = [];
  beforeAll(async () => {
    requireTmux();
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-serve-tmux-'));
  });
  afterAll(async () => {
    for (const p of panes) p.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir, LANG: 'C.UTF-8', DATABASE_URL: db.databaseUrl, TE_DATABASE_POOL: '2' });

  /** Every capture: no JSON log line, no line the terminal wrapped. */
  const expectText = (captures: string[]) => {
    const all = captures.join('\n');
    expect(all, 'no JSON log line on screen').not.toContain('{"level"');
    expect(all).not.toMatch(/"msg":/);
    for (const c of captures) for (const l of lines(c)) expect(displayWidth(l), l).toBeLessThanOrEqual(COLUMNS);
  };

  it('status --serve: its address and where, its page read, Ctrl-C: text alone', async () => {
    const pane = tmuxPane(uniqueName('tesync_serve'), dir, COLUMNS, env(), ['status', '--serve', '--port', '0']);
    panes.push(pane);
    const serving = await pane.until((t) => /Status page of the warehouse: http:\/\/\S+/.test(t) || t.includes('tesync exited'), 60_000);
    const url = /Status page of the warehouse: (http:\/\/\S+)/.exec(serving.at(-1)!)?.[1];
    expect(url, serving.at(-1)).toBeDefined();
    expect((await fetch(url!)).status).toBe(200);
    pane.ctrlC();
    const stopped = await pane.until((t) => t.includes('tesync exited'), 60_000);
    // (After the `^C` the terminal echoed: the shell's line, tesync says nothing more.)
    expect(stopped.at(-1)).toMatch(/tesync exited 0$/m);
    // Where, below the address, broken between words within the columns.
    expect(serving.at(-1)!.replace(/\n {2}(?!\()/g, ' ')).toMatch(/^ {2}\(Postgres at 127\.0\.0\.1:\d+\/\S+; read-only, refreshes itself every \d+ s\)$/m);
    expectText([...serving, ...stopped]);
  }, patience(120_000));

  it('sim: its banner within the columns, Ctrl-C: its stop in words', async () => {
    const pane = tmuxPane(uniqueName('tesync_sim'), dir, COLUMNS, env(), ['sim', '--port', '0', '--tokens', '2']);
    panes.push(pane);
    const up = await pane.until((t) => t.includes('Ctrl-C stops it.') || t.includes('tesync exited'), 60_000);
    expect(up.at(-1)).toContain('Ctrl-C stops it.');
    pane.ctrlC();
    const stopped = await pane.until((t) => t.includes('tesync exited'), 60_000);
    expect(stopped.at(-1)).toMatch(/^tesync exited 0$/m);
    // Said in words, on a line of its own (not after the `^C` the terminal echoed).
    expect(stopped.at(-1)).toMatch(/^tesync: simulator stopping \(signal SIGINT, requests 0\)$/m);
    expectText([...up, ...stopped]);
  }, patience(120_000));
});
