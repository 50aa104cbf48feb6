// A process that watches the processes above it as `npx tesync` does (src/cli/parent-watch.ts),
// for test/cli/parent-watch.test.ts, run under `sh -c` as npm runs a command: prints
// `ready <pid>`, then a line for each SIGINT or SIGTERM it receives, and exits a second after
// the first (time for a second one, which must not come, to show).
import { register } from 'tsx/esm/api';

register();
const { watchLauncher } = await import('../../src/cli/parent-watch.ts');
watchLauncher({ say: (line) => process.stderr.write(line) });
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    process.stdout.write(`${signal}\n`);
    setTimeout(() => process.exit(0), 1000);
  });
}
process.stdout.write(`ready ${process.pid}\n`);
setInterval(() => {}, 60_000);
