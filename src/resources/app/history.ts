// /api/v1/tokens/{slug}/metrics/history?stream=all: every stream, every metric, every day.
// The first sync takes everything; later ones ask only from the last day seen minus
// TE_HISTORY_OVERLAP_DAYS, whole again every TE_HISTORY_FULL_REFETCH_DAYS, and whole when
// upstream refuses the date filter (declared `incremental`; the rules: engine/incremental.ts).
//
// `stream=all` comes in one of several forms (history-read.ts). One that cannot be split by
// stream for certain is refused (its body kept `invalid`), and the streams are then fetched
// one by one, the job's declared alternative: the default stream, then each key the token is
// known to have.
// The form that worked is remembered per token, so later syncs go straight to it.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { snapshot } from '../../schema/upstream/app.ts';
import { isRecord, readText } from '../../schema/upstream/values.ts';
import { metricHistory } from '../../schema/warehouse/app.ts';
import { ProblemError } from '../../lib/errors.ts';
import { rowMeta } from '../../engine/rows.ts';
import { fetchData } from '../../engine/fetch.ts';
import { fetchSince, nextCursor, startDay, wholeFetchDue, type Cursor, type Incremental } from '../../engine/incremental.ts';
import { fetchList } from '../../engine/fetch-list.ts';
import { wholeSet } from '../../engine/sets.ts';
import { CellTally } from '../../engine/cell-tally.ts';
import { defineJob, into, refused, type JobContext, type Outcome, type Refusal } from '../../engine/types.ts';
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import type { UpstreamResponse } from '../../upstream/index.ts';
import { readHistory, type HistoryForm, type HistoryRow } from './history-read.ts';
import { readScreenerRow } from './screener.ts';
import { tokenPayload, tokenRoute } from './snapshot.ts';

/** Asked from the last day seen, less an overlap; whole every so often, or when the filter is refused. */
const INCREMENTAL: Incremental = {
  param: (s) => s.historyFromParam,
  lagMs: (s) => s.historyOverlapDays * 86_400_000,
  wholeEveryMs: (s) => s.historyFullRefetchMs,
  refusedCodes: ['invalid_date', 'invalid_date_range', 'invalid_limit'],
};

export { readHistory } from './history-read.ts';

/** How a token's history was fetched: a form of `stream=all`, or stream by stream. */
export type HistoryMode = HistoryForm | 'per-stream';

interface HistoryDetails extends Cursor {
  incremental?: boolean;
  form?: HistoryMode;
  streams?: string[];
}

/** What the fetches of one job gathered, ready to write. */
interface Gathered {
  /**
   * The rows of each response read, and the set it stated whole: the token's history
   * (`stream=all` without `from=`), one stream's (fetched alone without `from=`), or none
   * (an incremental fetch states only what it carries).
   */
  parts: { rows: HistoryRow[]; from: UpstreamResponse; whole: { tokenSlug: string; stream?: string } | null }[];
  cells: CellTally;
  lastTs: Date | null;
  streams: string[];
  mode: HistoryMode;
  incremental: boolean;
  asOf: Date | null;
  hashes: string[];
  notes: Record<string, unknown>;
}

