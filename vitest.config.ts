import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';
import { patience } from './test/helpers/patience.ts';

// Test files run three at a time: each owns its databases, Redis prefixes, simulators and
// temporary folders, and none holds time to a bound that a busy machine could break (the holds
// they check are lower bounds, or on an injected clock: docs/performance.md "The test loop").

// Started first, so that no long file is left running alone at the end (a clean clone has no
// durations from an earlier run to sort by). Longest first, as measured (docs/performance.md).
const LONGEST = [
  'test/runners/bullmq/worker.test.ts',
  'test/runners/process-faults.test.ts',
  'test/store/one-clock.test.ts',
  'test/engine/upstream-detours.test.ts',
  'test/bench/smoke.test.ts',
  'test/store/embedded-server.test.ts',
  'test/cli/bound-warehouse.test.ts',
  'test/runners/bullmq/worker-schedules.test.ts',
  'test/runners/bullmq/postgres-restart.test.ts',
  'test/runners/bullmq/lost-runs.test.ts',
  'test/cli/reset.test.ts',
  'test/engine/pages.test.ts',
  'test/store/daily-archive.test.ts',
  'test/cli/demo.test.ts',
  'test/cli/overlapping-syncs.test.ts',
  'test/cli/sync-shared-budget.test.ts',
  'test/cli/interrupt.test.ts',
  'test/upstream/faults.test.ts',
  'test/upstream/redis-budget.test.ts',
  'test/store/postgres-budget.test.ts',
  'test/cli/progress-tmux.test.ts',
  'test/cli/key-refused.test.ts',
  'test/cli/worker-alone.test.ts',
  'test/cli/worker-demo.test.ts',
  'test/store/point-in-time.test.ts',
  'test/cli/redis-refused.test.ts',
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
