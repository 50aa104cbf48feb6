// The soak's simulator process: test/bench/sim-process.ts's protocol (start, cpu, epoch, close)
// plus 429 storms. tesync paces itself on the budget headers so well that the simulator's own
// fixed windows almost never answer 429; to test that tesync honours Retry-After, every
// `stormEveryMs` the next request to each API (`/api/v1/` and `/v1/`) is answered 429 with a
// Retry-After of 1-4 s (seconds form), as a real upstream does when another client shares the key.
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';
import type { SimReply } from '../bench/sim-process.ts';

export type SoakSimRequest =
  | { type: 'start'; options: SimOptions; stormEveryMs: number }
  | { type: 'cpu' }
  | { type: 'epoch'; epoch: number }
  | { type: 'close' };

let sim: Simulator | undefined;
let served = 0;
let storms = 0;
let timer: NodeJS.Timeout | undefined;

const reply = (msg: SimReply) => process.send?.(msg);

process.on('message', (msg: SoakSimRequest) => {
  void (async () => {
    try {
      if (msg.type === 'start') {
        sim = await startSimulator(msg.options);
        if (msg.stormEveryMs > 0) {
          timer = setInterval(() => {
            storms++;
            for (const prefix of ['/api/v1/', '/v1/']) sim!.script(prefix, [{ status: 429, retryAfter: String(1 + (storms % 4)) }]);
          }, msg.stormEveryMs);
        }
        reply({ type: 'ready', url: sim.url });
      } else if (msg.type === 'cpu') {
        const u = process.cpuUsage();
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
