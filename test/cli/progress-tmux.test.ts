// `tesync sync` on an 80-column terminal, as a person sees it: the real command in a detached
// tmux session against the simulator, the pane captured as it goes. With a tight rate limit:
// every line fits (no line wrapped), the progress shows an ETA from early on, and a wait for
// the rate limit is said in plain words. With upstream errors: the warnings are printed above
// the progress line, in words, never as JSON glued onto it. tmux is a Debian package (.ci/run
// installs it).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { patience } from '../helpers/patience.ts';
import { requireTmux, tmuxPane } from '../helpers/tmux.ts';
import { useSimAndWarehouse, type SimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, uniqueName } from '../helpers/services.ts';
import { commandEnv } from '../helpers/sync.ts';

const COLUMNS = 80;
const appKey = canaryKey('app_tmux');
const gwKey = canaryKey('gw_tmux');

interface Capture {
  /**
   * The requests the simulator had recorded when this capture was taken: the walk's own clock.
   * The simulator records on this process's event loop, which a capture holds: none arrives
   * in the middle of one.
   */
  requests: number;
  /** The pane's non-empty lines, a line the terminal wrapped joined back (-J). */
  lines: string[];
  /** The pane as a person sees it, 80 columns a row. */
  rows: string[];
}

const screen = (c: { lines: string[] }) => c.lines.join('\n');

/**
 * A tmux server of its own for a describe block: `sync(fx, every)` runs `tesync sync` from the
 * fixture's simulator into its warehouse in an 80-column pane, captured every `every` ms until
 * it exits (every 20 ms until the first output: the set-up before the walk, which prints it,
 * lasts a few database round trips). The server goes before the fixture's teardown: the
 * tesync in the pane goes before its simulator.
 */
