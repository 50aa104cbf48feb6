// The run ledger (src/ports/run-ledger.ts) of runs walked in this process (`tesync sync`):
// nothing else enters or settles their jobs, so a map is enough.
import { countSettled, emptyRunStats, MAX_FAILURES, type EntryState, type RunLedger, type RunStats, type SettledJob, type WalkFailure } from '../../ports/run-ledger.ts';

/** `live(runId)` is the stats object itself, for progress. */
export class MemoryRunLedger implements RunLedger {
  private readonly runs = new Map<string, { seen: Set<string>; pending: Set<string>; stats: RunStats }>();

  live(runId: string): RunStats {
    return this.run(runId).stats;
  }

  async enter(runId: string, jobId: string): Promise<EntryState> {
    const r = this.run(runId);
    if (r.pending.has(jobId)) return 'pending';
    if (r.seen.has(jobId)) return 'settled';
    r.seen.add(jobId);
    r.pending.add(jobId);
    r.stats.planned++;
    return 'new';
  }

  async settle(runId: string, jobId: string, job: SettledJob): Promise<{ counted: boolean; pending: number }> {
    const r = this.run(runId);
    const counted = r.pending.delete(jobId);
    if (counted) countSettled(r.stats, job);
    return { counted, pending: r.pending.size };
  }

  async noteFailure(runId: string, failure: WalkFailure): Promise<void> {
    const r = this.run(runId);
    r.stats.failed++;
    if (r.stats.failures.length < MAX_FAILURES) r.stats.failures.push(failure);
  }

  async pending(runId: string): Promise<number> {
    return this.run(runId).pending.size;
  }

  async stats(runId: string): Promise<RunStats> {
    return this.run(runId).stats;
  }

  private run(runId: string) {
    let r = this.runs.get(runId);
    if (!r) this.runs.set(runId, (r = { seen: new Set(), pending: new Set(), stats: emptyRunStats() }));
    return r;
  }
}
