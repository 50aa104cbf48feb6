// `tesync worker` on a terminal (src/cli/worker-terminal.ts): which log lines are said, in what
// words, and what the progress line says. The terminal itself: test/cli/worker-tmux.test.ts.
import { describe, expect, it } from 'vitest';
import { endedElsewhere, narrate, newWorkerTerminalState, QUIET_MS, screenLines, walksToAsk, workerLine } from '../../src/cli/worker-terminal.ts';
import { displayWidth } from '../../src/lib/display-width.ts';

const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: 0, pid: 1, ...fields });
const run = 'c0ffee00-1111-2222-3333-444455556666';
const T0 = Date.parse('2026-11-29T03:00:00Z');

describe('the worker on a terminal', () => {
  it('says the events in words, counts the jobs on the progress line, and says no job line', () => {
    const s = newWorkerTerminalState();
    expect(narrate(s, line({ msg: 'worker ready', metricsPort: 9464, concurrency: 4, prefix: 'tesync', queues: 'postgres', schedules: { screener: '0 * * * *', bundles: 'off' } }), T0)).toEqual([
      'worker ready: status page http://localhost:9464/',
      "/metrics and /healthz beside it; queues in the warehouse's Postgres, prefix tesync; 4 jobs at once per upstream bucket",
      // Each schedule held together (no-break spaces): a cron pattern is never broken across lines.
      'schedules: screener\u00a00\u00a0*\u00a0*\u00a0*\u00a0*; bundles\u00a0off',
    ]);
    expect(workerLine(s, T0 + 5000, 80)).toBe('idle since 03:00:00 UTC | no walk yet | http://localhost:9464/');
    expect(narrate(s, line({ msg: 'run started', runId: run, schedule: 'screener', trigger: 'schedule', sources: ['app', 'gateway'], groups: ['app.screener'] }), T0 + 1000)).toEqual([
      'walk started (schedule screener): app, gateway: app.screener; run c0ffee00',
    ]);
    expect(narrate(s, line({ msg: 'job done', runId: run, job: 'app.tokens', resource: 'tokens', rows: 12, ms: 40 }), T0 + 2000)).toEqual([]);
    expect(narrate(s, line({ msg: 'a list changed while it was read; reading it again from its first page', runId: run, job: 'app.tokens', resource: 'tokens' }), T0 + 2000)).toEqual([]);
    const failed = narrate(s, JSON.stringify({ level: 40, time: 0, msg: 'job failed', runId: run, job: 'app.history', resource: 'token/aurora/history', status: 'failed', error: 'GET /api/v1/tokens/aurora/metrics/history failed with 500' }), T0 + 3000);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toBe('warning: job failed: token/aurora/history (app.history): GET /api/v1/tokens/aurora/metrics/history failed with 500');
    expect(workerLine(s, T0 + 62_000, 80)).toBe('walking (schedule screener) 1m01s: 1 job done, 1 failed, 12 rows');
    expect(workerLine(s, T0 + 62_000, 100)).toBe('walking (schedule screener) 1m01s: 1 job done, 1 failed, 12 rows | http://localhost:9464/');
    expect(narrate(s, line({ msg: 'run finished', runId: run, status: 'partial', durationMs: 61_500, done: 1, failed: 1, rows: 12, requests: 1234 }), T0 + 62_000)).toEqual([
      'walk partial in 1m02s (schedule screener): 1 done, 1 failed, 12 rows, 1,234 requests; run c0ffee00',
    ]);
    expect(workerLine(s, T0 + 70_000, 80)).toBe('idle since 03:01:02 UTC | walks: 1 partial | http://localhost:9464/');
    // A worker-level line without a job: said, in words.
    expect(narrate(s, line({ msg: 'shutting down: finishing active jobs', signal: 'SIGINT' }), T0)).toEqual(['shutting down: finishing active jobs (signal SIGINT)']);
  });

  it('fits the progress line two columns short of the terminal: room for an echoed ^C', () => {
    const s = newWorkerTerminalState();
    narrate(s, line({ msg: 'worker ready', metricsPort: 9464 }), T0);
    narrate(s, line({ msg: 'run started', runId: run, trigger: 'enqueue', schedule: 'token-data', sources: ['app', 'gateway'] }), T0);
    // The jobs came lately: a walk with no job line for ten minutes is forgotten (another worker finished it).
    for (let i = 0; i < 1234; i++) narrate(s, line({ msg: 'job done', runId: run, job: 'x', rows: 1000 }), T0 + 3_600_000);
    const l = workerLine(s, T0 + 3_700_000, 60);
    expect(workerLine(s, T0 + 3_600_000 + 600_001, 60)).toMatch(/^idle since/);
    expect(displayWidth(l)).toBeLessThanOrEqual(57);
    expect(l).toBe('walking (enqueue, schedule token-data) 1h01m: 1,234 jobs…');
  });

  it('the schedules at 80 columns: broken between schedules, never inside a cron pattern', () => {
    const s = newWorkerTerminalState();
    const schedules = { catalog: '0 */6 * * *', screener: '*/2 * * * * *', bundles: '30 4 * * *', 'token-data': '30 2 * * *', export: '15 0 * * *' };
    const said = narrate(s, line({ msg: 'worker ready', metricsPort: 9464, concurrency: 4, prefix: 'tesync', queues: 'postgres', schedules }), T0).at(-1)!;
    const printed = screenLines('03:00:00', said, 80);
    const rows = printed.trimEnd().split('\n');
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows) expect(displayWidth(r)).toBeLessThan(80);
    expect(printed).not.toContain('\u00a0');
    // Each line ends after a whole schedule: `;` or the end, never inside a pattern.
    for (const r of rows.slice(0, -1)) expect(r).toMatch(/;$/);
    for (const [id, pattern] of Object.entries(schedules)) expect(rows.some((r) => r.includes(`${id} ${pattern}`)), `${id} ${pattern}`).toBe(true);
  });

  it('a walk finished by another worker: looked up once its jobs stop coming, said ended, gone from the progress line', () => {
    const s = newWorkerTerminalState();
    narrate(s, line({ msg: 'worker ready', metricsPort: 9464 }), T0);
    // Another worker started it: this one sees only its jobs.
    for (let i = 0; i < 5; i++) narrate(s, line({ msg: 'job done', runId: run, job: 'app.history', resource: `token/t${i}/history`, rows: 10 }), T0 + 1000);
    expect(workerLine(s, T0 + 2000, 80)).toMatch(/^walking \(run c0ffee00\) 1s: 5 jobs done, 50 rows/);
    // Jobs still coming: nothing to ask.
    expect(walksToAsk(s, T0 + 1000 + QUIET_MS - 1)).toEqual([]);
    // Quiet: asked once, then not again before as long.
    expect(walksToAsk(s, T0 + 1000 + QUIET_MS)).toEqual([run]);
    expect(walksToAsk(s, T0 + 1000 + QUIET_MS + 500)).toEqual([]);
    // Still running (its last jobs elsewhere): nothing said, the line stays.
    expect(endedElsewhere(s, run, 'running', T0 + 5000)).toEqual([]);
    expect(walksToAsk(s, T0 + 1000 + 2 * QUIET_MS)).toEqual([run]);
    expect(endedElsewhere(s, run, 'succeeded', T0 + 8000)).toEqual(['walk succeeded (run c0ffee00), finished by another worker: 5 jobs of it done here; run c0ffee00']);
    expect(workerLine(s, T0 + 9000, 80)).toBe('idle since 03:00:08 UTC | walks: 1 succeeded | http://localhost:9464/');
    // Said once.
    expect(endedElsewhere(s, run, 'succeeded', T0 + 9000)).toEqual([]);
  });
});
