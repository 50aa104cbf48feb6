// Help texts that fit an 80-column terminal: an option's text broken between words beside its
// flag, never past the last column, however long the text or the flag.
import { displayWidth, wrapToWidth } from '../lib/display-width.ts';

/** The widest a line of help may be (one column short of 80: a full line wraps on some terminals). */
export const HELP_COLUMNS = 79;

/**
 * Pure: options as a help text lists them, `  --flag VALUE  text`: the text from `column` on,
 * broken between words within `columns`; below the flag when the flag reaches the column.
 */
export function optionLines(options: readonly (readonly [flag: string, text: string])[], column = 23, columns = HELP_COLUMNS): string[] {
  const indent = ' '.repeat(column);
  return options.flatMap(([flag, text]) => {
    const lead = `  ${flag}`;
    const body = wrapToWidth(text, columns - column, '').map((l) => `${indent}${l}`);
    if (displayWidth(lead) + 2 > column) return [lead, ...body];
    return [`${lead.padEnd(column)}${body[0]!.slice(column)}`, ...body.slice(1)];
  });
}
