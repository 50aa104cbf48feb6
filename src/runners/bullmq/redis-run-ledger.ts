// A walk spread over many jobs and processes is one run: Redis keeps, per run, the jobs it
// entered (`seen`), those not settled yet (`pending`) and the counts of the summary. Each
// step is one script (run-enter.lua, run-settle.lua), idempotent as the run ledger's contract
// asks (src/ports/run-ledger.ts).
import type { RedisClient } from '../../upstream/redis/client.ts';
import { luaFile } from '../../upstream/redis/scripts.ts';
import { emptyRunStats, MAX_FAILURES, readWalkFailure, RUN_TTL_MS, type EntryState, type RunLedger, type RunStats, type SettledJob, type WalkFailure } from '../../ports/run-ledger.ts';

const ENTER = luaFile(new URL('./run-enter.lua', import.meta.url));
const SETTLE = luaFile(new URL('./run-settle.lua', import.meta.url));

/** The run ledger of workers (src/ports/run-ledger.ts), in Redis: shared by every process of the prefix. */
export class RedisRunLedger implements RunLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async enter(runId: string, jobId: string): Promise<EntryState> {
    const k = this.keys(runId);
    const r = Number(await ENTER(this.redis, [k.seen, k.pending, k.stats], [jobId, RUN_TTL_MS]));
    return r === 1 ? 'new' : r === 2 ? 'pending' : 'settled';
  }

  /** Counts a job's outcome once; returns how many jobs of the run are still pending. */
  async settle(runId: string, jobId: string, o: SettledJob): Promise<{ counted: boolean; pending: number }> {
    const k = this.keys(runId);
    const by = o.group && o.status ? `by|${o.group}|${o.status}` : '';
    const args = [jobId, o.kind, o.rows ?? 0, by, o.failure ? JSON.stringify(o.failure) : '', MAX_FAILURES, RUN_TTL_MS];
    const [counted, pending] = (await SETTLE(this.redis, [k.pending, k.stats, k.failures], args)) as [number, number];
    return { counted: counted === 1, pending };
  }

  /** A follow-up that could not even be queued (unreadable payload): a failure of the run. */
  async noteFailure(runId: string, failure: WalkFailure): Promise<void> {
    const k = this.keys(runId);
    await this.redis.multi().hincrby(k.stats, 'failed', 1).rpush(k.failures, JSON.stringify(failure)).ltrim(k.failures, 0, MAX_FAILURES - 1).pexpire(k.failures, RUN_TTL_MS).exec();
  }

  async pending(runId: string): Promise<number> {
    return this.redis.scard(this.keys(runId).pending);
  }

  /**
   * Whether the job is still to be settled in its run. False once it settled (another attempt
   * counted it) and once the run's keys are gone (the run was recorded and its keys expired):
   * every fetch job is in `pending` before it is queued (enter), so a job not in it is a late
   * duplicate.
   */
  async isPending(runId: string, jobId: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys(runId).pending, jobId)) === 1;
  }

  async stats(runId: string): Promise<RunStats> {
    const k = this.keys(runId);
    const [hash, failures] = await Promise.all([this.redis.hgetall(k.stats), this.redis.lrange(k.failures, 0, MAX_FAILURES - 1)]);
    const stats: RunStats = emptyRunStats();
    for (const [field, value] of Object.entries(hash)) {
      const n = Number(value);
      if (field.startsWith('by|')) {
        const [, group, status] = field.split('|') as [string, string, string];
        (stats.byGroup[group] ??= {})[status] = n;
      } else if (field === 'planned' || field === 'done' || field === 'failed' || field === 'rows' || field === 'deduplicated') {
        stats[field] = n;
      }
    }
    // Entries written before failures were data (job, resource, error) read as well.
    stats.failures = failures.map((f) => readWalkFailure(parseJson(f)));
    return stats;
  }

  /** After the run is recorded, its keys linger a little (its last readers), then go. */
  async expire(runId: string, ms: number): Promise<void> {
    const k = this.keys(runId);
    await this.redis.multi().pexpire(k.seen, ms).pexpire(k.pending, ms).pexpire(k.stats, ms).pexpire(k.failures, ms).exec();
  }

  private keys(runId: string) {
    const base = `${this.prefix}:run:${runId}`;
    return { seen: `${base}:seen`, pending: `${base}:pending`, stats: `${base}:stats`, failures: `${base}:failures` };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
