// `tesync worker --demo` on an 80-column terminal, as a person sees it: the real command in a
// detached tmux pane (a terminal: stderr is a TTY), its own simulator as upstream, a warehouse
// of its own, the screener walk scheduled every two seconds. The pane says each event in words
// (ready with its status page, a walk started, a walk finished with its counts, the shutdown)
// above one progress line, never a raw JSON log line, and no line the terminal had to wrap.
// Off a terminal the same worker writes JSON lines (test/cli/worker-demo.test.ts parses them).
// tmux is a Debian package (.ci/run installs it).
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
const TIME = '\\d\\d:\\d\\d:\\d\\d';
const lines = (capture: string) => capture.split('\n').filter((l) => l.trim() !== '');
/** The events as said, a line the worker broke between words (its later lines indented past the time) joined back. */
const events = (capture: string) => capture.replace(/\n {11}(?=\S)/g, ' ');
const finishedWalks = (capture: string) => (capture.match(new RegExp(`^${TIME} walk succeeded in `, 'gm')) ?? []).length;

describe('tesync worker --demo on an 80-column terminal (tmux)', () => {
  let dir: string;
  const db = useTestDatabase({ migrated: true });
  let pane: TmuxPane | undefined;
  beforeAll(async () => {
    requireTmux();
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-worker-tmux-'));
  });
  afterAll(async () => {
    // The worker in the pane goes with its tmux server, before its database (useTestDatabase's afterAll, after this one).
    pane?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('says each event in words above a progress line: no JSON, no line over 80 columns', async () => {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? dir,
      LANG: 'C.UTF-8',
      DATABASE_URL: db.databaseUrl,
      TE_DATABASE_POOL: '4',
      TE_METRICS_PORT: '0',
      TE_SCHEDULE_SCREENER: '*/2 * * * * *',
      TE_SCHEDULE_CATALOG: 'off',
      TE_SCHEDULE_TOKEN_DATA: 'off',
      TE_SCHEDULE_BUNDLES: 'off',
    };
    pane = tmuxPane(uniqueName('tesync_worker'), dir, COLUMNS, env, ['worker', '--demo']);
    // The last line is the progress line: idle since the last walk, or the next walk running.
    const progress = new RegExp(`^(idle since ${TIME} UTC \\| walks: \\d+ succeeded|walking \\(schedule screener\\) \\S+: [\\d,]+ jobs? done)`);
    // Two walks finished (the second found the first's data), the progress line below them.
    const running = await pane.until((t) => (finishedWalks(t) >= 2 && progress.test(lines(t).at(-1) ?? '')) || t.includes('tesync exited'), 90_000);
    const walked = running.at(-1)!;
    expect(finishedWalks(walked), walked).toBeGreaterThanOrEqual(2);
    expect(lines(walked).at(-1), walked).toMatch(progress);
    pane.ctrlC();
    const stopping = await pane.until((t) => t.includes('tesync exited'), 60_000);
    const last = stopping.at(-1)!;
    expect(last, 'the worker ended').toMatch(/^tesync exited 0$/m);

    const captures = [...running, ...stopping];
    const all = captures.join('\n');
    expect(all, 'no JSON log line on screen').not.toContain('{"level"');
    expect(all).not.toMatch(/"msg":/);
    // The demo's keys (demo_app_…, demo_gw_…) never reach the screen.
    expect(all).not.toMatch(/demo_(app|gw)_[0-9a-f]/);
    // Nothing the terminal wrapped: a line joined back (-J) is still within 80 columns.
    for (const c of captures) for (const line of lines(c)) expect(displayWidth(line), line).toBeLessThanOrEqual(COLUMNS);

    // The events, one line each (broken between words where longer), in words.
    // Every capture: the first lines may have scrolled off the pane by the last.
    const said = captures.map(events).join('\n');
    expect(said).toMatch(new RegExp(`^${TIME} the bundled simulator is the upstream \\(--demo\\)`, 'm'));
    expect(said).toMatch(new RegExp(`^${TIME} worker ready: status page http://localhost:\\d+/$`, 'm'));
    expect(said).toMatch(new RegExp(`^${TIME} walk started \\(schedule screener\\): app, gateway: .*; run [0-9a-f]{8}$`, 'm'));
    expect(said).toMatch(new RegExp(`^${TIME} walk succeeded in \\d+\\.\\d s \\(schedule screener\\): \\d+ done, 0 failed, [\\d,]+ rows?, [\\d,]+ requests?; run [0-9a-f]{8}$`, 'm'));
    expect(said).toMatch(new RegExp(`^${TIME} shutting down: finishing active jobs`, 'm'));
    expect(said).toMatch(new RegExp(`^${TIME} worker stopped$`, 'm'));
    // The progress line went with the worker: the shell's line follows the worker's last.
    const end = lines(last);
    expect(end.at(-2)).toMatch(new RegExp(`^${TIME} worker stopped$`));
    console.log(`an 80-column capture of tesync worker --demo:\n${walked}`);
  }, patience(180_000));
});
