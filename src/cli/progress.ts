// Live progress for `tesync sync` and `tesync demo` on a terminal: one line, redrawn in place,
// from the command's first moment (what it is doing while the warehouse opens), then the walk:
// resources done/planned, the ETA (eta.ts: an estimate with its range), the current wait for
// rate budget in plain words, failures, requests; once nothing is left to fetch, that the run
// is closing, and at the end the counts alone (an ETA of a finished walk says nothing). The line fits the terminal: the ETA and the wait come first, and what
// does not fit is left out whole, least important first. Off the terminal (or with --json)
// the pino lines are the progress; on it, log lines are printed above the line, in words.
import { displayWidth, truncateToWidth, wrapToWidth } from '../lib/display-width.ts';
import { logLineInWords, redirectLogger, type Logger } from '../lib/logger.ts';
import { RESERVE_REASON, WINDOW_LADDER_MS } from '../upstream/budget/budget-state.ts';
import type { BucketStatus } from '../upstream/index.ts';
import { createEtaEstimator, formatDuration, formatEta, walkEta, type BucketWork, type Eta, type Pace } from './eta.ts';
import type { LiveProgress } from './sync-session.ts';

export interface ProgressDisplay {
  /** Before the walk: what the command is doing (`opening the warehouse`). */
  phase(text: string): void;
  /** The walk's progress (sync-session calls it a few times a second). */
  update(p: LiveProgress): void;
  /** A line of one's own (fitted to the terminal), for progress that is not a walk in this process. */
  show(text: string): void;
  /** A line of output above the progress line. */
  print(text: string, to?: NodeJS.WritableStream): void;
  /**
   * A logger beside the progress line: warnings (or `level`) printed above it, in words
   * (progressLogger), broken between words to the terminal's width.
   */
  logger(base: Logger, level?: string): Logger;
  /** The walk's last line stays on screen (unless `keepLine` is false); a phase's line goes. */
  stop(keepLine?: boolean): void;
}

/** The upstream buckets as a user knows them. */
const HOSTS: Record<string, { long: string; short: string }> = {
  'app-public': { long: 'app host', short: 'app' },
  'app-key': { long: 'app host (API key)', short: 'app key' },
  gateway: { long: 'gateway', short: 'gateway' },
};

function hostOf(bucket: string): { long: string; short: string } {
  return HOSTS[bucket] ?? { long: bucket, short: bucket };
}

/** `300/min`, `30/10s`, `1000/h`; `30 per window` while the window is a guess. */
export function formatRate(limit: number | undefined, windowMs: number | undefined, known: boolean): string | undefined {
  if (limit === undefined) return undefined;
  if (windowMs === undefined || !known) return `${limit} per window`;
  // A window measured from whole-second reset headers, or bounded from above by the answers
  // that showed its refill, is a little longer than it is: said as the common length it is
  // so close to.
  const common = WINDOW_LADDER_MS.find((r) => windowMs >= r * 0.95 && windowMs <= r * 1.2);
  const s = Math.round((common ?? windowMs) / 1000);
  if (s === 1) return `${limit}/s`;
  if (s === 60) return `${limit}/min`;
  if (s === 3600) return `${limit}/h`;
  if (s >= 120 && s % 60 === 0) return `${limit}/${s / 60}min`;
  return `${limit}/${Math.max(1, s)}s`;
}

export interface WaitText {
  /** `waiting 12 s: app host rate limit (300/min)` */
  long: string;
  /** `wait 12s: app limit 300/min` */
  short: string;
}

/**
 * What the wait says, in a user's words: the bucket held back longest (a bucket waiting for
 * its first answer when none is held back for a time), why, and for how long.
 */
export function describeWait(buckets: readonly BucketStatus[], nowMs: number): WaitText | undefined {
  const held = buckets.filter((b) => b.waiters > 0 && b.reason !== undefined && (b.waitingUntilMs === undefined || b.waitingUntilMs > nowMs));
  const timed = held.filter((b) => b.waitingUntilMs !== undefined);
  const b = timed.length > 0 ? timed.reduce((a, c) => (c.waitingUntilMs! > a.waitingUntilMs! ? c : a)) : held[0];
  if (!b) return undefined;
  const host = hostOf(b.bucket);
  const secs = b.waitingUntilMs === undefined ? undefined : Math.ceil((b.waitingUntilMs - nowMs) / 1000);
  const lead = secs === undefined ? 'waiting' : `waiting ${secs} s`;
  const shortLead = secs === undefined ? 'wait' : `wait ${secs}s`;
  const rate = formatRate(b.limit, b.windowMs, b.windowKnown);
  const reason = b.reason ?? '';
  if (reason === 'retry-after') return { long: `${lead}: ${host.long} asked us to wait (429)`, short: `${shortLead}: ${host.short} said wait (429)` };
  if (reason === 'probing the budget') return { long: `${lead}: learning the ${host.long} rate limit`, short: `${shortLead}: learning ${host.short} limit` };
  if (reason === RESERVE_REASON) {
    return { long: `${lead}: ${host.long} rate limit${rate ? ` (${rate})` : ''} nearly used`, short: `${shortLead}: ${host.short} limit nearly used` };
  }
  // The window's budget is spent: it comes back at the window's end.
  return { long: `${lead}: ${host.long} rate limit${rate ? ` (${rate})` : ''}`, short: `${shortLead}: ${host.short} limit${rate ? ` ${rate}` : ''}` };
}

