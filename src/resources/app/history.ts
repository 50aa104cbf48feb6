// /api/v1/tokens/{slug}/metrics/history?stream=all: every stream, every metric, every day.
// The first sync takes everything; later ones ask only from the last day seen minus
// TE_HISTORY_OVERLAP_DAYS, whole again every TE_HISTORY_FULL_REFETCH_DAYS, and whole when
// upstream refuses the date filter (declared `incremental`; the rules: engine/kit/incremental.ts).
//
// `stream=all` comes in one of several forms (history-read.ts). One that cannot be split by
// stream for certain is refused (its body kept `invalid`), and the streams are then fetched
// one by one, the job's declared alternative: the default stream, then each key the token is
// known to have (the warehouse's, handed in; when it has none yet, the snapshot's `streams[]`,
// else the screener row's, asked upstream).
// The form that worked is remembered per token, so later syncs go straight to it.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { snapshot } from '../../schema/upstream/app.ts';
import { isRecord, readText } from '../../schema/upstream/values.ts';
import { metricHistory } from '../../schema/warehouse/app.ts';
import { rowMeta } from '../../engine/kit/rows.ts';
import { nextCursor, startDay, wholeFetchDue, type Cursor, type Incremental } from '../../engine/kit/incremental.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';
import { defineJob, into, refused, type Ask, type Got, type Outcome, type ReadInput, type Refusal, type Reader } from '../../engine/kit/types.ts';
import { knownStreamKeys } from './knows/stream-keys.ts';
import type { UpstreamResponse } from '../../upstream/index.ts';
import { readHistory, type HistoryForm, type HistoryRow } from './history-read.ts';
import { readScreenerRow } from './screener.ts';
import { tokenPayload, tokenRoute } from './snapshot.ts';

declare module '../../engine/kit/declaration.ts' {
  interface SyncSettings {
    /** How many days before the newest point stored a token's history is asked from again (TE_HISTORY_OVERLAP_DAYS). */
    historyOverlapDays: number;
    /** How often a token's app history is fetched whole (revisions older than the overlap). */
    historyFullRefetchMs: number;
    /** The query parameter the start day goes in (TE_HISTORY_FROM_PARAM). */
    historyFromParam: string;
  }
}

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

type HistoryPayload = z.infer<typeof tokenPayload>;

/** Pure: the history's cursor as last kept, and the day this fetch starts from (null: whole). */
function cursorOf(input: Pick<ReadInput<HistoryPayload>, 'state' | 'settings' | 'now'>): { prev: HistoryDetails; from: string | null } {
  const prev = (input.state?.details ?? {}) as HistoryDetails;
  return { prev, from: startDay(INCREMENTAL, prev, input.settings, input.now()) };
}

/** One history request, of one stream (null: the default) or `all`, from `from` (null: whole). */
function historyAsk(slug: string, stream: string | null, from: string | null): Ask {
  return { route: 'app.history', params: { slug }, query: stream === null ? {} : { stream }, since: { incremental: INCREMENTAL, from } };
}

/** `stream=all` in one response; refused (body kept) when its streams cannot be told apart. */
const allAtOnce: Reader<HistoryPayload> = {
  asks: (input) => [historyAsk(input.payload.slug, 'all', cursorOf(input).from)],
  read(input, [got]) {
    const { fetched, incremental } = got!;
    const slug = input.payload.slug;
    const read = readHistory(slug, fetched!.data, { stream: 'all', known: knownStreamKeys.answerIn(input.known) ?? new Set() });
    if (read.ambiguous !== null || read.form === null) return refused(read.ambiguous ?? 'no MetricHistory');
    return outcomeOf(input, { parts: [{ rows: read.rows, from: fetched!.response, whole: incremental ? null : { tokenSlug: slug } }], cells: read.cells, lastTs: read.lastTs, streams: read.streams, mode: read.form, incremental, asOf: fetched!.meta.asOf, hashes: [fetched!.response.sha256], notes: {} });
  },
};

/** The streams the default stream's response names, read once per response. */
const defaultStreams = new WeakMap<Got, { streams: string[]; ambiguous: string | null }>();

/**
 * Stream by stream: the default (which names its own key), then every other key the token is
 * known to have. A key fetched before continues from the overlap; a new one is fetched whole.
 */
