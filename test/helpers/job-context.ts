// A RunContext and a JobContext over a simulator and a test warehouse, built as `tesync sync`
// builds them (src/cli/sync-session.ts): the real upstream client, the warehouse's request log
// and raw responses, the configured settings. For tests that call the engine's steps one by one.
import { randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import type { Simulator } from '../../sim/index.ts';
import { settingsFrom } from '../../src/cli/sync-session.ts';
import { TryFindings } from '../../src/engine/fetch/findings.ts';
import type { JobContext, RunContext, SyncSettings } from '../../src/engine/kit/types.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { WarehouseRecorder } from '../../src/store/books/request-log.ts';
import { InProcessBudget } from '../../src/upstream/budget/budget.ts';
import { createUpstream } from '../../src/upstream/client.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import { createTestLogger, type TestLogger } from './services.ts';
import { simConfig } from './sync.ts';

export interface TestRun {
  run: RunContext;
  /** The recorder the client records to (`run.recorder`): close it before the warehouse goes. */
  recorder: WarehouseRecorder;
  /** Every line `run.logger` wrote. */
  log: TestLogger;
}

/** A run over the simulator's app host into `warehouse`, with a new run id. */
export function testRun(sim: Simulator, warehouse: Warehouse, settings: Partial<SyncSettings> = {}): TestRun {
  const config = simConfig(sim, {}, ['app']);
  const log = createTestLogger([], 'info');
  const recorder = new WarehouseRecorder(warehouse, log.logger);
  const upstream = createUpstream({ config, budget: new InProcessBudget(), recorder, logger: log.logger, retry: FAST_RETRY_POLICY });
  const run: RunContext = { warehouse, upstream, recorder, logger: log.logger, now: () => new Date(), runId: randomUUID(), settings: { ...settingsFrom(config, false), ...settings } };
  return { run, recorder, log };
}

/** One try's context in `run`, as runJob makes it: its own findings. */
export function jobContext(run: RunContext): JobContext {
  return { ...run, findings: new TryFindings() };
}

/**
 * For a file on one simulator and warehouse (call it after useSimAndWarehouse, so that its hook
 * closes the archives before the warehouse goes): a starter of runs, each with a job context.
 */
export function useTestRuns(sa: { readonly sim: Simulator; readonly warehouse: Warehouse }) {
  const runs: TestRun[] = [];
  afterAll(async () => {
    for (const t of runs) await t.recorder.close();
  });
  return (settings: Partial<SyncSettings> = {}) => {
    const t = testRun(sa.sim, sa.warehouse, settings);
    runs.push(t);
    return { ...t, ctx: jobContext(t.run) };
  };
}
