// watchInterrupts on the test process's own signals (emitted, not sent), with `quit` replaced:
// a second signal quits with the first one's code, even after the command let go of its
// listeners; without a signal, dispose() leaves none behind.
import { afterEach, describe, expect, it } from 'vitest';
import { watchInterrupts } from '../../src/cli/interrupt.ts';
import { patience } from '../helpers/patience.ts';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

describe('watchInterrupts', () => {
  const said: string[] = [];
  const before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  afterEach(() => {
    said.length = 0;
    // A listener a case left (it saw a signal: the process was ending) goes with the case.
    for (const s of SIGNALS) for (const l of process.listeners(s)) if (!before.get(s)!.includes(l)) process.off(s, l);
  });

  it("a second signal after dispose() still quits with the first signal's code", async () => {
    const quitted = new Promise<number>((resolve) => {
      const interrupts = watchInterrupts({ say: (l) => said.push(l), quit: (code) => (resolve(code), undefined as never) });
      process.emit('SIGTERM');
      expect(interrupts.received).toBe('SIGTERM');
      expect(interrupts.signal.aborted).toBe(true);
      interrupts.dispose();
      expect(process.listenerCount('SIGINT')).toBe(before.get('SIGINT')!.length + 1);
      process.emit('SIGINT');
    });
    const hung = new Promise((_, reject) => setTimeout(() => reject(new Error('the second signal did not quit')), patience(5_000)).unref());
    await expect(Promise.race([quitted, hung])).resolves.toBe(143);
    expect(said.join('')).toMatch(/Ctrl-C again: quitting at once/);
  });

  it('without a signal, dispose() removes its listeners', () => {
    const interrupts = watchInterrupts({ say: (l) => said.push(l), quit: () => undefined as never });
    for (const s of SIGNALS) expect(process.listenerCount(s)).toBe(before.get(s)!.length + 1);
    interrupts.dispose();
    for (const s of SIGNALS) expect(process.listenerCount(s)).toBe(before.get(s)!.length);
    expect(interrupts.received).toBeUndefined();
  });
});
