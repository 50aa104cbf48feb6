// A mistyped flag or command gets the nearest one it may have meant: `--tokn` is `--token`.
// Pure functions; main.ts says the line.
import { commandSpec, knownOptions } from './commands.ts';
import { didYouMean, nearest } from '../lib/nearest.ts';

export { didYouMean, editDistance, nearest } from '../lib/nearest.ts';

/** Pure: the option Node's parseArgs names in an ERR_PARSE_ARGS_UNKNOWN_OPTION message (`Unknown option '--tokn'. ...`). */
export function unknownOptionOf(message: string): string | undefined {
  return /^Unknown option '([^']+)'/.exec(message)?.[1];
}

/**
 * Pure: the line for an option `tesync <command>` does not take: the nearest it takes, or
 * where to see them.
 */
export function unknownOptionLine(option: string, command: string, known: readonly string[]): string {
  const meant = option.startsWith('--') ? nearest(option, known) : [];
  return meant.length > 0 ? `unknown option ${option}; ${didYouMean(meant)}` : `unknown option ${option} for tesync ${command} (see tesync ${command} --help)`;
}

/**
 * Pure: a usage error's line (`code`: Node's parseArgs error code); an unknown option gets the
 * nearest the command takes; a value that starts with a dash (which the parser calls
 * "ambiguous", over three lines) one line saying how to write it.
 */
export function usageLine(code: unknown, message: string, command: string | undefined): string {
  const ambiguous = code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ? /^Option '(--[^' ]+)[^']*' argument is ambiguous/.exec(message)?.[1] : undefined;
  if (ambiguous) return `${ambiguous} needs a value; one that starts with a dash is written ${ambiguous}=-…`;
  const spec = command === undefined ? undefined : commandSpec(command);
  const option = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? unknownOptionOf(message) : undefined;
  return spec && option ? unknownOptionLine(option, spec.name, knownOptions(spec)) : message;
}
