// /api/v1/tokens: the token list. Its coverage flags decide which token routes exist, so
// it is the list the per-token jobs fan out over (each declares which tokens it needs). Tokens it stops listing get `delisted_at`, but only when
// the list came back whole: a failed or partial list never delists anything. A token route
// that answered 404 `token_not_found` is not asked again until the list says the token is
// back: its `freshness` changed, or it was unlisted and is listed again (the one 404 rule,
// src/engine/job/not-found.ts).
import { z } from 'zod';
import type { TokenItem } from '../../schema/upstream/app.ts';
import { isRecord, stableMarker } from '../../schema/upstream/values.ts';
import { researchBundles, tokens } from '../../schema/warehouse/app.ts';
import { withoutVolatile } from '../../schema/warehouse/columns.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { readTokenList, slugOf } from '../../engine/kit/lists.ts';
import { refusalDetails, refusalNotes } from '../../engine/kit/item-refusals.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { defineJob, into, type TableWrite } from '../../engine/kit/types.ts';
import { storedTokenItems } from './knows/token-items.ts';
import { appBundleJob } from './bundle.ts';

/**
 * Pure: a token entry's marker as app.tokens stores it (`freshness`): its verdict without the
 * volatile fields (an `asOf` moved by a recomputation is no change).
 */
export function tokenEntryMarker(item: TokenItem): string | null {
  return stableMarker(withoutVolatile(item.freshness));
}

function tokenRow(input: Stamp, item: TokenItem, raw: unknown, asOf: Date | null): typeof tokens.$inferInsert {
  const c = item.coverage ?? {};
  return {
    slug: item.slug,
    displayName: item.displayName ?? null,
    symbol: item.symbol ?? null,
    imageUrl: item.imageUrl ?? null,
    coverageScreener: c.screener ?? false,
    coverageSnapshot: c.snapshot ?? false,
    coverageMetricHistory: c.metricHistory ?? false,
    coverageTrend: c.trend ?? false,
    coverageCharts: c.charts ?? false,
    coverageBacktests: c.backtests ?? false,
    delistedAt: null,
    payload: raw,
    ...rowMeta(input, { asOf, freshness: tokenEntryMarker(item) }),
  };
}

export const appTokensJob = defineJob({
  name: 'app.tokens',
  route: 'app.tokens',
  source: 'app',
  group: 'tokens',
  plannedBy: 'app.metrics',
  payload: z.object({}),
  resource: () => 'tokens',
  // A 304 stands for the rows last written only while bundles are skipped as they were then.
  sameAsBefore: (state, _p, settings) => isRecord(state.details) && state.details.bundlesSkipped === !settings.appBundles,
  // The list as last stored (its items as sent): planned from when this one is not read.
  unchanged: {
    knows: () => [storedTokenItems.ask()],
    plan: (input) => ({ items: readTokenList(storedTokenItems.answerIn(input.known) ?? [], undefined).items.map((i) => i.item) }),
  },
  reader: {
    asks: () => [{ route: 'app.tokens', schema: z.array(z.unknown()), list: { keyOf: slugOf } }],
    read(input, [got]) {
      const f = got!.list!;
      // An item refused alone (item-refusals.ts) is not written; its clean slug still plans its jobs.
      const read = readTokenList(f.items ?? [], f.count, f.refused);
      // Complete only when the list also proves it is whole (fetch-list.ts): else it delists nothing.
      const list = { ...read, complete: read.complete && f.incomplete === undefined };
      const rows = list.items.map(({ item, raw }) => tokenRow(input, item, raw, f.meta.asOf));
      const status = list.complete ? 'ok' : 'partial';
      const writes: TableWrite<any>[] = [
        // A whole list delists the tokens it no longer lists (a failed or partial one never does).
        into(tokens, rows, { ...wholeSet(tokens, {}, list.complete), fromEach: list.items.map((i) => f.pageOf(i.raw)) }),
      ];
      // No key: bundles are recorded as skipped, keeping whatever an earlier key fetched. Their
      // states say so too: an `ok` left there would let the next run with a key skip them as
      // unchanged, and the rows would stay `skipped`.
      const skipBundles = !input.settings.appBundles && rows.length > 0;
      if (skipBundles) {
        const skipped = rows.map((r) => ({ tokenSlug: r.slug, ...rowMeta(input, { status: 'skipped' }) }));
        // No request was sent for them: no body carried these rows.
        writes.push(into(researchBundles, skipped, { keep: ['summary', 'payload', 'asOf', 'freshness', 'missingScope', 'problemCode'], from: null }));
      }
      return {
        status,
        asOf: f.meta.asOf,
        hash: f.sha256,
        details: { listed: rows.length, invalidItems: list.invalidItems, complete: list.complete, pages: f.pages.length, bundlesSkipped: !input.settings.appBundles, ...refusalDetails(list.refused), ...(f.incomplete !== undefined ? { incomplete: f.incomplete } : {}) },
        notes: refusalNotes(list.refused),
        writes,
        ...(skipBundles ? { otherStates: { resources: rows.map((r) => appBundleJob.resource({ slug: r.slug })), status: 'skipped' } } : {}),
        // A whole list plans every token route that exists: one it leaves out is gone.
        listed: { items: [...list.items.map((i) => i.item), ...list.plannedOnly], ...(list.complete ? { wholeUnder: 'token/' } : {}) },
      };
    },
  },
});