/**
 * Pure: the buckets' budgets with what the answers taught of a limit no header states (the
 * app host sends X-RateLimit-Remaining only): the highest count left, plus the request that
 * spent it.
 */
export function withLearnedLimits(buckets: readonly BucketStatus[], times: LiveProgress['requestTimes']): BucketStatus[] {
  return buckets.map((b) => {
    const seen = times[b.bucket]?.maxRemaining;
    return b.limit === undefined && seen !== undefined && b.mode !== 'unmetered' ? { ...b, limit: seen + 1 } : b;
  });
}

/** Pure: the least the walk's requests still take by the rate budget, from its live progress (the ETA's floor). */
export function budgetPace(p: Pick<LiveProgress, 'pending' | 'buckets' | 'requestTimes'>): Pace | undefined {
  const buckets = withLearnedLimits(p.buckets, p.requestTimes);
  const names = new Set([...Object.keys(p.pending.byBucket), ...buckets.map((b) => b.bucket)]);
  const work: BucketWork[] = [...names].map((bucket) => {
    const lane = p.pending.byBucket[bucket];
    const times = p.requestTimes[bucket];
    return {
      bucket,
      needed: lane ? lane.queued + lane.active : 0,
      status: buckets.find((b) => b.bucket === bucket),
      meanRequestMs: times && times.count > 0 ? times.ms / times.count : undefined,
    };
  });
  return walkEta(work, p.pending.concurrency, p.pending.planners > 0);
}

export interface ProgressView {
  done: number;
  planned: number;
  failed: number;
  requests: number;
  eta: Eta | undefined;
  wait: WaitText | undefined;
  /** `closing`: nothing left to fetch, the run being closed; `ended`: the line kept below the walk. Absent: walking. */
  stage?: 'closing' | 'ended' | undefined;
}

interface Part {
  text: string;
  /** Its shorter form, for a line that does not fit. */
  short?: string;
  /** Left out whole at this step, if the line still does not fit; never when absent. */
  dropAt?: number;
  /** Its short form from this step on. */
  shortAt?: number;
}

/**
 * Pure: the progress line in at most `columns - 1` columns (a line that fills the last
 * column wraps on some terminals). Counts, ETA and wait first, whole; then failures and
 * requests. As the line does not fit, step by step: requests go, the counts shorten,
 * failures go, the wait shortens; a bar only where there is room for it.
 */
export function progressLine(v: ProgressView, columns: number): string {
  const width = Math.max(20, columns - 1);
  const parts: Part[] = [{ text: `${v.done}/${v.planned} done`, short: `${v.done}/${v.planned}`, shortAt: 2 }];
  if (v.stage === 'closing') parts.push({ text: 'closing the run…' });
  else if (v.stage !== 'ended') parts.push({ text: formatEta(v.eta) });
  if (v.wait && v.stage === undefined) parts.push({ text: v.wait.long, short: v.wait.short, shortAt: 4 });
  if (v.failed > 0) parts.push({ text: `${v.failed} failed`, dropAt: 3 });
  parts.push({ text: `${v.requests} requests`, dropAt: 1 });
  const render = (step: number) =>
    parts
      .filter((p) => p.dropAt === undefined || step < p.dropAt)
      .map((p) => (p.short !== undefined && p.shortAt !== undefined && step >= p.shortAt ? p.short : p.text))
      .join(' | ');
  let line = render(0);
  for (let step = 1; step <= 4 && displayWidth(line) > width; step++) line = render(step);
  const whole = line === render(0);
  line = truncateToWidth(line, width);
  // A bar only where everything else fits, with room for a useful one.
  const room = width - displayWidth(line) - 1;
  if (whole && room >= 12) {
    const size = Math.min(24, room);
    const filled = v.planned > 0 ? Math.round((size * v.done) / v.planned) : 0;
    line = `${'█'.repeat(filled)}${'░'.repeat(size - filled)} ${line}`;
  }
  return line;
}

