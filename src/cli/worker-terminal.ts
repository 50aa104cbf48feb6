// `tesync worker` on a terminal: one line in words per event that matters to the person
// watching (the worker ready and where its status page is, a walk started, a walk finished with
// its status and counts, a warning, a failure), printed above a progress line: the running
// walk's jobs done, failed and rows written, or since when the worker has been idle. The lines
// come from the worker's own log lines (the ones written off a terminal), as pino wrote them:
// scrubbed of secrets first. Job by job detail (each `job done`) only moves the progress line.
// A walk ends in the log of the worker that finished it only: one this worker saw only through
// its jobs is looked up in the warehouse once they stop coming (watchRuns), and said ended.
// Off a terminal, or with --json, the worker writes its JSON lines as ever: this is not used.
import { displayWidth, wrapToWidth } from '../lib/display-width.ts';
import { logLineInWords, redirectLogger, type Logger } from '../lib/logger.ts';
import { formatDuration } from './eta.ts';
import { createProgressDisplay, fitLine, type ProgressDisplay } from './progress.ts';

/** A walk this worker has seen jobs of. */
export interface WalkSeen {
  runId: string;
  /** `schedule screener`, `enqueue`, or `run 1a2b3c4d` for a walk another worker started. */
  label: string;
  startedMs: number;
  /** Jobs of the walk this worker settled. */
  done: number;
  failed: number;
  rows: number;
  /** Its last job line: a walk finished by another worker is forgotten after a while. */
  lastMs: number;
  /** When the warehouse was last asked whether it has ended (watchRuns). */
  askedMs?: number;
}

export interface WorkerTerminalState {
  ready: boolean;
  /** `http://localhost:9464/` once the worker is ready. */
  pageUrl?: string;
  walks: Map<string, WalkSeen>;
  /** Finished walks by status. */
  finished: Record<string, number>;
  idleSinceMs?: number;
}

export function newWorkerTerminalState(): WorkerTerminalState {
  return { ready: false, walks: new Map(), finished: {} };
}

/** Joins the words of what must stay on one line (a schedule and its cron pattern); printed as a space. */
export const NO_BREAK = '\u00a0';

/** Info lines about one job: they move the progress line, they are not said. */
const JOB_FIELDS = ['job', 'resource', 'jobId'];
/** A walk seen only through its jobs is forgotten after this long without one (another worker finished it). */
const FORGET_MS = 10 * 60_000;
/** A walk whose jobs stopped coming this long ago is looked up (another worker may have finished it); and again after as long. */
export const QUIET_MS = 3_000;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const shortRun = (runId: string) => runId.slice(0, 8);
const seconds = (ms: number) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : formatDuration(ms));
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function walkLabel(e: Record<string, unknown>): string {
  const schedule = text(e.schedule);
  const trigger = text(e.trigger);
  if (schedule !== undefined) return trigger === 'schedule' || trigger === undefined ? `schedule ${schedule}` : `${trigger}, schedule ${schedule}`;
  return trigger ?? `run ${shortRun(text(e.runId) ?? '?')}`;
}

function walkOf(state: WorkerTerminalState, e: Record<string, unknown>, nowMs: number): WalkSeen | undefined {
  const runId = text(e.runId);
  if (runId === undefined) return undefined;
  let walk = state.walks.get(runId);
  if (!walk) {
    walk = { runId, label: walkLabel(e), startedMs: nowMs, done: 0, failed: 0, rows: 0, lastMs: nowMs };
    state.walks.set(runId, walk);
  }
  walk.lastMs = nowMs;
  return walk;
}

/**
 * Pure (but for `state`, updated in place): what one log line does on the terminal: the lines
 * it prints (none for a job's own progress), without their time; `line` is the JSON pino wrote.
 */
