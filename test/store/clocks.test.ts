// Two clocks, named (docs/glossary.md): the warehouse's clock (src/store/warehouse-clock.ts)
// for every stored time and every age judged against one, and the pacing clock
// (src/ports/pacing-clock.ts) for waits, budgets and timeouts. The process's date reaches
// neither a stored value nor an age: every `new Date()` or `Date.now` left in src/ is listed
// here with why it is neither.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** File → how many readings of the process's date it holds, and why none is stored or judged as an age. */
const ALLOWED: Record<string, { count: number; why: string }> = {
  'src/ports/pacing-clock.ts': { count: 3, why: "the pacing clock's own implementation (and its comment)" },
  'src/store/warehouse-clock.ts': { count: 3, why: 'the offset between the two clocks: the middle of a round trip, and the process clock it moves' },
  'src/cli/enqueue.ts': { count: 4, why: 'elapsed time and a deadline of the wait for a queued walk' },
  'src/cli/demo-simulator.ts': { count: 1, why: "the simulator's calendar for `tesync demo` (upstream's data, not the warehouse's time)" },
  'src/cli/migrate.ts': { count: 2, why: 'a duration for a log line' },
  'src/cli/parent-watch.ts': { count: 2, why: 'how long since the parent process was last seen (a local wait)' },
  'src/cli/progress.ts': { count: 3, why: "elapsed time on the progress line, and the budget's waits (pacing clock readings) against the same clock" },
  'src/cli/sync-session.ts': { count: 3, why: "the sync's duration for progress and its log line" },
  'src/cli/worker-terminal.ts': { count: 4, why: "the terminal's own line times, a walk's elapsed time and when to ask about a walk again: shown or waited on, never stored" },
  'src/cli/replay.ts': { count: 1, why: "a unique name for the scratch database `replay --check` creates and drops" },
  'src/cli/sim.ts': { count: 2, why: "the simulator's calendar and its banner's today (upstream's data, not the warehouse's time)" },
  'src/replay/replay.ts': { count: 2, why: "the replay's duration for its report" },
  'src/runners/in-process.ts': { count: 3, why: "a job's duration for its log line and the walk's step totals" },
  'src/runners/notify/deliver.ts': { count: 3, why: "the signature's timestamp (the receiver judges it on its own clock), a delivery round's time budget, and a Retry-After date read against now; none is stored" },
  'src/store/sessions.ts': { count: 2, why: 'the deadline of a local wait for a terminated session to end' },
  'src/runners/bullmq/fetch.ts': { count: 2, why: "a job's duration for its log line and metrics" },
  'src/lib/reconnect.ts': { count: 2, why: 'the deadline of a local retry loop' },
  'src/store/books/retention.ts': { count: 2, why: "the time budget of one retention pass (its cutoff is on the warehouse's clock)" },
  'src/store/server/embedded-port.ts': { count: 2, why: "the deadline of the embedded server's start" },
  'src/store/server/embedded-folder.ts': { count: 3, why: "the deadline of the folder lock's wait, and a lock file's age on this machine's file clock" },
};

const READING = /new Date\(\)|Date\.now\b/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p.split(path.sep).join('/')] : [];
  });
}

describe('two clocks', () => {
  const files = sources('src');

  it("the process's date is read only where it reaches neither a stored value nor an age", () => {
    const found = Object.fromEntries(files.map((f) => [f, readFileSync(f, 'utf8').match(READING)?.length ?? 0]).filter(([, n]) => n !== 0));
    expect(found).toEqual(Object.fromEntries(Object.entries(ALLOWED).map(([f, a]) => [f, a.count])));
  });

  it('names two clock types, and none of the old ones', () => {
    expect(readFileSync('src/store/warehouse-clock.ts', 'utf8')).toMatch(/export class WarehouseClock\b/);
    expect(readFileSync('src/ports/pacing-clock.ts', 'utf8')).toMatch(/export interface PacingClock\b/);
    const old = /\b(ServerClock|serverClockOffset|onServerClock|StoreClock)\b|\bserverClock\(/;
    expect(files.filter((f) => old.test(readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('every reason is written', () => {
    for (const a of Object.values(ALLOWED)) expect(a.why.length).toBeGreaterThan(10);
  });
});
