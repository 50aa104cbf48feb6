// /api/v1/tokens/{slug}/metrics/history?stream=all: every stream, every metric, every day.
// The first sync takes everything; later ones ask only from the last day seen minus an
// overlap (revised values overwrite by key), and fall back to a full fetch when the
// upstream refuses the date filter. A full fetch is repeated weekly to catch older revisions.

import { historyData, type History } from '../../schema/upstream/app.ts';
import { readDecimal, readTime } from '../../schema/upstream/values.ts';
import { metricHistory } from '../../schema/warehouse/app.ts';
import { ProblemError } from '../../src/errors.ts';
import { readState } from '../../src/warehouse/resource-state.ts';
import { skipIfUnchanged } from '../shared/change.ts';
import { commit, prepareRows, rowMeta, utcDate } from '../shared/commit.ts';
import { fetchData } from '../shared/fetch.ts';
import { cellOf, timeColumnIndex } from '../shared/table.ts';
import { defineJob, type JobContext } from '../types.ts';
import { tokenPayload } from './snapshot.ts';

const FULL_REFETCH_MS = 7 * 24 * 3600_000;
const FILTER_REFUSED = new Set(['invalid_date', 'invalid_date_range', 'invalid_limit']);

export interface HistoryRead {
  rows: Omit<typeof metricHistory.$inferInsert, 'fetchedAt' | 'runId'>[];
  lastTs: Date | null;
  streams: string[];
  invalidCells: number;
  badTimes: number;
}

/** Pure: MetricHistory (one or per stream) in long format. */
export function readHistory(slug: string, data: History | History[], requestedStream: string): HistoryRead {
  const list = Array.isArray(data) ? data : [data];
  const out: HistoryRead = { rows: [], lastTs: null, streams: [], invalidCells: 0, badTimes: 0 };
  for (const h of list) {
    const stream = h.stream ?? requestedStream;
    out.streams.push(stream);
    const ti = timeColumnIndex(h.columns);
    const timeColumn = h.columns[ti]!;
    for (const row of h.rows) {
      const ts = readTime(cellOf(row, timeColumn, ti));
      if (!ts) {
        out.badTimes++;
        continue;
      }
      if (!out.lastTs || ts > out.lastTs) out.lastTs = ts;
      h.columns.forEach((col, i) => {
        if (i === ti) return;
        const d = readDecimal(cellOf(row, col, i));
        if (!d.ok) out.invalidCells++;
        out.rows.push({
          tokenSlug: slug,
          stream,
          metric: col.key,
          ts,
          interval: h.interval ?? null,
          value: d.ok ? d.value : null,
          unit: col.unit ?? null,
          kind: col.kind ?? null,
          asOf: null,
          freshness: null,
          status: d.ok ? 'ok' : 'invalid',
        });
      });
    }
  }
  return out;
}

interface HistoryDetails {
  lastTs?: string;
  lastFullAt?: string;
  incremental?: boolean;
}

export const appHistoryJob = defineJob({
  name: 'app.history',
  source: 'app',
  group: 'history',
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/history`,
  token: (p) => p.slug,
  async handle(ctx, p) {
    const resource = `token/${p.slug}/history`;
    if (await skipIfUnchanged(ctx, 'app', resource, p.marker)) return { status: 'unchanged', rows: 0 };
    const state = await readState(ctx.warehouse.db, { source: 'app', resource });
    const prev = (state?.details ?? {}) as HistoryDetails;
    const from = incrementalFrom(ctx, prev);
    let fetched;
    let incremental = from !== null;
    try {
      fetched = await fetchData(ctx, { route: 'app.history', params: { slug: p.slug }, query: historyQuery(ctx, from) }, historyData);
    } catch (err) {
      if (!(incremental && err instanceof ProblemError && err.code && FILTER_REFUSED.has(err.code))) throw err;
      ctx.logger.info({ code: err.code }, 'date filter refused; fetching the whole history');
      incremental = false;
      fetched = await fetchData(ctx, { route: 'app.history', params: { slug: p.slug }, query: historyQuery(ctx, null) }, historyData);
    }
    const read = readHistory(p.slug, fetched.data, 'all');
    const meta = rowMeta(ctx, { asOf: fetched.meta.asOf });
    // In place, not `{ ...r, ... }`: V8 gave each spread copy a hidden class of its own (tens of
    // thousands per token, a third of the heap at peak; see docs/performance.md).
    const rows = read.rows.map((r) => Object.assign(r, { fetchedAt: meta.fetchedAt, runId: meta.runId, asOf: fetched.meta.asOf }));
    const lastTs = read.lastTs ?? (prev.lastTs ? new Date(prev.lastTs) : null);
    const details: HistoryDetails & Record<string, unknown> = {
      lastTs: lastTs?.toISOString(),
      lastFullAt: incremental ? prev.lastFullAt : ctx.now().toISOString(),
      incremental,
      streams: read.streams,
      invalidCells: read.invalidCells,
      badTimes: read.badTimes,
    };
    const write = await prepareRows(ctx, metricHistory, rows, {
      target: [metricHistory.tokenSlug, metricHistory.stream, metricHistory.metric, metricHistory.ts],
      batchSize: ctx.settings.batchSize,
    });
    const n = await commit(
      ctx,
      { source: 'app', resource, kind: 'history', status: 'ok', freshness: p.marker ?? null, asOf: fetched.meta.asOf, hash: fetched.response.sha256, details },
      (tx) => write.run(tx),
    );
    return { status: 'ok', rows: n };
  },
});

/** The first day to ask for, or null for the whole history. */
function incrementalFrom(ctx: JobContext, prev: HistoryDetails): string | null {
  if (ctx.settings.full || !prev.lastTs || !prev.lastFullAt) return null;
  if (ctx.now().getTime() - new Date(prev.lastFullAt).getTime() > FULL_REFETCH_MS) return null;
  const from = new Date(new Date(prev.lastTs).getTime() - ctx.settings.historyOverlapDays * 86_400_000);
  return utcDate(from);
}

function historyQuery(ctx: JobContext, from: string | null): Record<string, string | undefined> {
  return from ? { stream: 'all', [ctx.settings.historyFromParam]: from } : { stream: 'all' };
}

