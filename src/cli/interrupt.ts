// Ctrl-C and SIGTERM on a command that walks in this process (`sync`, `demo`). The first signal
// aborts the walk: no new request goes out, the writes in flight finish, the run is closed
// `interrupted` and the embedded server is left as every command leaves it; the command then
// exits 130 (SIGINT) or 143 (SIGTERM), as shells expect. A second signal quits at once: the
// database rolls back what was in flight, and the run's interrupt, recorded in the warehouse
// the moment the first signal came (src/store/books/runs.ts markInterrupted), lets the next command
// close it `interrupted` at that time.
import { RunInterrupted } from '../engine/run/close-run.ts';

export type InterruptSignal = 'SIGINT' | 'SIGTERM';

/** The exit code of a command ended by a signal: 128 + its number, as shells report it. */
export const INTERRUPT_EXIT_CODE: Readonly<Record<InterruptSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

export interface Interrupts {
  /** Aborts on the first signal; its reason is a RunInterrupted. */
  readonly signal: AbortSignal;
  /** The first signal received, if any. */
  readonly received: InterruptSignal | undefined;
  /** Throws the RunInterrupted when a signal came: between a command's steps. */
  check(): void;
  /** Work a second signal still waits for, briefly (QUIT_GRACE_MS): the interrupt's record. */
  hold(work: Promise<unknown>): void;
  /** Stops listening: the default handling of the signals returns. */
  dispose(): void;
}

/** How long a second signal waits for held work (the interrupt's record, one statement). */
export const QUIT_GRACE_MS = 1000;

/** Pure: how a person would name the signal. */
export function signalName(signal: InterruptSignal): string {
  return signal === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM';
}

/**
 * Listens for SIGINT and SIGTERM until disposed. `quit` ends the process on a second signal
 * (tests replace it); `say` prints its one line; `phase` shows, on a progress line, that the
 * command is stopping.
 */
export function watchInterrupts(options: { say: (line: string) => void; phase?: ((text: string) => void) | undefined; quit?: (code: number) => never }): Interrupts {
  const controller = new AbortController();
  let received: InterruptSignal | undefined;
  const quit = options.quit ?? ((code: number) => process.exit(code));
  const held: Promise<unknown>[] = [];
  const on = (signal: InterruptSignal) => {
    if (received) {
      options.say(`tesync: ${signalName(signal)} again: quitting at once; what was being written is rolled back, and the next tesync command closes the run \`interrupted\`\n`);
      const code = INTERRUPT_EXIT_CODE[received];
      const grace = new Promise((resolve) => setTimeout(resolve, QUIT_GRACE_MS).unref());
      void Promise.race([Promise.allSettled(held), grace]).then(() => quit(code));
      return;
    }
    received = signal;
    options.phase?.(`${signalName(signal)}: stopping, the writes in flight finish (${signalName(signal)} again quits at once)`);
    controller.abort(new RunInterrupted(signal));
  };
  const onInt = () => on('SIGINT');
  const onTerm = () => on('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    check() {
      if (controller.signal.aborted) throw controller.signal.reason;
    },
    hold(work) {
      held.push(work.catch(() => {}));
    },
    dispose() {
      // Once a signal was taken the command is ending: a second one, however late, must still
      // quit with the first one's code, not kill the process as an unhandled signal would.
      if (received) return;
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

/**
 * The exit code of a command a signal stopped before its walk began, its line said; anything
 * else thrown is thrown again.
 */
export function stoppedBeforeTheWalk(err: unknown, interrupts: Interrupts, say: (line: string) => void): number {
  if (!(err instanceof RunInterrupted) || !interrupts.received) throw err;
  say(`tesync: ${signalName(interrupts.received)}: stopped before the walk began; nothing was written\n`);
  return INTERRUPT_EXIT_CODE[interrupts.received];
}
