// An SQL identifier as text, for statements written as strings (generated migrations, the
// write path's statement text): double-quoted, a quote inside doubled. Statements built with
// drizzle's `sql` use `sql.identifier` instead.
export const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;