/** Pure: the line shown before the walk starts. */
export function phaseLine(text: string, elapsedMs: number, columns: number): string {
  // Time spent so far counts whole seconds passed (an ETA rounds up instead).
  return fitLine(`${text}… ${formatDuration(Math.floor(elapsedMs / 1000) * 1000)}`, columns);
}

/**
 * Pure: a line cut to `columns - 1` terminal columns, marked where it was cut. Counted in
 * columns, not characters: a CJK character or an emoji takes two, and is never cut in half.
 */
export function fitLine(line: string, columns: number): string {
  return truncateToWidth(line, Math.max(20, columns - 1));
}

/**
 * A logger beside a progress line (`level` and above, never below `base`'s own level): each
 * line handed to `print` (the display's, which prints it above the progress line) in words,
 * `tesync: warning: job failed: ...`, not as JSON glued onto the progress line. `base`'s
 * scrubbing still runs first: a secret never reaches the screen.
 */
export function progressLogger(base: Logger, print: (line: string) => void, level = 'warn'): Logger {
  return redirectLogger(base, { write: (line: string) => print(`tesync: ${logLineInWords(line)}\n`) }, level);
}

/**
 * `base` for a command that prints text for a person (sql, sim, status --serve): on a terminal
 * its lines (`level` and above) said in words, `tesync: ...`, not JSON among that text; off a
 * terminal, as it is (the JSON lines tools read).
 */
export function terminalLogger(base: Logger, level = 'info', stream: NodeJS.WriteStream = process.stderr): Logger {
  if (!stream.isTTY) return base;
  const columns = () => (stream.columns && stream.columns > 0 ? stream.columns : 80);
  // From the line's start, cleared: not after the `^C` a terminal echoes when Ctrl-C stops it.
  return progressLogger(base, (line) => void stream.write(`\r\x1b[K${wrapToWidth(line.trimEnd(), columns() - 1, '  ').join('\n')}\n`), level);
}

export function createProgressDisplay(stream: NodeJS.WriteStream = process.stderr): ProgressDisplay {
  const started = Date.now();
  const estimate = createEtaEstimator();
  let current: () => string = () => '';
  let view: ProgressView | undefined;
  let walking = false;
  let drawn = false;
  let stopped = false;
  const columns = () => (stream.columns && stream.columns > 0 ? stream.columns : 80);
  const draw = () => {
    if (stopped) return;
    stream.write(`\r${current()}\x1b[K`);
    drawn = true;
  };
  // Redraws the phase's clock while nothing else does; the walk's updates come on their own.
  const ticker = setInterval(draw, 1000);
  ticker.unref();
  const display: ProgressDisplay = {
    phase(text) {
      current = () => phaseLine(text, Date.now() - started, columns());
      walking = false;
      draw();
    },
    show(text) {
      current = () => fitLine(text, columns());
      walking = true;
      draw();
    },
    update(p) {
      const settled = p.stats.done + p.stats.failed;
      const lanes = Object.values(p.pending.byBucket);
      const busy = lanes.some((b) => b.queued > 0);
      const wait = describeWait(withLearnedLimits(p.buckets, p.requestTimes), Date.now());
      const eta = estimate({ atMs: p.elapsedMs, settled, planned: p.stats.planned, kinds: p.pending.kinds, busy, pace: budgetPace(p), held: wait !== undefined });
      const left = lanes.some((b) => b.queued + b.active > 0) || p.pending.planners > 0;
      const shown: ProgressView = (view = {
        done: settled,
        planned: p.stats.planned,
        failed: p.stats.failed,
        requests: p.requests,
        eta,
        wait,
        stage: p.stats.planned > 0 && settled >= p.stats.planned && !left ? 'closing' : undefined,
      });
      current = () => progressLine(shown, columns());
      walking = true;
      draw();
    },
    print(text, to = process.stdout) {
      if (drawn && !stopped) stream.write('\r\x1b[K');
      to.write(text);
      if (drawn && !stopped) draw();
    },
    logger(base, level) {
      return progressLogger(base, (line) => display.print(`${wrapToWidth(line.trimEnd(), columns() - 1, '  ').join('\n')}\n`, stream), level);
    },
    stop(keepLine = true) {
      clearInterval(ticker);
      // The walk's line, kept, says what it did: its counts, no ETA or closing.
      if (view && walking) current = () => progressLine({ ...view!, stage: 'ended', wait: undefined }, columns());
      if (drawn && !stopped) stream.write(walking && keepLine ? `\r${current()}\x1b[K\n` : '\r\x1b[K');
      stopped = true;
    },
  };
  return display;
}