export const appHistoryJob = defineJob({
  name: 'app.history',
  route: 'app.history',
  source: 'app',
  group: 'history',
  plannedBy: 'app.tokens',
  each: tokenRoute('metricHistory'),
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/history`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  async handle(ctx, p, state) {
    const prev = previousOf(state);
    // Stream by stream costs a request per stream: `stream=all` is tried again with the periodic full fetch.
    if (prev.form === 'per-stream' && !wholeFetchDue(INCREMENTAL, prev, ctx.settings, ctx.now())) return perStream(ctx, p.slug, state, {});
    const known = await knownStreams(ctx, p.slug);
    // Refused (on reading, or rows that contradict each other when written): the alternative.
    return outcomeOf(ctx, prev, await gatherAll(ctx, p.slug, startDay(INCREMENTAL, prev, ctx.settings, ctx.now()), known));
  },
  // `stream=all` not understood: stream by stream.
  alternative: (ctx, p, state, refusal) => perStream(ctx, p.slug, state, { refusedAll: refusal }),
});

const previousOf = (state: ResourceStateRow | undefined) => (state?.details ?? {}) as HistoryDetails;

async function perStream(ctx: JobContext, slug: string, state: ResourceStateRow | undefined, notes: Record<string, unknown>): Promise<Outcome | Refusal> {
  const prev = previousOf(state);
  const known = await knownStreams(ctx, slug);
  return outcomeOf(ctx, prev, await gatherPerStream(ctx, slug, prev, startDay(INCREMENTAL, prev, ctx.settings, ctx.now()), known, notes));
}

/** The outcome of what was gathered, either way, or the refusal of what could not be. */
function outcomeOf(ctx: JobContext, prev: HistoryDetails, g: Gathered | Refusal): Outcome | Refusal {
  if ('refused' in g) return g;
  const details: HistoryDetails & Record<string, unknown> = {
    ...nextCursor(prev, g.lastTs, g.incremental, ctx.now()),
    incremental: g.incremental,
    form: g.mode,
    streams: g.streams,
    ...g.notes,
  };
  const meta = rowMeta(ctx, { asOf: g.asOf });
  // In place: a token's history is tens of thousands of rows, and a copy of each costs
  // memory the sync does not need (docs/performance.md, "One hidden class per history row").
  const stamp = (rows: HistoryRow[]) => rows.map((r) => Object.assign(r, { runId: meta.runId, asOf: r.asOf ?? g.asOf }));
  const hash = g.hashes.length === 1 ? g.hashes[0]! : createHash('sha256').update(g.hashes.join('\n')).digest('hex');
  return { status: 'ok', asOf: g.asOf, hash, details, cells: g.cells, writes: g.parts.map((p) => into(metricHistory, stamp(p.rows), { from: p.from, ...(p.whole ? wholeSet(metricHistory, p.whole, true) : {}) })) };
}

/** `stream=all` in one response; refused (body kept) when its streams cannot be told apart. */
async function gatherAll(ctx: JobContext, slug: string, from: string | null, known: ReadonlySet<string>): Promise<Gathered | Refusal> {
  const { fetched, incremental } = await fetchHistory(ctx, slug, 'all', from);
  const read = readHistory(slug, fetched.data, { stream: 'all', known });
  if (read.ambiguous !== null || read.form === null) return refused(read.ambiguous ?? 'no MetricHistory');
  return { parts: [{ rows: read.rows, from: fetched.response, whole: incremental ? null : { tokenSlug: slug } }], cells: read.cells, lastTs: read.lastTs, streams: read.streams, mode: read.form, incremental, asOf: fetched.meta.asOf, hashes: [fetched.response.sha256], notes: {} };
}

/**
 * Stream by stream: the default (which names its own key), then every other key the token is
 * known to have. A key fetched before continues from the overlap; a new one is fetched whole.
 */
async function gatherPerStream(ctx: JobContext, slug: string, prev: HistoryDetails, from: string | null, known: Set<string>, notes: Record<string, unknown>): Promise<Gathered | Refusal> {
  const cells = new CellTally();
  const g: Gathered = { parts: [], cells, lastTs: null, streams: [], mode: 'per-stream', incremental: false, asOf: null, hashes: [], notes: { ...notes } };
  const before = new Set(prev.form === 'per-stream' ? (prev.streams ?? []) : []);
  /** One stream read into `g`; a stream that cannot be read for certain refuses the job. */
  const take = async (stream: string | null): Promise<Refusal | null> => {
    const since = stream !== null && before.has(stream) ? from : null;
    const { fetched, incremental } = await fetchHistory(ctx, slug, stream, since);
    const read = readHistory(slug, fetched.data, { stream, known }, cells);
    if (read.ambiguous !== null) return refused(`stream ${stream ?? '(default)'}: ${read.ambiguous}`);
    const own = read.streams.length === 1 ? read.streams[0]! : stream;
    g.parts.push({ rows: read.rows, from: fetched.response, whole: incremental || own === null ? null : { tokenSlug: slug, stream: own } });
    g.incremental ||= incremental;
    for (const s of read.streams) if (!g.streams.includes(s)) g.streams.push(s);
    if (read.lastTs && (!g.lastTs || read.lastTs > g.lastTs)) g.lastTs = read.lastTs;
    if (fetched.meta.asOf && (!g.asOf || fetched.meta.asOf > g.asOf)) g.asOf = fetched.meta.asOf;
    g.hashes.push(fetched.response.sha256);
    return null;
  };
  const first = await take(null);
  if (first) return first;
  if (known.size === 0) for (const k of await upstreamStreamKeys(ctx, slug)) known.add(k);
  const missing: string[] = [];
  for (const key of [...known].sort()) {
    if (g.streams.includes(key)) continue;
    try {
      const refusal = await take(key);
      if (refusal) return refusal;
    } catch (err) {
      // A key the snapshot lists but the history does not have: nothing to mirror.
      if (!(err instanceof ProblemError && err.code === 'stream_not_found')) throw err;
      missing.push(key);
    }
  }
  if (missing.length > 0) g.notes.streamsWithoutHistory = missing;
  return g;
}

/** One history request, of one stream (null: the default) or `all`, from `from` (null: whole). */
function fetchHistory(ctx: JobContext, slug: string, stream: string | null, from: string | null) {
  return fetchSince(ctx, INCREMENTAL, { route: 'app.history', params: { slug }, query: stream === null ? {} : { stream } }, z.unknown(), from);
}

/** Stream keys the warehouse knows for a token: its snapshot's streams and its screener row's. */
function knownStreams(ctx: JobContext, slug: string): Promise<Set<string>> {
  return ctx.known.streamKeys(slug);
}

/**
 * The token's stream keys asked upstream, when the warehouse has none yet (this job ran before
 * the snapshot's and the screener's): the snapshot's `streams[]`, else the screener row's.
 */
async function upstreamStreamKeys(ctx: JobContext, slug: string): Promise<string[]> {
  const keysOf = (streams: unknown) => (Array.isArray(streams) ? streams.map((s) => (isRecord(s) ? readText(s.key) : null)).filter((k): k is string => !!k) : []);
  try {
    const f = await fetchData(ctx, { route: 'app.token', params: { slug } }, snapshot);
    const keys = keysOf(f.data.streams);
    if (keys.length > 0) return keys;
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
  }
  const list = await fetchList(ctx, { route: 'app.screener' }, z.array(z.unknown()));
  const row = (list.items ?? []).map((r) => readScreenerRow(r)).find((r) => r?.slug === slug);
  return row ? keysOf(row.raw.streams) : [];
}


