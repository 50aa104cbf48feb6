// The replay leg (issue 58, item 4): the bench's first sync written again from its archive
// (`tesync replay`, src/replay/) against the sync itself, both with nothing to wait for: the
// simulator answers at once and sets no rate limit, so the sync's time is its own reading and
// writing, and the replay's is the same reads and writes from the archive, one try after
// another, beside copying the archive over. Both run in this process, one after the other. The
// replay is then compared with the warehouse (`--check`'s comparison, not timed): a replay
// that is quick but not equal meets nothing.
import { sql } from 'drizzle-orm';
import { performSync, settingsFrom } from '../../src/cli/sync-session.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { compareWarehouses } from '../../src/replay/compare.ts';
import { replayArchive } from '../../src/replay/replay.ts';
import { catalog } from '../../src/resources/index.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { InProcessBudget } from '../../src/upstream/index.ts';
import { syncEnv, type Scenario } from './scenario.ts';

/** The replay may take at most this many times the sync's own time. */
export const REPLAY_LIMIT = 1.5;

export interface ReplayLegResult {
  tokens: number;
  /** The first sync: its wall time, status, rows written. */
  syncMs: number;
  syncStatus: string;
  rows: number;
  /** The replay into an empty, migrated database: the archive copied over, every write repeated. */
  replayMs: number;
  bodies: number;
  writes: number;
  ratio: number;
  limit: number;
  /** The replay equals the warehouse (null: not compared). */
  equal: boolean | null;
  met: boolean;
}

export interface ReplayLegOptions {
  /** The scenario as the leg runs it: its budgets and latency are the simulator's already. */
  scenario: Scenario;
  simUrl: string;
  /** An empty database the sync writes into, and another, empty, the replay writes into. */
  sourceUrl: string;
  targetUrl: string;
  /** Compare the replay with the warehouse afterwards (untimed). */
  check: boolean;
  log: (line: string) => void;
}

export async function runReplayLeg(o: ReplayLegOptions): Promise<ReplayLegResult> {
  const config = loadConfig({ ...syncEnv(o.scenario, o.simUrl), DATABASE_URL: o.sourceUrl });
  const logger = createLogger({ level: 'warn', secrets: config.secrets });
  const source = await openWarehouse({ databaseUrl: o.sourceUrl, dataDir: '' });
  const target = await openWarehouse({ databaseUrl: o.targetUrl, dataDir: '', maxConnections: 4 });
  try {
    await source.migrate();
    await target.migrate();
    o.log(`replay: first sync of ${o.scenario.tokens} tokens, nothing to wait for`);
    const sync = await performSync(config, logger, source, { sources: ['app', 'gateway'], trigger: 'bench-replay', budget: new InProcessBudget() });
    o.log(`replay: the sync took ${(sync.durationMs / 1000).toFixed(1)} s (${sync.status}, ${sync.stats.rows} rows); replaying its archive`);
    const t0 = performance.now();
    const report = await replayArchive({ source, target, catalog, settings: (full) => settingsFrom(config, full), logger });
    const replayMs = performance.now() - t0;
    const w = report.writes;
    o.log(`replay: ${w.read + w.unchanged + w.confirmed} writes of ${report.bodies} bodies replayed in ${(replayMs / 1000).toFixed(1)} s`);
    let equal: boolean | null = null;
    if (o.check) {
      const ends = await source.query<{ run: string; at: string }>(
        // Its one run's end, as replay --check reads the runs'.
        sql`select id::text as run, to_char(finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from sync.runs where finished_at is not null`,
      );
      const c = await compareWarehouses(source, target, ends);
      equal = c.equal;
      if (!c.equal) o.log(`replay: NOT equal to the warehouse: ${c.differing.map((d) => d.table).join(', ')}`);
    }
    const ratio = replayMs / Math.max(1, sync.durationMs);
    return {
      tokens: o.scenario.tokens,
      syncMs: sync.durationMs,
      syncStatus: sync.status,
      rows: sync.stats.rows,
      replayMs,
      bodies: report.bodies,
      writes: w.read + w.unchanged + w.confirmed,
      ratio,
      limit: REPLAY_LIMIT,
      equal,
      met: ratio <= REPLAY_LIMIT && equal !== false,
    };
  } finally {
    await target.close();
    await source.close();
  }
}

/** The figure in a line, for the bench's log and table. */
export function replayLine(r: ReplayLegResult): string {
  return `replay of the first sync of ${r.tokens} tokens: ${(r.replayMs / 1000).toFixed(1)} s against the sync's ${(r.syncMs / 1000).toFixed(1)} s, ratio ${r.ratio.toFixed(2)} (limit ${r.limit}${r.equal === null ? '' : r.equal ? ', equal' : ', NOT equal'}${r.met ? '' : ', FAILED'})`;
}
