// /api/v1/tokens/{slug}/full (API key): the research bundle. Its ids are valid only inside
// one response, so a token's drivers, edges and functions are replaced together, in one
// transaction, each time; 401/402/403 are recorded as the bundle's status, not failures.
import { eq } from 'drizzle-orm';
import { bundle } from '../../schema/upstream/app.ts';
import { researchBundles, tokenFunctions, valueDriverEdges, valueDrivers } from '../../schema/warehouse/app.ts';
import { stringifyJson } from '../../src/json.ts';
import { ProblemError } from '../../src/errors.ts';
import { upsertRows } from '../../src/warehouse/upsert.ts';
import { skipIfUnchanged } from '../shared/change.ts';
import { commit, rowMeta } from '../shared/commit.ts';
import { fetchData } from '../shared/fetch.ts';
import { defineJob, type JobContext } from '../types.ts';
import { tokenPayload } from './snapshot.ts';
import type { z } from 'zod';

const REFUSALS: Record<number, string> = { 401: 'unauthorized', 402: 'no_credits', 403: 'missing_scope' };

/** Pure: the bundle's rows; duplicate ids inside one response keep the last. */
export function normalizeBundle(ctx: JobContext, slug: string, data: z.infer<typeof bundle>) {
  const meta = rowMeta(ctx);
  return {
    summary: data.summary === undefined || data.summary === null ? null : typeof data.summary === 'string' ? data.summary : stringifyJson(data.summary),
    drivers: data.valueDrivers.map((d) => ({ tokenSlug: slug, driverId: d.id, type: d.type ?? null, description: d.description ?? null, formula: d.formula ?? null, payload: d, ...meta })),
    edges: data.valueDriverEdges.map((e) => ({ tokenSlug: slug, fromDriverId: e.fromValueDriverId, toDriverId: e.toValueDriverId, payload: e, ...meta })),
    functions: data.tokenFunctions.map((f) => ({ tokenSlug: slug, functionId: f.id, type: f.type ?? null, description: f.description ?? null, parentId: f.parentId ?? null, payload: f, ...meta })),
  };
}

export const appBundleJob = defineJob({
  name: 'app.bundle',
  source: 'app',
  group: 'bundle',
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/bundle`,
  token: (p) => p.slug,
  async handle(ctx, p) {
    const resource = `token/${p.slug}/bundle`;
    if (await skipIfUnchanged(ctx, 'app', resource, p.marker)) return { status: 'unchanged', rows: 0 };
    let f;
    try {
      f = await fetchData(ctx, { route: 'app.bundle', params: { slug: p.slug } }, bundle);
    } catch (err) {
      const status = err instanceof ProblemError ? REFUSALS[err.status] : undefined;
      if (!status || !(err instanceof ProblemError)) throw err;
      // Refused: say so on the bundle, keep what an earlier fetch stored.
      const refusal = { status, missingScope: err.scope ?? null, problemCode: err.code ?? null };
      await commit(ctx, { source: 'app', resource, kind: 'bundle', status, details: refusal }, async (tx) => {
        await tx
          .insert(researchBundles)
          .values({ tokenSlug: p.slug, missingScope: refusal.missingScope, problemCode: refusal.problemCode, ...rowMeta(ctx, { status }) })
          .onConflictDoUpdate({
            target: researchBundles.tokenSlug,
            set: { status, missingScope: refusal.missingScope, problemCode: refusal.problemCode, fetchedAt: ctx.now(), runId: ctx.runId },
          });
        return 1;
      });
      return { status, rows: 1 };
    }
    const n = normalizeBundle(ctx, p.slug, f.data);
    const rows = await commit(ctx, { source: 'app', resource, kind: 'bundle', status: 'ok', freshness: p.marker ?? null, asOf: f.meta.asOf, hash: f.response.sha256 }, async (tx) => {
      await upsertRows(tx, researchBundles, [{ tokenSlug: p.slug, missingScope: null, problemCode: null, summary: n.summary, payload: f.data, ...rowMeta(ctx, { asOf: f.meta.asOf }) }], {
        target: [researchBundles.tokenSlug],
      });
      await tx.delete(valueDriverEdges).where(eq(valueDriverEdges.tokenSlug, p.slug));
      await tx.delete(valueDrivers).where(eq(valueDrivers.tokenSlug, p.slug));
      await tx.delete(tokenFunctions).where(eq(tokenFunctions.tokenSlug, p.slug));
      const a = await upsertRows(tx, valueDrivers, n.drivers, { target: [valueDrivers.tokenSlug, valueDrivers.driverId] });
      const b = await upsertRows(tx, valueDriverEdges, n.edges, { target: [valueDriverEdges.tokenSlug, valueDriverEdges.fromDriverId, valueDriverEdges.toDriverId] });
      const c = await upsertRows(tx, tokenFunctions, n.functions, { target: [tokenFunctions.tokenSlug, tokenFunctions.functionId] });
      return 1 + a + b + c;
    });
    return { status: 'ok', rows };
  },
});
