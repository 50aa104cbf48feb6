// A process that watches the processes above it as `npx tesync` does (src/cli/parent-watch.ts),
// for test/cli/parent-watch.test.ts, run under `sh -c` as npm runs a command: prints
// `ready <pid>`, then a line for each SIGINT or SIGTERM it receives, and exits a second after
// the first (time for a second one, which must not come, to show). `busy`: its event loop
// blocked most of the time, as a demo's is while it reads a long token list.
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
if (process.argv[2] === 'busy') {
  // Blocked after the poll for I/O (setImmediate), as a response's body is read: the next turn
  // of the loop runs the watch's timer before it reads a signal that came meanwhile.
  const block = () => {
    const until = Date.now() + 700;
    while (Date.now() < until);
  };
  setInterval(() => setImmediate(block), 20);
}
