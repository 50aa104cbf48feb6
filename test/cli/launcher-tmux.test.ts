// A tesync started through npm, on an 80-column terminal, when npm goes: the watch of the
// processes above it (src/cli/parent-watch.ts) says why it stops on a line of its own, not
// written onto the progress line, and the command stops once, as on SIGTERM. The real command
// in a tmux pane under `sh -c` with npm's environment, as npx runs it; the shell killed
// mid-walk as npm's forwarded SIGTERM kills it. tmux is a Debian package (.ci/run installs it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/lib/display-width.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, uniqueName } from '../helpers/services.ts';
import { requireTmux, shellOf, tmuxPane, type TmuxPane } from '../helpers/tmux.ts';
import { commandEnv } from '../helpers/sync.ts';

const COLUMNS = 80;
const appKey = canaryKey('app_launcher');
const gwKey = canaryKey('gw_launcher');
const lines = (capture: string) => capture.split('\n').filter((l) => l.trim() !== '');

describe.runIf(process.platform === 'linux')('npm gone mid-walk, on an 80-column terminal (tmux)', () => {
  // A tight budget: the walk lasts seconds, its progress line on screen when npm goes.
  const fx = useSimAndWarehouse({
    tokens: 2,
    historyDays: 10,
    chartsPerToken: 1,
    seed: 82,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gwKey],
    rateLimits: { appPublic: { limit: 4, windowMs: 2000 }, appKey: { limit: 4, windowMs: 2000 }, gateway: { limit: 4, windowMs: 2000 } },
  });
  let dir: string;
  let pane: TmuxPane | undefined;
  beforeAll(() => {
    requireTmux();
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-launcher-'));
  });
  afterAll(() => {
    pane?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("says why it stops on a line of its own, below the progress line, and stops once", async () => {
    const env = commandEnv(fx.sim, { appKey, gatewayKey: gwKey }, fx.databaseUrl, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir, LANG: 'C.UTF-8' });
    const marker = uniqueName('tesync_npm');
    pane = tmuxPane(uniqueName('tesync_launcher'), dir, COLUMNS, env, ['sync'], { npm: marker });
    const walking = await pane.until((t) => /\d+\/\d+ done \| ETA/.test(t) || t.includes('tesync exited'), 60_000);
    expect(walking.at(-1), 'the walk on screen').toMatch(/\d+\/\d+ done \| ETA/);
    // npm forwards SIGTERM to its shell, which dies of it: tesync is left to its watch.
    const shell = shellOf(marker);
    expect(shell, 'the sh -c that npm would run').toBeDefined();
    process.kill(shell!, 'SIGTERM');
    const stopped = await pane.until((t) => /^tesync: SIGTERM: /m.test(t), 60_000);
    const last = stopped.at(-1)!;
    const said = lines(last);
    const notice = said.findIndex((l) => l.startsWith('tesync: npm, which started this command, has ended: stopping as on SIGTERM'));
    expect(notice, last).toBeGreaterThanOrEqual(0);
    // Nothing of the progress line before it on its line, nor glued after the progress.
    for (const l of said) expect(l, last).not.toMatch(/(done|requests).*tesync: npm, which/);
    // One signal, one stop: never "again: quitting at once".
    expect(stopped.join('\n')).not.toContain('again: quitting at once');
    expect(last).toMatch(/^tesync: SIGTERM: run interrupted \(\d+ done, \d+ left\)/m);
    for (const c of [...walking, ...stopped]) for (const l of lines(c)) expect(displayWidth(l), l).toBeLessThanOrEqual(COLUMNS);
  }, patience(150_000));
});