const streamByStream: Reader<HistoryPayload> = {
  asks: (input) => [historyAsk(input.payload.slug, null, null)],
  more(input, got) {
    const slug = input.payload.slug;
    const history = got.filter((g) => g.ask.route === 'app.history');
    if (history.length > 1) return [];
    const first = history[0]!;
    let own = defaultStreams.get(first);
    if (!own) {
      const read = readHistory(slug, first.fetched!.data, { stream: null, known: knownStreamKeys.answerIn(input.known) ?? new Set() });
      own = { streams: read.streams, ambiguous: read.ambiguous };
      defaultStreams.set(first, own);
    }
    // The read refuses it: nothing more to ask.
    if (own.ambiguous !== null) return [];
    const keys = keysOf(input, got);
    if (keys === 'ask snapshot') return [{ route: 'app.token', params: { slug }, schema: snapshot, answers: { any: true } }];
    if (keys === 'ask screener') return [{ route: 'app.screener', schema: z.array(z.unknown()), list: {} }];
    const { prev, from } = cursorOf(input);
    const before = new Set(prev.form === 'per-stream' ? (prev.streams ?? []) : []);
    return [...keys]
      .sort()
      .filter((k) => !own.streams.includes(k))
      // A key the snapshot lists but the history does not have: nothing to mirror.
      .map((k) => ({ ...historyAsk(slug, k, before.has(k) ? from : null), answers: { codes: ['stream_not_found'] } }));
  },
  read(input, got) {
    const slug = input.payload.slug;
    const known = keysOf(input, got);
    const streamKeys = typeof known === 'string' ? new Set<string>() : known;
    const cells = new CellTally();
    const g: Gathered = { parts: [], cells, lastTs: null, streams: [], mode: 'per-stream', incremental: false, asOf: null, hashes: [], notes: input.refusal !== undefined ? { refusedAll: input.refusal } : {} };
    const missing: string[] = [];
    for (const h of got.filter((x) => x.ask.route === 'app.history')) {
      const stream = (h.ask.query?.stream as string | undefined) ?? null;
      if (stream !== null && g.streams.includes(stream)) continue;
      if (h.problem) {
        missing.push(stream!);
        continue;
      }
      const { fetched, incremental } = h;
      const read = readHistory(slug, fetched!.data, { stream, known: streamKeys }, cells);
      if (read.ambiguous !== null) return refused(`stream ${stream ?? '(default)'}: ${read.ambiguous}`);
      const own = read.streams.length === 1 ? read.streams[0]! : stream;
      g.parts.push({ rows: read.rows, from: fetched!.response, whole: incremental || own === null ? null : { tokenSlug: slug, stream: own } });
      g.incremental ||= incremental;
      for (const s of read.streams) if (!g.streams.includes(s)) g.streams.push(s);
      if (read.lastTs && (!g.lastTs || read.lastTs > g.lastTs)) g.lastTs = read.lastTs;
      if (fetched!.meta.asOf && (!g.asOf || fetched!.meta.asOf > g.asOf)) g.asOf = fetched!.meta.asOf;
      g.hashes.push(fetched!.response.sha256);
    }
    if (missing.length > 0) g.notes.streamsWithoutHistory = missing;
    return outcomeOf(input, g);
  },
};

/**
 * Pure: the token's stream keys: the warehouse's (handed in), else the snapshot's `streams[]`
 * asked upstream, else the screener row's; or which of those to ask next.
 */
function keysOf(input: ReadInput<HistoryPayload>, got: readonly Got[]): Set<string> | 'ask snapshot' | 'ask screener' {
  const stored = knownStreamKeys.answerIn(input.known) ?? new Set<string>();
  if (stored.size > 0) return stored;
  const keysIn = (streams: unknown) => (Array.isArray(streams) ? streams.map((s) => (isRecord(s) ? readText(s.key) : null)).filter((k): k is string => !!k) : []);
  const snap = got.find((g) => g.ask.route === 'app.token');
  if (!snap) return 'ask snapshot';
  const fromSnapshot = snap.fetched ? keysIn((snap.fetched.data as z.infer<typeof snapshot>).streams) : [];
  if (fromSnapshot.length > 0) return new Set(fromSnapshot);
  const screener = got.find((g) => g.ask.route === 'app.screener');
  if (!screener) return 'ask screener';
  const row = (screener.list?.items ?? []).map((r) => readScreenerRow(r)).find((r) => r?.slug === slug(input));
  return new Set(row ? keysIn(row.raw.streams) : []);
}

const slug = (input: ReadInput<HistoryPayload>) => input.payload.slug;

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
  // The stream keys the warehouse knows for the token: its snapshot's streams and its screener row's.
  knows: (p) => [knownStreamKeys.ask(p.slug)],
  reader: allAtOnce,
  // `stream=all` not understood: stream by stream.
  alternative: streamByStream,
  // Stream by stream costs a request per stream: `stream=all` is tried again with the periodic full fetch.
  startsWithAlternative: (input) => {
    const { prev } = cursorOf(input);
    return prev.form === 'per-stream' && !wholeFetchDue(INCREMENTAL, prev, input.settings, input.now());
  },
});

/** The outcome of what was gathered, either way. */
function outcomeOf(input: ReadInput<HistoryPayload>, g: Gathered): Outcome | Refusal {
  const { prev } = cursorOf(input);
  const details: HistoryDetails & Record<string, unknown> = {
    ...nextCursor(prev, g.lastTs, g.incremental, input.now()),
    incremental: g.incremental,
    form: g.mode,
    streams: g.streams,
    ...g.notes,
  };
  const meta = rowMeta(input, { asOf: g.asOf });
  // In place: a token's history is tens of thousands of rows, and a copy of each costs
  // memory the sync does not need (docs/performance.md, "One hidden class per history row").
  const stamp = (rows: HistoryRow[]) => rows.map((r) => Object.assign(r, { runId: meta.runId, asOf: r.asOf ?? g.asOf }));
  const hash = g.hashes.length === 1 ? g.hashes[0]! : createHash('sha256').update(g.hashes.join('\n')).digest('hex');
  return { status: 'ok', asOf: g.asOf, hash, details, cells: g.cells, writes: g.parts.map((p) => into(metricHistory, stamp(p.rows), { from: p.from, ...(p.whole ? wholeSet(metricHistory, p.whole, true) : {}) })) };
}
