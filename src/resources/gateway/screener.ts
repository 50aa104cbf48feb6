// /v1/screener: one row per token into the latest table, the day's archive, the five
// windows and the streams; the `insights` beside `data` into their own table. A row that
// names no token the list knows is kept in screener_unmatched, never dropped.
import { z } from 'zod';
import { gatewayScreenerRow, gatewayStream, gatewayWindow } from '../../schema/upstream/gateway.ts';
import { isRecord, stableMarker } from '../../schema/upstream/values.ts';
import { withoutVolatile } from '../../schema/warehouse/columns.ts';
import {
  gatewayScreenerInsights,
  gatewayScreenerRows,
  gatewayScreenerStreams,
  gatewayScreenerUnmatched,
  gatewayScreenerWindows,
} from '../../schema/warehouse/gateway.ts';
import { rowMeta, verdictCounts, type Stamp } from '../../engine/kit/rows.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { refusalDetails, refusalNotes, splitItems } from '../../engine/kit/item-refusals.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import { storedGatewayTokens } from './knows/tokens.ts';
import { contentKey, decimalReader, rowStatus, textOrNull } from './cells.ts';
import { normalizeInsights } from './insights.ts';
import { matchRowToken, type KnownToken } from './match.ts';

type RowInsert = typeof gatewayScreenerRows.$inferInsert;
type WindowInsert = typeof gatewayScreenerWindows.$inferInsert;
type StreamInsert = typeof gatewayScreenerStreams.$inferInsert;
type UnmatchedInsert = typeof gatewayScreenerUnmatched.$inferInsert;

export type ScreenerRowRead =
  | { matched: true; row: RowInsert; windows: WindowInsert[]; streams: StreamInsert[]; unkeyedStreams: number; windowsStated: boolean; streamsStated: boolean }
  | { matched: false; unmatched: UnmatchedInsert };

/** Pure: one screener row, matched to its token, with its windows and streams. */
export function normalizeScreenerRow(input: Stamp, raw: unknown, known: readonly KnownToken[], asOf: Date | null): ScreenerRowRead {
  // A JSON number parses as a LosslessNumber object: only a plain object is a row.
  const p = gatewayScreenerRow.safeParse(isRecord(raw) ? raw : null);
  if (!p.success) {
    return { matched: false, unmatched: { rowKey: contentKey(raw), symbol: null, name: null, reason: 'unreadable', payload: raw, ...rowMeta(input, { asOf, status: 'invalid' }) } };
  }
  const d = p.data;
  const token = d.token && typeof d.token === 'object' ? d.token : null;
  const symbol = textOrNull(d.symbol) ?? textOrNull(token?.symbol);
  const name = textOrNull(d.name) ?? textOrNull(token?.name);
  const freshness = stableMarker(withoutVolatile(d.dataFreshness));
  const match = matchRowToken(d, known);
  if (match.slug === null) {
    const rowKey = match.symbol ? `symbol:${match.symbol}` : contentKey(raw);
    return { matched: false, unmatched: { rowKey, symbol, name, reason: match.reason, payload: raw, ...rowMeta(input, { asOf, freshness }) } };
  }
  const slug = match.slug;
  const dec = decimalReader();
  const row: RowInsert = {
    tokenSlug: slug,
    symbol,
    name,
    matchedBy: match.by,
    priceUsd: dec.read(d.priceUsd, 'priceUsd'),
    mcap: dec.read(d.mcap, 'mcap'),
    effMcap: dec.read(d.effMcap, 'effMcap'),
    effRatio: dec.read(d.effRatio, 'effRatio'),
    revAnnualized: dec.read(d.revAnnualized, 'revAnnualized'),
    multAnnualized: dec.read(d.multAnnualized, 'multAnnualized'),
    fcfMomentum: dec.read(d.fcfMomentum, 'fcfMomentum'),
    dataFreshness: freshness,
    payload: raw,
    ...rowMeta(input, { asOf, freshness }),
  };
  row.status = rowStatus(dec);
  const windows = Object.entries(d.windows ?? {}).map(([window, value]): WindowInsert => {
    const w = gatewayWindow.safeParse(isRecord(value) ? value : null);
    const wd = decimalReader();
    const cells = w.success ? w.data : {};
    const rev = wd.read(cells.rev, 'rev');
    const mult = wd.read(cells.mult, 'mult');
    // A null window is "unavailable"; anything else that is not an object is unreadable.
    const status = value !== null && !w.success ? 'invalid' : rowStatus(wd);
    return { tokenSlug: slug, window, rev, mult, payload: value, ...rowMeta(input, { asOf, freshness, status }) };
  });
  const streams: StreamInsert[] = [];
  let unkeyedStreams = 0;
  for (const s of d.streams ?? []) {
    const sp = gatewayStream.safeParse(isRecord(s) ? s : null);
    if (!sp.success) {
      unkeyedStreams++;
      continue;
    }
    const sd = decimalReader();
    const cells = s as Record<string, unknown>;
    streams.push({
      tokenSlug: slug,
      streamKey: sp.data.key,
      label: sp.data.label ?? null,
      rev: sd.read(cells.rev, 'rev'),
      sharePct: sd.read(cells.sharePct, 'sharePct'),
      payload: s,
      ...rowMeta(input, { asOf, freshness, status: rowStatus(sd) }),
    });
  }
  return { matched: true, row, windows, streams, unkeyedStreams, windowsStated: isRecord(d.windows), streamsStated: Array.isArray(d.streams) };
}