function useTmux(label: string): { sync(fx: SimAndWarehouse, everyMs: number): Promise<Capture[]> } {
  let dir: string;
  const socket = uniqueName(label);
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  beforeAll(() => {
    requireTmux();
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-tmux-'));
  });
  afterAll(() => {
    try {
      tmux('kill-server');
    } catch {
      // Not started, or gone already.
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    async sync(fx, everyMs) {
      const env: Record<string, string> = {
        ...commandEnv(fx.sim, { appKey, gatewayKey: gwKey }, fx.databaseUrl),
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? dir,
        LANG: 'C.UTF-8',
        TE_CONCURRENCY: '4',
      };
      fx.sim.resetRequests();
      const deadline = Date.now() + patience(45_000);
      const pane = tmuxPane(socket, dir, COLUMNS, env, ['sync']);
      const captures: Capture[] = [];
      for (;;) {
        await delay(captures.some((c) => c.lines.length > 0) ? everyMs : 20);
        const text = pane.screen();
        const rows = pane.rows();
        captures.push({ requests: fx.sim.requests.length, lines: text.split('\n').filter((l) => l.trim() !== ''), rows: rows.slice(0, rows.findLastIndex((r) => r.trim() !== '') + 1) });
        if (text.includes('tesync exited') || Date.now() > deadline) break;
      }
      return captures;
    },
  };
}

// The two blocks side by side: each walk mostly waits, on its rate limit or its latency.
describe.concurrent('tesync sync on an 80-column terminal (tmux)', () => {
  describe('progress on an 80-column terminal (tmux)', () => {
    // Each bucket allows 8 requests per 3 s: the walk (about 25 requests) waits for it.
    const limit = { limit: 8, windowMs: 3000 };
    const fx = useSimAndWarehouse({
      tokens: 2,
      historyDays: 30,
      chartsPerToken: 2,
      seed: 80,
      appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
      gatewayKeys: [gwKey],
      rateLimits: { appPublic: limit, appKey: limit, gateway: limit },
      latencyMs: [5, 30],
    });
    const pane = useTmux('tesync_progress');

    it('shows the ETA from early on and a wait in plain words, every line within 80 columns', async ({ expect }) => {
      const captures = await pane.sync(fx, 400);
      const last = captures.at(-1)!;
      expect(screen(last), 'the sync ended').toMatch(/tesync exited 0/);
      expect(screen(last)).toMatch(/^Sync succeeded in /m);

      // Nothing wrapped, ever.
      for (const c of captures) for (const line of c.lines) expect([...line].length, `after ${c.requests} requests: ${line}`).toBeLessThanOrEqual(COLUMNS);

      // Something on screen before the walk: the set-up's phases, before its first request.
      const firstShown = captures.find((c) => c.lines.length > 0);
      expect(firstShown?.requests, 'requests before the first output').toBe(0);

      const walk = captures.filter((c) => c.lines.some((l) => /\d+\/\d+ (done )?\| ETA/.test(l)) && !screen(c).includes('Sync succeeded'));
      expect(walk.length, 'captures of the walk').toBeGreaterThan(3);
      // An ETA with a figure from early on: before one bucket's window of requests more was made
      // after the walk's first line. The figure came after the last capture without one, which
      // on a busy machine may be several requests before the capture that shows it: that last
      // capture without a figure is what is held to the bound.
      const figureAt = walk.findIndex((c) => /ETA ≥?\d/.test(screen(c)));
      expect(figureAt, 'an ETA with a figure').toBeGreaterThanOrEqual(0);
      const lastWithout = walk[Math.max(0, figureAt - 1)]!;
      expect(lastWithout.requests - walk[0]!.requests, 'requests made while the ETA still had no figure').toBeLessThan(limit.limit);

      // A wait, in plain words: how long, which host, its limit.
      const waits = captures.map(screen).filter((s) => /waiting \d+ s: (app host|app host \(API key\)|gateway) (rate limit|asked us to wait)/.test(s));
      expect(waits.length, captures.map(screen).join('\n---\n')).toBeGreaterThan(0);
      expect(captures.map(screen).join('\n')).not.toMatch(/learned window|reserve to time|budget exhausted/);
      console.log(`an 80-column capture of the walk:\n${waits[0]}`);
    }, patience(60_000));
  });

  describe('warnings beside the progress line on an 80-column terminal (tmux)', () => {
    // One answer in four a 500: requests are retried (warnings), the walk goes on.
    const fx = useSimAndWarehouse({
      tokens: 3,
      historyDays: 20,
      chartsPerToken: 2,
      seed: 81,
      appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
      gatewayKeys: [gwKey],
      faults: { errorRate: 0.25 },
      latencyMs: [20, 60],
    });
    const pane = useTmux('tesync_warnings');

    it('prints each warning above the progress line, in words: no JSON on screen, the progress line whole and last', async ({ expect }) => {
      const captures = await pane.sync(fx, 150);
      const last = captures.at(-1)!;
      expect(screen(last), 'the sync ended').toMatch(/tesync exited [01]/);
      expect(screen(last)).toMatch(/^Sync (succeeded|partial) in /m);
      const all = captures.map(screen).join('\n');
      expect(all, 'no JSON log line on screen').not.toContain('{"level"');
      expect(all).not.toContain(appKey);
      expect(all).not.toContain(gwKey);

      // Nothing the terminal had to wrap: a warning is broken between words, within the columns.
      for (const c of captures) for (const line of c.lines) expect([...line].length, `after ${c.requests} requests: ${line}`).toBeLessThan(COLUMNS);

      const progress = /^(?:[█░]+ )?\d+\/\d+(?: done)? \| ETA /;
      const warning = /^tesync: warning: upstream request failed; retrying: GET \/\S+ failed with 500 internal[-_]error: Internal Server Error \(request id [^)]+\) \(attempt \d, next try in \d+(?:\.\d)? m?s\)$/;
      // The walk with warnings on screen: the warnings above, each on lines of its own, in words;
      // the progress line whole, last, and nothing glued onto it.
      const during = captures.filter((c) => !screen(c).includes('Sync ') && c.lines.some((l) => l.startsWith('tesync: warning:')) && progress.test(c.lines.at(-1)!));
      expect(during.length, all).toBeGreaterThan(0);
      for (const c of during) {
        expect(c.lines.at(-1)).not.toContain('tesync:');
        // Above it: warnings, a warning's later lines indented by two spaces.
        const warnings = c.lines
          .slice(0, -1)
          .join('\n')
          .split(/\n(?!  )/)
          .map((w) => w.replace(/\n  /g, ' '));
        for (const w of warnings) expect(w, screen(c)).toMatch(warning);
      }
      // No capture has a warning glued after progress, or progress glued after a warning.
      for (const c of captures) for (const line of c.lines) expect(line).not.toMatch(/\d+ requests.*tesync:|tesync: warning:.*\| ETA /);
      const shown = during.reduce((a, c) => (c.lines.length > a.lines.length ? c : a));
      console.log(`an 80-column capture of a sync with warnings:\n${shown.rows.join('\n')}`);
    }, patience(60_000));
  });
});
