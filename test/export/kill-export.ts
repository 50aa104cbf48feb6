// A `tesync export` that kills itself with SIGKILL at its Nth step (export.ts `onStep`: each
// file moved in, the manifest half written, written, in place, each file removed), for
// test/export/folder.test.ts. Run with `node --import tsx kill-export.ts DATABASE_URL DIR N`;
// it prints the step it dies at. With N = -1 it runs to the end and prints every step.
import { writeSync } from 'node:fs';
import { exportWarehouse } from '../../src/export/export.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { openWarehouse } from '../../src/store/connection.ts';

const [databaseUrl, dir, at] = process.argv.slice(2) as [string, string, string];
const warehouse = await openWarehouse({ databaseUrl, dataDir: '' });
let n = 0;
await exportWarehouse(warehouse, createLogger({ level: 'warn', secrets: [] }), {
  to: dir,
  onStep: (step) => {
    writeSync(1, `${n} ${step}\n`);
    if (n++ === Number(at)) process.kill(process.pid, 'SIGKILL');
  },
});
await warehouse.close();