export const gatewayScreenerJob = defineJob({
  name: 'gateway.screener',
  route: 'gateway.screener',
  source: 'gateway',
  group: 'screener',
  plannedBy: 'gateway.tokens',
  payload: z.object({}),
  resource: () => 'screener',
  // Rows matched by symbol depend on the token list too: a 304 stands for them only when none was.
  sameAsBefore: (state) => isRecord(state.details) && state.details.matchedBySymbol === 0,
  knows: () => [storedGatewayTokens.ask()],
  reader: {
    asks: () => [{ route: 'gateway.screener', schema: z.array(z.unknown()), list: {} }],
    read(input, [got]) {
      const f = got!.list!;
      const known = storedGatewayTokens.answerIn(input.known) ?? [];
      // A row refused alone (item-refusals.ts) is not read: nothing of it is written. A row of
      // another shape is kept apart as unmatched (`unreadable`), as before.
      const split = splitItems(f, { shapes: false });
      const reads = split.understood.map((raw) => normalizeScreenerRow(input, raw, known, f.meta.asOf));
      const matched = reads.filter((r) => r.matched);
      const unmatched = reads.filter((r) => !r.matched).map((r) => r.unmatched);
      const rows = matched.map((r) => r.row);
      const insights = normalizeInsights(input, f.body.insights, f.meta.asOf);
      const slugs = rows.map((r) => r.tokenSlug);
      const duplicates = slugs.filter((s, i) => slugs.indexOf(s) !== i);
      const notes =
        unmatched.length > 0 ? [{ level: 'warn' as const, msg: 'screener rows naming no known token kept in gateway.screener_unmatched', fields: { unmatched: unmatched.map((u) => ({ rowKey: u.rowKey, reason: u.reason })) } }] : [];
      const status = unmatched.length > 0 || split.refused.length > 0 || f.incomplete !== undefined ? 'partial' : 'ok';
      const details = {
        rows: rows.length,
        unmatched: unmatched.map((u) => ({ rowKey: u.rowKey, reason: u.reason })),
        matchedBySymbol: rows.filter((r) => r.matchedBy === 'symbol').length,
        invalidRows: rows.filter((r) => r.status === 'invalid').map((r) => r.tokenSlug),
        unkeyedStreams: matched.reduce((a, r) => a + r.unkeyedStreams, 0),
        duplicates,
        insights: insights.rows.length,
        insightsPresent: insights.present,
        freshness: verdictCounts(rows.map((r) => r.dataFreshness)),
        ...refusalDetails(split.refused),
        ...(f.incomplete !== undefined ? { incomplete: f.incomplete } : {}),
      };
      const cells = new CellTally();
      for (const r of rows) cells.cell(r.status !== 'invalid');
      // A screener not proven whole (fetch-list.ts) states no membership.
      const whole = unmatched.length === 0 && duplicates.length === 0 && split.refused.length === 0 && f.incomplete === undefined;
      const pageOf = (r: { row: { payload?: unknown } }) => f.pageOf(r.row.payload);
      return {
        status,
        asOf: f.meta.asOf,
        hash: f.sha256,
        details,
        cells,
        notes: [...notes, ...refusalNotes(split.refused)],
        writes: [
          // Membership is stated only when every row names a known token (an unmatched row
          // could be any token's); windows and streams only when every row carries them.
          into(gatewayScreenerRows, rows, { ...wholeSet(gatewayScreenerRows, {}, whole), fromEach: matched.map(pageOf) }),
          into(gatewayScreenerWindows, matched.flatMap((r) => r.windows), {
            ...wholeSet(gatewayScreenerWindows, {}, whole && matched.every((r) => r.windowsStated)),
            fromEach: matched.flatMap((r) => r.windows.map(() => pageOf(r))),
          }),
          into(gatewayScreenerStreams, matched.flatMap((r) => r.streams), {
            ...wholeSet(gatewayScreenerStreams, {}, whole && matched.every((r) => r.streamsStated && r.unkeyedStreams === 0)),
            fromEach: matched.flatMap((r) => r.streams.map(() => pageOf(r))),
          }),
          // A refused row could be an unmatched one: the unmatched are then not stated either.
          into(gatewayScreenerUnmatched, unmatched, { ...wholeSet(gatewayScreenerUnmatched, {}, split.refused.length === 0 && f.incomplete === undefined), fromEach: unmatched.map((u) => f.pageOf(u.payload)) }),
          into(gatewayScreenerInsights, insights.rows),
        ],
      };
    },
  },
});
