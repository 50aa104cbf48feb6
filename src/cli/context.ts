import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';

/** What every command receives from the composition root (src/cli/main.ts). */
export interface CommandContext {
  config: Config;
  logger: Logger;
  /** The arguments after the command name. */
  argv: string[];
}

/** The width a command's text is fitted to: the terminal's, or 80 off one (a file, a pipe, a CI log). */
export function outputWidth(out: { isTTY?: boolean; columns?: number }): number {
  return out.isTTY && out.columns && out.columns > 0 ? Math.max(40, out.columns) : 80;
}

/** A bad command line: exit code 2 with the message, no stack. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Resolves on the first SIGINT or SIGTERM. With `again`, each later one is handed to it and the
 * listeners stay until the process ends: a second signal while the command stops must not end
 * it by the default action, half-way through its stopping (a worker's jobs left locked).
 */
export function untilSignal(again?: (signal: NodeJS.Signals) => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first = true;
    const on = (signal: NodeJS.Signals) => {
      if (!first) return again?.(signal);
      first = false;
      if (!again) {
        process.off('SIGINT', on);
        process.off('SIGTERM', on);
      }
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
