import { defineConfig } from 'vitest/config';

// Test files run three at a time: each owns its databases, Redis prefixes, simulators and
// temporary folders, and most of their time is spent waiting on those. The files that measure
// time against a bound run afterwards, one at a time, on an otherwise idle machine.
const SERIAL = [
  'test/upstream/budget-pacing.test.ts',
  'test/upstream/redis-budget.test.ts',
  'test/upstream/faults.test.ts',
  'test/upstream/client.test.ts',
  'test/engine/upstream-detours.test.ts',
  'test/sim/limits.test.ts',
];

const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  globalSetup: ['test/helpers/global-setup.ts'],
};

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'parallel', include: ['test/**/*.test.ts'], exclude: SERIAL, maxWorkers: 3, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'serial', include: SERIAL, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
