// Pure: an app history response in long format, one row per (stream, metric, day), in every
// form the contract lists for `stream=all` (the seed does not show it), or a refusal.
//
//   list     [MetricHistory, ...], each naming its stream
//   column   one MetricHistory whose rows carry the stream in a dimension column (declared by
//            its columns[] entry, or told by cells that are the token's stream keys)
//   nested   { streams: [MetricHistory, ...] } or { streams: { <key>: MetricHistory } }
//   keyed    { <key>: MetricHistory, ... }
//   single   one MetricHistory of one named stream (what `stream=<key>` and the default return)
//
// A row is stored under its real stream key, never under `all`. When the stream of a row
// cannot be told for certain the whole response is refused (`ambiguous`), never guessed.
import { history, type History } from '../../schema/upstream/app.ts';
import { isRecord, readDecimal, readText, readTime } from '../../schema/upstream/values.ts';
import type { metricHistory } from '../../schema/warehouse/app.ts';
import { cellOf, declaredNotNumeric, textCells, timeColumnIndex } from '../../engine/kit/table.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';

export type HistoryForm = 'list' | 'column' | 'nested' | 'keyed' | 'single';

export type HistoryRow = Omit<typeof metricHistory.$inferInsert, 'fetchedAt' | 'runId'>;

export interface HistoryRead {
  rows: HistoryRow[];
  lastTs: Date | null;
  streams: string[];
  form: HistoryForm | null;
  cells: CellTally;
  /** Why the rows' streams cannot be told for certain; then nothing of it may be written. */
  ambiguous: string | null;
}

export interface HistoryAsk {
  /** `all`, a stream key, or null for the default stream. */
  stream: string | null;
  /** Stream keys the token is known to have (snapshot, screener). */
  known: ReadonlySet<string>;
}

const STREAM_COLUMN_KEYS = new Set(['stream', 'streamkey', 'stream_key']);

interface Part {
  stream: string;
  doc: History;
}

/** `cells` may be shared by the reads of one job (stream by stream). */
export function readHistory(slug: string, data: unknown, ask: HistoryAsk, cells: CellTally = new CellTally()): HistoryRead {
  const out: HistoryRead = { rows: [], lastTs: null, streams: [], form: null, cells, ambiguous: null };
  const found = partsOf(data, ask);
  if ('ambiguous' in found) {
    out.ambiguous = found.ambiguous;
    return out;
  }
  out.form = found.form;
  for (const part of found.parts) {
    if (part.stream === 'all') {
      out.ambiguous = 'a MetricHistory names its stream `all`: its rows belong to no one stream';
      return out;
    }
    const split = splitByDimension(part, ask.known);
    if ('ambiguous' in split) {
      out.ambiguous = split.ambiguous;
      return out;
    }
    if (split.dimension !== null) out.form = 'column';
    readRows(slug, part, split.dimension, out);
  }
  return out;
}

function partsOf(data: unknown, ask: HistoryAsk): { form: HistoryForm; parts: Part[] } | { ambiguous: string } {
  if (Array.isArray(data)) {
    const parts = listParts(data, ask);
    return 'ambiguous' in parts ? parts : { form: 'list', parts };
  }
  if (!isRecord(data)) return { ambiguous: 'the data is neither a MetricHistory nor a list of them' };
  const doc = asDoc(data);
  if (doc) {
    const own = ownStream(doc);
    // The stream asked for is the one answered; a named other one would be another question's answer.
    if (ask.stream !== null && ask.stream !== 'all' && own !== null && own !== ask.stream) {
      return { ambiguous: `asked for stream ${ask.stream}, the MetricHistory names ${own}` };
    }
    // No stream named ('' here): only a dimension column can tell the rows apart (splitByDimension).
    return { form: 'single', parts: [{ stream: own ?? (ask.stream !== 'all' ? (ask.stream ?? '') : ''), doc }] };
  }
  if ('streams' in data && (Array.isArray(data.streams) || isRecord(data.streams))) {
    const inner = Array.isArray(data.streams) ? listParts(data.streams, ask) : keyedParts(data.streams as Record<string, unknown>);
    return 'ambiguous' in inner ? inner : { form: 'nested', parts: withHeadInterval(inner, readText(data.interval) ?? null) };
  }
  const keyed = keyedParts(data);
  return 'ambiguous' in keyed ? keyed : { form: 'keyed', parts: keyed };
}

/** A stream that states no interval of its own has the one the nesting object states for all. */
function withHeadInterval(parts: Part[], head: string | null): Part[] {
  if (!head) return parts;
  return parts.map((p) => (readText(p.doc.interval) ? p : { ...p, doc: { ...p.doc, interval: head } }));
}

