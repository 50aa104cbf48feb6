// The run ledger (src/ports/run-ledger.ts) in the warehouse, for workers whose queues are in
// Postgres: the same contract as the Redis one (src/runners/bullmq/redis-run-ledger.ts), its state in
// sync.run_counts and sync.run_jobs, each step one statement (run-ledger.ts says why it is
// atomic). The counting rule stays countSettled's: a settle hands the store the counts its job adds.
import type { Db } from '../connection.ts';
import { addToRun, expireRun, isRunJobPending, enterRunJob, readRunCounts, runPending, settleRunJob, type LedgerRun } from './run-ledger.ts';
import { countSettled, emptyRunStats as zero, MAX_FAILURES, readWalkFailure, RUN_TTL_MS, type EntryState, type RunLedger, type RunStats, type SettledJob, type WalkFailure } from '../../ports/run-ledger.ts';

/** Shared by every process of the prefix (the queue prefix): one deployment's runs. */
export class PostgresRunLedger implements RunLedger {
  constructor(
    private readonly db: Db,
    private readonly prefix: string,
  ) {}

  enter(runId: string, jobId: string): Promise<EntryState> {
    return enterRunJob(this.db, this.run(runId), jobId, RUN_TTL_MS);
  }

  settle(runId: string, jobId: string, job: SettledJob): Promise<{ counted: boolean; pending: number }> {
    const add = zero();
    countSettled(add, job);
    return settleRunJob(this.db, this.run(runId), jobId, add, MAX_FAILURES);
  }

  noteFailure(runId: string, failure: WalkFailure): Promise<void> {
    return addToRun(this.db, this.run(runId), { ...zero(), failed: 1, failures: [failure] }, MAX_FAILURES, RUN_TTL_MS);
  }

  pending(runId: string): Promise<number> {
    return runPending(this.db, this.run(runId));
  }

  async stats(runId: string): Promise<RunStats> {
    const counts = await readRunCounts(this.db, this.run(runId));
    if (!counts) return zero();
    return { ...zero(), ...counts, failures: counts.failures.map(readWalkFailure) };
  }

  /** As RedisRunLedger's: false once the job settled, and once the run's rows are gone. */
  isPending(runId: string, jobId: string): Promise<boolean> {
    return isRunJobPending(this.db, this.run(runId), jobId);
  }

  /** After the run is recorded, its rows linger a little (its last readers), then go. */
  expire(runId: string, ms: number): Promise<void> {
    return expireRun(this.db, this.run(runId), ms);
  }

  private run(runId: string): LedgerRun {
    return { prefix: this.prefix, runId };
  }
}
