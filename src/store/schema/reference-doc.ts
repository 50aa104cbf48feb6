// The per-table reference of docs/warehouse.md, from the same catalog as the comments
// (catalog.ts): a section per schema, a heading per table and view with its key, its
// description, a column table, its caveats. `npm run docs:warehouse` writes it between the
// markers; a test fails when the file and this differ.
import { warehouseCatalog, type CatalogRelation, type CatalogSchema, type WarehouseCatalog } from './catalog.ts';

export const START_MARKER = '<!-- generated:tables:start -->';
export const END_MARKER = '<!-- generated:tables:end -->';
const NOTICE =
  '<!-- Generated from src/schema/warehouse/descriptions/ by `npm run docs:warehouse`: edit the descriptions there, then run it. The database has the same text as comments (psql: \\d+ app.tokens). -->';

const code = (s: string) => `\`${s}\``;
const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
const list = (names: readonly string[]) => names.map(code).join(', ');

function heading(r: CatalogRelation): string {
  const id = `${r.schema}.${r.name}`;
  const what = r.derived?.rule === 'archive' ? `the daily archive of ${code(r.derived.base)}` : r.description?.summary;
  const key = r.key.length === 0 ? '' : r.kind === 'table' ? ` (key ${code(r.key.join(', '))})` : ` (one row per ${code(r.key.join(', '))})`;
  return `### ${code(id)}${what ? `: ${what}` : ''}${key}`;
}

function columnTable(columns: CatalogRelation['columns']): string[] {
  const typed = columns.some((c) => c.type);
  const out = typed ? ['| column | type | meaning |', '|---|---|---|'] : ['| column | meaning |', '|---|---|'];
  for (const c of columns) {
    const text = cell(c.text?.trim() || '(not described)');
    out.push(typed ? `| ${code(c.name)} | ${c.type ?? ''} | ${text} |` : `| ${code(c.name)} | ${text} |`);
  }
  return out;
}

function relationSection(r: CatalogRelation, schema: CatalogSchema): string[] {
  const id = `${r.schema}.${r.name}`;
  const out = [heading(r), ''];
  if (r.derived?.rule === 'archive') {
    out.push(r.comment!, '');
    const own = r.columns.filter((c) => c.from === 'rule');
    out.push(`Columns: those of ${code(r.derived.base)}, and ${own.map((c) => `${code(c.name)}: ${c.text ?? '(not described)'}`).join('; ')}.`, '');
    return out;
  }
  const d = r.description;
  if (d?.description) out.push(d.description, '');
  // The columns every row carries are described once, in the conventions; named after the table.
  const collapsed = schema.description.sharedColumns ? r.columns.filter((c) => c.from === 'every-row') : [];
  out.push(...columnTable(r.columns.filter((c) => !collapsed.includes(c))), '');
  if (d?.notes) out.push(d.notes, '');
  const also = collapsed.map((c) => c.name);
  if (also.length > 0) out.push(`Plus ${list(also)}, as on every row (see the conventions at the top).`, '');
  if (r.versioned && r.kind === 'table') {
    out.push(
      `Point in time: ${code(`${id}_history`)} holds the earlier versions (the same columns, with ${code('known_from')}, ${code('known_to')} and ${code('closing_raw_response_id')}); ` +
        `${code(`${id}_as_of(at)`)} returns the rows as tesync knew them at ${code('at')}.${d?.asOf ? ` ${d.asOf}` : ''} ` +
        `${code(`${id}_changes(from_at, to_at)`)} lists what changed in between (${code('sync.changes')})${r.dataTime ? `; its data time is ${code(r.dataTime)}, by which its revisions are told` : ''}.`,
      '',
    );
  } else if (r.versioned) {
    out.push(`As of an instant: ${code(`${id}_as_of(at)`)} returns the same columns as tesync knew them at ${code('at')}.${d?.asOf ? ` ${d.asOf}` : ''}`, '');
  }
  if (!d) out.push('(not described)', '');
  return out;
}

/** A generated block: its markers and what goes between them. */
export interface Block {
  start: string;
  end: string;
  text: string;
}

const markers = (name?: string) => ({
  start: name ? `<!-- generated:tables:${name}:start -->` : START_MARKER,
  end: name ? `<!-- generated:tables:${name}:end -->` : END_MARKER,
});

function schemaBody(s: CatalogSchema): string[] {
  const out: string[] = [];
  for (const r of s.relations) {
    if (r.derived?.rule === 'history') continue; // named under its table
    out.push(...relationSection(r, s));
  }
  const functions = s.functions.filter((f) => !f.base);
  if (functions.length > 0) {
    out.push(`### Functions of ${code(s.description.name)}`, '', '| function | what it does |', '|---|---|');
    for (const f of functions) out.push(`| ${code(`${s.description.name}.${f.name}(${f.args})`)} | ${cell(f.comment)} |`);
    out.push('');
  }
  return out;
}

function block(name: string | undefined, lines: string[]): Block {
  const { start, end } = markers(name);
  while (lines.at(-1) === '') lines.pop();
  return { start, end, text: [start, NOTICE, '', ...lines, '', end].join('\n') };
}

/**
 * The generated blocks: the main one (every schema's section, heading and introduction
 * included), and one per schema with `ownBlock` (its tables and views only: the schema's
 * hand-written section has its heading).
 */
export function renderBlocks(catalog: WarehouseCatalog = warehouseCatalog()): Block[] {
  const main: string[] = [];
  const own: Block[] = [];
  for (const s of catalog.schemas) {
    const d = s.description;
    if (d.ownBlock) own.push(block(d.name, schemaBody(s)));
    else main.push(`## ${d.name} schema: ${d.title}`, '', d.description, '', ...schemaBody(s));
  }
  return [block(undefined, main), ...own];
}

/** `doc` with each generated block replaced by what the catalog makes now; throws naming a block whose markers are missing or repeated. */
export function spliceReference(doc: string, blocks: readonly Block[] = renderBlocks()): string {
  let out = doc;
  for (const b of blocks) {
    const start = out.indexOf(b.start);
    const end = out.indexOf(b.end);
    if (start < 0 || end < start || out.indexOf(b.start, start + 1) >= 0 || out.indexOf(b.end, end + 1) >= 0) {
      throw new Error(`docs/warehouse.md must hold ${b.start} and then ${b.end}, once each`);
    }
    out = out.slice(0, start) + b.text + out.slice(end + b.end.length);
  }
  return out;
}

/** The block of `doc` between `b`'s markers, markers included; undefined when they are not there. */
export function blockInDoc(doc: string, b: Pick<Block, 'start' | 'end'>): string | undefined {
  const start = doc.indexOf(b.start);
  const end = doc.indexOf(b.end);
  if (start < 0 || end < start) return undefined;
  return doc.slice(start, end + b.end.length);
}

/** The conventions table of docs/warehouse.md: `| \`column\` | meaning |` rows before the generated part. */
export function conventionsInDoc(doc: string): Record<string, string> {
  const head = doc.slice(0, Math.max(0, doc.indexOf(START_MARKER)));
  const out: Record<string, string> = {};
  for (const m of head.matchAll(/^\| `(\w+)` \| (.+) \|$/gm)) out[m[1]!] = m[2]!;
  return out;
}
