// TESYNC_TEST_CPU_LOG=<file>: loaded with `--import` into every `tesync` process a test starts
// (cli.ts CHILD_NODE_OPTIONS), it appends the process's CPU seconds, wall seconds, command and
// the test file that started it (TESYNC_TEST_CPU_FILE) when it exits, for measuring what the
// suite's children cost (docs/performance.md, "The test loop").
import { appendFileSync } from 'node:fs';

const file = process.env.TESYNC_TEST_CPU_LOG;
const started = Date.now();
if (file) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    try {
      appendFileSync(file, `${((user + system) / 1e6).toFixed(2)}\t${((Date.now() - started) / 1000).toFixed(1)}\t${process.argv.slice(2, 4).join(' ')}\t${process.env.TESYNC_TEST_CPU_FILE ?? ''}\n`);
    } catch {
      // A measurement, never a reason for a test's process to fail.
    }
  });
}
