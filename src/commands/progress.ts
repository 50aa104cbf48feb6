// Live progress for `tesync sync` and `tesync demo` on a terminal: resources done/planned,
// requests, the current wait for rate budget (reason and time left), ETA. Drawn by
// cli-progress; off the terminal (or with --json) the pino lines are the progress.
import cliProgress from 'cli-progress';
import type { BucketStatus } from '../upstream/index.ts';
import type { LiveProgress } from './sync-session.ts';

export interface ProgressDisplay {
  update(p: LiveProgress): void;
  stop(): void;
}

/** What the wait column says: the bucket held back longest, why, and for how long. */
export function describeWait(buckets: readonly BucketStatus[], nowMs: number): string {
  const waiting = buckets.filter((b) => b.waitingUntilMs !== undefined && b.waitingUntilMs > nowMs && b.waiters > 0);
  if (waiting.length === 0) return '';
  const b = waiting.reduce((a, c) => (c.waitingUntilMs! > a.waitingUntilMs! ? c : a));
  const secs = Math.ceil((b.waitingUntilMs! - nowMs) / 1000);
  return ` | waiting ${secs}s for ${b.bucket} budget${b.reason ? ` (${b.reason})` : ''}`;
}

export function createProgressDisplay(stream: NodeJS.WriteStream = process.stderr): ProgressDisplay {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: '{bar} {value}/{total} resources | {requests} requests | {failed} failed{wait} | ETA {eta_formatted}',
      barsize: 24,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      fps: 8,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(p) {
      const payload = { requests: p.requests, failed: p.stats.failed, wait: describeWait(p.buckets, Date.now()) };
      const done = p.stats.done + p.stats.failed;
      if (!started) {
        bar.start(Math.max(1, p.stats.planned), done, payload);
        started = true;
      }
      bar.setTotal(Math.max(1, p.stats.planned));
      bar.update(done, payload);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
