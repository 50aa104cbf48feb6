// Identifiers and string literals as SQL text, for statements written as strings (generated
// migrations, the write path's statement text, comments): an identifier double-quoted, a quote
// inside doubled. Statements built with drizzle's `sql` use `sql.identifier` and parameters.
export const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** A SQL string literal (E'' when it holds a backslash), whatever standard_conforming_strings says. */
export function quoteLiteral(text: string): string {
  const body = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${body.replaceAll('\\', '\\\\')}'` : `'${body}'`;
}
