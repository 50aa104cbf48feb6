import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';

/** What every command receives from the composition root (src/cli/main.ts). */
export interface CommandContext {
  config: Config;
  logger: Logger;
  /** The arguments after the command name. */
  argv: string[];
}

/** A bad command line: exit code 2 with the message, no stack. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
