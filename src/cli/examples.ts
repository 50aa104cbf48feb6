// The example queries of docs/warehouse.md, so the demo shows what the docs promise.
import { readFileSync } from 'node:fs';
import { displayWidth, padEndToWidth } from '../lib/display-width.ts';

const DOC = new URL('../../docs/warehouse.md', import.meta.url);

export function exampleQuery(name: string): { title: string; sql: string } {
  const doc = readFileSync(DOC, 'utf8');
  const m = new RegExp(`\`\`\`sql\\n-- example: ${name}\\n-- ([^\\n]*)\\n([\\s\\S]*?)\`\`\``).exec(doc);
  if (!m) throw new Error(`docs/warehouse.md has no example named ${name}`);
  return { title: m[1]!, sql: m[2]!.trim() };
}

/** Rows as an aligned text table, padded by display width (a CJK character or an emoji takes two columns). */
export function formatRows(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(no rows)\n';
  const cols = Object.keys(rows[0]!);
  // One line per row: a newline, a tab or another control character in a value is a space.
  const cell = (v: unknown) => (v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v)).replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  const widths = cols.map((c) => Math.max(displayWidth(c), ...rows.map((r) => displayWidth(cell(r[c])))));
  const line = (vals: string[]) => vals.map((v, i) => padEndToWidth(v, widths[i]!)).join('  ').trimEnd();
  return `${[line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n')}\n`;
}