export function narrate(state: WorkerTerminalState, line: string, nowMs: number): string[] {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    entry = undefined;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    const said = logLineInWords(line);
    return said === '' ? [] : [said];
  }
  const e = entry as Record<string, unknown>;
  const level = count(e.level);
  const msg = text(e.msg) ?? '';
  switch (msg) {
    case 'worker ready': {
      state.ready = true;
      state.idleSinceMs ??= nowMs;
      const port = count(e.metricsPort);
      state.pageUrl = `http://localhost:${port}/`;
      // Each schedule whole on its line: a cron pattern is never broken across two.
      const schedules = typeof e.schedules === 'object' && e.schedules !== null ? Object.entries(e.schedules as Record<string, unknown>).map(([id, p]) => `${id} ${String(p)}`.replaceAll(' ', NO_BREAK)) : [];
      const queues = text(e.queues) === 'redis' ? 'Redis (REDIS_URL)' : "the warehouse's Postgres";
      return [
        `worker ready: status page ${state.pageUrl}`,
        `/metrics and /healthz beside it; queues in ${queues}, prefix ${text(e.prefix) ?? '?'}; ${plural(count(e.concurrency), 'job')} at once per upstream bucket`,
        ...(schedules.length > 0 ? [`schedules: ${schedules.join('; ')}`] : []),
      ];
    }
    case 'run started': {
      const walk = walkOf(state, e, nowMs)!;
      walk.label = walkLabel(e);
      walk.startedMs = nowMs;
      const sources = Array.isArray(e.sources) ? e.sources.join(', ') : '';
      const groups = Array.isArray(e.groups) ? `: ${e.groups.join(', ')}` : '';
      return [`walk started (${walk.label}): ${sources || 'no source'}${groups}; run ${shortRun(walk.runId)}`];
    }
    case 'run finished': {
      const runId = text(e.runId) ?? '';
      const label = state.walks.get(runId)?.label ?? walkLabel(e);
      state.walks.delete(runId);
      const status = text(e.status) ?? 'finished';
      state.finished[status] = (state.finished[status] ?? 0) + 1;
      if (state.walks.size === 0) state.idleSinceMs = nowMs;
      const counts = [`${count(e.done)} done`, `${count(e.failed)} failed`, plural(count(e.rows), 'row'), plural(count(e.requests), 'request')];
      return [`walk ${status} in ${seconds(count(e.durationMs))} (${label}): ${counts.join(', ')}; run ${shortRun(runId)}`];
    }
    case 'job done': {
      const walk = walkOf(state, e, nowMs);
      if (walk) {
        walk.done += 1;
        walk.rows += count(e.rows);
      }
      return [];
    }
  }
  // A job that failed for good (not one BullMQ tries again) counts against its walk.
  if (msg === 'job failed' || msg === 'job failed in BullMQ') {
    const walk = walkOf(state, e, nowMs);
    if (walk) walk.failed += 1;
  } else if (JOB_FIELDS.some((f) => f in e) && level < 40) {
    // A job's own news (a list read again, a date filter refused): the progress line's.
    walkOf(state, e, nowMs);
    return [];
  }
  return [logLineInWords(line)];
}

/** Pure (marks them asked): the walks to look up now: quiet for QUIET_MS, not asked for as long. */
export function walksToAsk(state: WorkerTerminalState, nowMs: number): string[] {
  const quiet = [...state.walks.values()].filter((w) => nowMs - w.lastMs >= QUIET_MS && nowMs - (w.askedMs ?? 0) >= QUIET_MS);
  for (const w of quiet) w.askedMs = nowMs;
  return quiet.map((w) => w.runId);
}

/** Pure (but for `state`): a walk found ended in the warehouse, finished by another worker: said once, gone from the progress line. */
export function endedElsewhere(state: WorkerTerminalState, runId: string, status: string, nowMs: number): string[] {
  const walk = state.walks.get(runId);
  if (!walk || status === 'running') return [];
  state.walks.delete(runId);
  state.finished[status] = (state.finished[status] ?? 0) + 1;
  if (state.walks.size === 0) state.idleSinceMs = nowMs;
  const here = `${plural(walk.done, 'job')} of it done here${walk.failed > 0 ? `, ${walk.failed} failed` : ''}`;
  return [`walk ${status} (${walk.label}), finished by another worker: ${here}; run ${shortRun(runId)}`];
}

/**
 * Pure: one said line as printed: its time first, broken between words within `columns` (one
 * short of them), its later lines under its text; a no-break space holds what must not be
 * broken (a cron pattern), and is a space on screen.
 */