function listParts(items: unknown[], ask: HistoryAsk): Part[] | { ambiguous: string } {
  const parts: Part[] = [];
  for (const [i, item] of items.entries()) {
    const doc = asDoc(item);
    if (!doc) return { ambiguous: `item ${i} of the list is not a MetricHistory` };
    const stream = ownStream(doc) ?? (items.length === 1 && ask.stream !== 'all' ? ask.stream : null);
    if (stream === null) return { ambiguous: `MetricHistory ${i} of ${items.length} names no stream` };
    parts.push({ stream, doc });
  }
  return noRepeats(parts);
}

function keyedParts(map: Record<string, unknown>): Part[] | { ambiguous: string } {
  const entries = Object.entries(map);
  if (entries.length === 0) return { ambiguous: 'no MetricHistory in the data' };
  const parts: Part[] = [];
  for (const [key, value] of entries) {
    const doc = asDoc(value);
    if (!doc) return { ambiguous: `member ${JSON.stringify(key)} is not a MetricHistory` };
    const own = ownStream(doc);
    if (own !== null && own !== key) return { ambiguous: `member ${JSON.stringify(key)} holds the MetricHistory of stream ${own}` };
    parts.push({ stream: key, doc });
  }
  return noRepeats(parts);
}

function noRepeats(parts: Part[]): Part[] | { ambiguous: string } {
  const seen = new Set<string>();
  for (const p of parts) {
    if (seen.has(p.stream)) return { ambiguous: `two MetricHistory objects for stream ${p.stream}` };
    seen.add(p.stream);
  }
  return parts;
}

function asDoc(v: unknown): History | null {
  const parsed = history.safeParse(v);
  return parsed.success ? parsed.data : null;
}

/** The stream a MetricHistory names; `all` (the request, not a stream) names none. */
function ownStream(doc: History): string | null {
  const s = readText(doc.stream);
  return s && s.trim() !== '' && s !== 'all' ? s : null;
}

/**
 * The column that carries each row's stream, if any: declared a dimension (and about
 * streams), or undeclared with every cell one of the token's stream keys. Another text
 * column, or a dimension that is not the stream, cannot be stored: refused.
 */
function splitByDimension(part: Part, known: ReadonlySet<string>): { dimension: number | null } | { ambiguous: string } {
  const { doc } = part;
  const ti = timeColumnIndex(doc.columns);
  const dims: number[] = [];
  for (const [i, col] of doc.columns.entries()) {
    if (i === ti) continue;
    const declared = declaredNotNumeric(col);
    const texts = textCells(doc.rows, col, i);
    if (!declared && texts === null) continue;
    const aboutStreams = STREAM_COLUMN_KEYS.has(col.key.toLowerCase()) || (texts !== null && texts.size > 0 && [...texts].every((t) => known.has(t)));
    if (!aboutStreams) {
      if (declared) return { ambiguous: `column ${col.key} is a dimension other than the stream` };
      // Text cells that are no stream key: left to the numeric guard, which refuses the column.
      continue;
    }
    dims.push(i);
  }
  if (dims.length > 1) return { ambiguous: `${dims.length} columns could each be the stream` };
  if (dims.length === 1) return { dimension: dims[0]! };
  if (part.stream === '') return { ambiguous: 'one MetricHistory for every stream, and nothing tells its rows apart' };
  return { dimension: null };
}

function readRows(slug: string, part: Part, dimension: number | null, out: HistoryRead): void {
  const { doc } = part;
  const ti = timeColumnIndex(doc.columns);
  const timeColumn = doc.columns[ti]!;
  const dimColumn = dimension === null ? null : doc.columns[dimension]!;
  const streams = new Set(out.streams);
  for (const row of doc.rows) {
    const ts = readTime(cellOf(row, timeColumn, ti));
    if (!ts) {
      out.cells.badTime();
      continue;
    }
    const stream = dimColumn ? readText(cellOf(row, dimColumn, dimension!)) : part.stream;
    if (!stream || stream === 'all') {
      out.ambiguous = `a row of ${part.stream || 'the MetricHistory'} names no stream in column ${dimColumn?.key}`;
      return;
    }
    streams.add(stream);
    if (!out.lastTs || ts > out.lastTs) out.lastTs = ts;
    doc.columns.forEach((col, i) => {
      if (i === ti || i === dimension) return;
      const d = readDecimal(cellOf(row, col, i));
      out.cells.column(col.key, d.ok);
      out.rows.push({
        tokenSlug: slug,
        stream,
        metric: col.key,
        ts,
        interval: doc.interval ?? null,
        value: d.ok ? d.value : null,
        unit: col.unit ?? null,
        kind: col.kind ?? null,
        asOf: null,
        freshness: null,
        status: d.ok ? 'ok' : 'invalid',
      });
    });
  }
  out.streams = [...streams];
}
