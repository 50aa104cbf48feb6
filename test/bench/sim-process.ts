// The simulator in a process of its own, so that what it spends (generating and serving a
// token's years of history costs it tens of milliseconds) is measured apart from tesync.
// Driven over the IPC channel: start → {url}; cpu → its CPU time; epoch → the dataset's epoch
// is set (sim.setEpoch), answered once it is; close → exits.
// 429 storms, for the soak (test/soak/soak.ts): tesync paces itself on the budget headers so
// well that the simulator's own fixed windows almost never answer 429; to test that tesync
// honours Retry-After, a start with `stormEveryMs` > 0 has the next request to each API
// (`/api/v1/` and `/v1/`) answered 429 every `stormEveryMs`, with a Retry-After of 1-4 s
// (seconds form), as a real upstream does when another client shares the key. The bench
// starts without it.
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';

export type SimRequest = { type: 'start'; options: SimOptions; stormEveryMs?: number } | { type: 'cpu' } | { type: 'epoch'; epoch: number } | { type: 'close' };
export type SimReply = { type: 'ready'; url: string } | { type: 'cpu'; cpuMs: number; requests: number } | { type: 'epoch'; epoch: number } | { type: 'error'; message: string };

let sim: Simulator | undefined;
let served = 0;
let storms = 0;
let timer: NodeJS.Timeout | undefined;

function reply(msg: SimReply): void {
  process.send?.(msg);
}

process.on('message', (msg: SimRequest) => {
  void (async () => {
    try {
      if (msg.type === 'start') {
        sim = await startSimulator(msg.options);
        if ((msg.stormEveryMs ?? 0) > 0) {
          timer = setInterval(() => {
            storms++;
            for (const prefix of ['/api/v1/', '/v1/']) sim!.script(prefix, [{ status: 429, retryAfter: String(1 + (storms % 4)) }]);
          }, msg.stormEveryMs);
        }
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
        if (timer) clearInterval(timer);
        await sim?.close();
        process.disconnect?.();
        process.exit(0);
      }
    } catch (err) {
      reply({ type: 'error', message: (err as Error).message });
    }
  })();
});
