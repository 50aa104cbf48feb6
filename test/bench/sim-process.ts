// The simulator in a process of its own, so that what it spends (generating and serving a
// token's years of history costs it tens of milliseconds) is measured apart from tesync.
// Driven over the IPC channel: start → {url}; cpu → its CPU time; epoch → the dataset's epoch
// is set (sim.setEpoch), answered once it is; close → exits.
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';

export type SimRequest = { type: 'start'; options: SimOptions } | { type: 'cpu' } | { type: 'epoch'; epoch: number } | { type: 'close' };
export type SimReply = { type: 'ready'; url: string } | { type: 'cpu'; cpuMs: number; requests: number } | { type: 'epoch'; epoch: number } | { type: 'error'; message: string };

let sim: Simulator | undefined;
let served = 0;

function reply(msg: SimReply): void {
  process.send?.(msg);
}

process.on('message', (msg: SimRequest) => {
  void (async () => {
    try {
      if (msg.type === 'start') {
        sim = await startSimulator(msg.options);
        reply({ type: 'ready', url: sim.url });
      } else if (msg.type === 'cpu') {
        const u = process.cpuUsage();
        // Only the count is wanted: the log would grow with every request of a long run.
        served += sim?.requests.length ?? 0;
        sim?.resetRequests();
        reply({ type: 'cpu', cpuMs: (u.user + u.system) / 1000, requests: served });
      } else if (msg.type === 'epoch') {
        if (!sim) throw new Error('epoch before start');
        sim.setEpoch(msg.epoch);
        reply({ type: 'epoch', epoch: msg.epoch });
      } else if (msg.type === 'close') {
        await sim?.close();
        process.disconnect?.();
        process.exit(0);
      }
    } catch (err) {
      reply({ type: 'error', message: (err as Error).message });
    }
  })();
});