export function screenLines(stamp: string, said: string, columns: number): string {
  return `${wrapToWidth(`${stamp} ${said}`, columns - 1, ' '.repeat(stamp.length + 3)).join('\n').replaceAll(NO_BREAK, ' ')}\n`;
}

/** Pure: the progress line: the running walk, or since when the worker is idle; fitted to `columns`. */
export function workerLine(state: WorkerTerminalState, nowMs: number, columns: number): string {
  for (const [runId, walk] of state.walks) if (nowMs - walk.lastMs > FORGET_MS) state.walks.delete(runId);
  const walks = [...state.walks.values()].sort((a, b) => b.startedMs - a.startedMs);
  const parts: string[] = [];
  const newest = walks[0];
  if (newest) {
    parts.push(`walking (${newest.label}) ${formatDuration(nowMs - newest.startedMs)}: ${plural(newest.done, 'job')} done${newest.failed > 0 ? `, ${newest.failed} failed` : ''}, ${plural(newest.rows, 'row')}`);
    if (walks.length > 1) parts.push(`${walks.length - 1} more ${walks.length === 2 ? 'walk' : 'walks'}`);
  } else {
    parts.push(`idle since ${clock(state.idleSinceMs ?? nowMs)} UTC`);
    const done = Object.entries(state.finished).map(([status, n]) => `${n} ${status}`);
    parts.push(done.length > 0 ? `walks: ${done.join(', ')}` : 'no walk yet');
  }
  // Two columns short of fitLine's: the `^C` a terminal echoes after it must not wrap it. The
  // page's address (said when the worker was ready) only where it fits whole.
  const withPage = state.pageUrl ? [...parts, state.pageUrl].join(' | ') : undefined;
  if (withPage !== undefined && displayWidth(withPage) <= Math.max(20, columns - 3)) return withPage;
  return fitLine(parts.join(' | '), columns - 2);
}

export interface WorkerTerminal {
  /** The worker's logger on the terminal: its lines in words above the progress line. */
  logger: Logger;
  /** Before the worker is ready: what it is doing (`starting the embedded warehouse`). */
  phase(text: string): void;
  /**
   * Looks up, with `status` (sync.runs), the walks whose jobs stopped coming: one another worker
   * finished is said ended. Until the returned function is called (before the warehouse closes).
   */
  watchRuns(status: (runId: string) => Promise<string | undefined>): () => void;
  /** The progress line goes; the lines above it stay. */
  stop(): void;
}

/** `base`'s lines (at its level, scrubbed as ever) said in words on `stream`, a terminal. */
export function createWorkerTerminal(base: Logger, stream: NodeJS.WriteStream = process.stderr): WorkerTerminal {
  const display: ProgressDisplay = createProgressDisplay(stream);
  const state = newWorkerTerminalState();
  const columns = () => (stream.columns && stream.columns > 0 ? stream.columns : 80);
  const redraw = () => {
    if (state.ready) display.show(workerLine(state, Date.now(), columns()));
  };
  // The walk's clock and the idle line move on their own.
  const ticker = setInterval(redraw, 1000);
  ticker.unref();
  const say = (said: readonly string[], now: number) => {
    for (const s of said) display.print(screenLines(clock(now), s, columns()), stream);
  };
  const write = (line: string) => {
    const now = Date.now();
    say(narrate(state, line.trimEnd(), now), now);
    redraw();
  };
  let watch: NodeJS.Timeout | undefined;
  return {
    logger: redirectLogger(base, { write }),
    phase: (t) => display.phase(t),
    watchRuns(status) {
      let watching = true;
      watch = setInterval(() => {
        for (const runId of walksToAsk(state, Date.now())) {
          status(runId).then(
            (s) => {
              if (!watching || s === undefined) return;
              const now = Date.now();
              say(endedElsewhere(state, runId, s, now), now);
              redraw();
            },
            // Asked again after QUIET_MS; the walk is forgotten after FORGET_MS anyway.
            () => {},
          );
        }
      }, 1000);
      watch.unref();
      return () => {
        watching = false;
        clearInterval(watch);
      };
    },
    stop() {
      clearInterval(ticker);
      clearInterval(watch);
      display.stop(false);
    },
  };
}
