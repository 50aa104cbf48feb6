// /v1/tokens: the gateway's token catalog, root of the gateway walk. It plans the screener,
// the contract check and is the list every token's page, history (per configured period) and
// charts fan out over.
// Tokens it stops listing get `delisted_at`, but only when the list came back whole.
//
// Change marker: the gateway serves every surface from one read plane and gives its items no
// version of their own; the catalog's `meta.asOf` is the read plane's as-of, and it moves
// whenever the data behind the token routes does. It is handed to each token's page, history
// and chart catalog, which skip their fetch while it is as at their last success (and for
// at most TE_MARKER_MAX_AGE_HOURS). No asOf, no marker: everything is fetched.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { isRecord } from '../../schema/upstream/values.ts';
import { gatewayTokens } from '../../schema/warehouse/gateway.ts';
import { readTokenList, slugOf, type TokenListRead } from '../../engine/kit/lists.ts';
import { refusalDetails, refusalNotes } from '../../engine/kit/item-refusals.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import { storedGatewayTokens } from './knows/tokens.ts';
import { textOrNull } from './cells.ts';

/** Pure: the catalog's rows (name and href are read from the item as sent). */
export function gatewayTokenRows(input: Stamp, list: TokenListRead, asOf: Date | null): (typeof gatewayTokens.$inferInsert)[] {
  return list.items.map(({ item, raw }) => {
    const r = raw as Record<string, unknown>;
    return {
      slug: item.slug,
      symbol: item.symbol ?? null,
      name: textOrNull(r.name),
      href: textOrNull(r.href),
      delistedAt: null,
      payload: raw,
      ...rowMeta(input, { asOf }),
    };
  });
}

/** Pure: the change marker of the token routes, from the catalog's meta.asOf (null without one). */
export function catalogMarker(asOf: Date | null): string | null {
  return asOf ? asOf.toISOString() : null;
}

/** A listed token, as the per-token jobs fan out over it: its slug and the routes' marker (none: fetched). */
export interface GatewayTokenItem {
  slug: string;
  marker?: string;
}

/** Pure: the catalog's items for the per-token jobs; `marker` goes to every one. */
export function gatewayTokenItems(slugs: readonly string[], marker: string | null): GatewayTokenItem[] {
  return slugs.map((slug) => (marker ? { slug, marker } : { slug }));
}

export const gatewayTokensJob = defineJob({
  name: 'gateway.tokens',
  route: 'gateway.tokens',
  root: true,
  source: 'gateway',
  group: 'tokens',
  payload: z.object({}),
  resource: () => 'tokens',
  // Its state records the history periods it planned with (analytics.coverage counts each
  // listed token's periods from it): a 304 stands for that record only while they are the same.
  sameAsBefore: (state, _p, settings) => isRecord(state.details) && isDeepStrictEqual(state.details.historyPeriods, [...settings.gatewayHistoryPeriods]),
  // The catalog as last stored, with the marker of the last one read whole: planned from when
  // this one is not read.
  unchanged: {
    knows: () => [storedGatewayTokens.ask()],
    plan(input) {
      const listed = (storedGatewayTokens.answerIn(input.known) ?? []).filter((t) => !t.delisted).map((t) => t.slug);
      return { items: gatewayTokenItems(listed, catalogMarker(input.state?.asOf ?? null)) };
    },
  },
  reader: {
    asks: () => [{ route: 'gateway.tokens', schema: z.array(z.unknown()), list: { keyOf: slugOf } }],
    read(input, [got]) {
      const f = got!.list!;
      // An item refused alone (item-refusals.ts) is not written; its clean slug still plans its jobs.
      const read = readTokenList(f.items ?? [], f.count, f.refused);
      // Complete only when the list also proves it is whole (fetch-list.ts): else it delists nothing.
      const list = { ...read, complete: read.complete && f.incomplete === undefined };
      const rows = gatewayTokenRows(input, list, f.meta.asOf);
      const items = gatewayTokenItems([...rows.map((r) => r.slug), ...list.plannedOnly.map((i) => i.slug)], catalogMarker(f.meta.asOf));
      return {
        status: list.complete ? 'ok' : 'partial',
        asOf: f.meta.asOf,
        hash: f.sha256,
        details: {
          listed: rows.length,
          invalidItems: list.invalidItems,
          complete: list.complete,
          count: f.count ?? null,
          pages: f.pages.length,
          historyPeriods: [...input.settings.gatewayHistoryPeriods],
          ...refusalDetails(list.refused),
          ...(f.incomplete !== undefined ? { incomplete: f.incomplete } : {}),
        },
        notes: refusalNotes(list.refused),
        // A whole list delists the tokens it no longer lists (a failed or partial one never does).
        writes: [into(gatewayTokens, rows, { ...wholeSet(gatewayTokens, {}, list.complete), fromEach: list.items.map((i) => f.pageOf(i.raw)) })],
        // A whole list plans every token route that exists: one it leaves out is gone.
        listed: { items, ...(list.complete ? { wholeUnder: 'token/' } : {}) },
      };
    },
  },
});
