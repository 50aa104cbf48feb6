import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import { patience } from './test/helpers/patience.ts';

// Test files run three at a time: each owns its databases, Redis prefixes, simulators and
// temporary folders, and none holds time to a bound that a busy machine could break (the holds
// they check are lower bounds, or on an injected clock: docs/performance.md "The test loop").

// Started first, so that no long file is left running alone at the end: a clean clone has no
// durations from an earlier run to sort by, and vitest then starts the largest files first, so
// a thin file that runs cases written elsewhere (walk-around-*.test.ts, six lines) would start
// last. Longest first, as measured three at a time (docs/performance.md, "The test loop").
const LONGEST = [
  'test/runners/bullmq/worker.test.ts',
  'test/runners/process-faults.test.ts',
  'test/store/write/one-clock.test.ts',
  'test/runners/bullmq/worker-schedules.test.ts',
  'test/runners/bullmq/redis-cluster.test.ts',
  'test/bench/smoke.test.ts',
  'test/store/server/embedded-server.test.ts',
  'test/runners/bullmq/lost-runs.test.ts',
  'test/cli/bound-warehouse.test.ts',
  'test/cli/reset.test.ts',
  'test/runners/bullmq/postgres-restart.test.ts',
  'test/engine/fetch/pages.test.ts',
  'test/engine/volatile-resync.test.ts',
  'test/engine/upstream-detours.test.ts',
  'test/engine/walk-around-embedded.test.ts',
  'test/store/point-in-time.test.ts',
  'test/cli/overlapping-syncs.test.ts',
  'test/engine/walk-around-postgres.test.ts',
  'test/cli/exit-codes.test.ts',
  'test/cli/worker-demo.test.ts',
  'test/docs/history-example.test.ts',
  'test/cli/status-readonly.test.ts',
  'test/cli/status-health.test.ts',
  'test/cli/unknown-token.test.ts',
  'test/resources/gateway/sync.test.ts',
  'test/engine/closes.test.ts',
  'test/cli/main.test.ts',
  'test/cli/worker-alone.test.ts',
  'test/store/migrate.test.ts',
  'test/cli/sync-shared-budget.test.ts',
  'test/cli/secrets-sync.test.ts',
  'test/cli/demo.test.ts',
  'test/cli/interrupt.test.ts',
  'test/store/write/daily-archive.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.findIndex((p) => f.moduleId.endsWith(p));
      return i < 0 ? LONGEST.length : i;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

// Hang guards, scaled to the machine (test/helpers/patience.ts); never a bound on speed.
const shared = {
  testTimeout: patience(60_000),
  hookTimeout: patience(120_000),
  // expect.poll gives up after 1 s by default: on a loaded machine that is a false failure.
  expect: { poll: { timeout: patience(5_000) } },
  globalSetup: ['test/helpers/global-setup.ts'],
};

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirst },
    projects: [
      // isolate: false: a worker imports the sources once for all its files, not once per file.
      { test: { ...shared, name: 'parallel', include: ['test/**/*.test.ts'], maxWorkers: 3, isolate: false } },
    ],
  },
});
