// /api/v1/tokens/{slug}/full (API key): the research bundle. Its ids are valid only inside
// one response, so a token's drivers, edges and functions are replaced together, in one
// transaction, each time; 401/402/403 are recorded as the bundle's status, not failures.
// A bundle that leaves out one of the three arrays states no graph (absent is not empty):
// it is refused, its body kept `invalid`, and the stored graph stays as it was.
import { bundle } from '../../schema/upstream/app.ts';
import { researchBundles, tokenFunctions, valueDriverEdges, valueDrivers } from '../../schema/warehouse/app.ts';
import { stringifyJson } from '../../lib/json.ts';
import type { ProblemError } from '../../lib/errors.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { defineJob, into, refused, type Fetched, type Outcome } from '../../engine/kit/types.ts';
import { tokenPayload, tokenRoute } from './snapshot.ts';
import type { z } from 'zod';

const REFUSALS: Record<number, string> = { 401: 'unauthorized', 402: 'no_credits', 403: 'missing_scope' };

/** The graph's arrays a bundle leaves out (its graph can be read only when none is). */
export function missingGraphArrays(data: z.infer<typeof bundle>): string[] {
  return GRAPH_ARRAYS.filter((k) => data[k] === undefined);
}

const GRAPH_ARRAYS = ['valueDrivers', 'valueDriverEdges', 'tokenFunctions'] as const;

type WholeBundle = z.infer<typeof bundle> & Required<Pick<z.infer<typeof bundle>, (typeof GRAPH_ARRAYS)[number]>>;

/** Pure: the bundle's rows; duplicate ids inside one response keep the last. */
export function normalizeBundle(input: Stamp, slug: string, data: WholeBundle) {
  const meta = rowMeta(input);
  return {
    summary: data.summary === undefined || data.summary === null ? null : typeof data.summary === 'string' ? data.summary : stringifyJson(data.summary),
    drivers: data.valueDrivers.map((d) => ({ tokenSlug: slug, driverId: d.id, type: d.type ?? null, description: d.description ?? null, formula: d.formula ?? null, payload: d, ...meta })),
    edges: data.valueDriverEdges.map((e) => ({ tokenSlug: slug, fromDriverId: e.fromValueDriverId, toDriverId: e.toValueDriverId, payload: e, ...meta })),
    functions: data.tokenFunctions.map((f) => ({ tokenSlug: slug, functionId: f.id, type: f.type ?? null, description: f.description ?? null, parentId: f.parentId ?? null, payload: f, ...meta })),
  };
}

declare module '../../engine/kit/declaration.ts' {
  interface SyncSettings {
    /** App key configured: bundles are fetched (else the token list records them `skipped`). */
    appBundles: boolean;
  }
}

export const appBundleJob = defineJob({
  name: 'app.bundle',
  route: 'app.bundle',
  source: 'app',
  group: 'bundle',
  plannedBy: 'app.tokens',
  each: tokenRoute(),
  // Without an app key bundles are not asked: the token list records them `skipped`.
  enabled: (s) => s.appBundles,
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/bundle`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  reader: {
    // 401/402/403 are answers: the bundle's status, not a failure.
    asks: (input) => [{ route: 'app.bundle', params: { slug: input.payload.slug }, schema: bundle, answers: { statuses: Object.keys(REFUSALS).map(Number) } }],
    read(input, [got]) {
      const p = input.payload;
      if (got!.problem) return refusedByUpstream(input, p.slug, REFUSALS[got!.problem.status]!, got!.problem);
      const f = got!.fetched! as Fetched<z.infer<typeof bundle>>;
      const missing = missingGraphArrays(f.data);
      if (missing.length > 0) return refused(`the bundle leaves out ${missing.join(', ')}: it states no graph`);
      const n = normalizeBundle(input, p.slug, f.data as WholeBundle);
      const scope = { tokenSlug: p.slug };
      return {
        status: 'ok',
        asOf: f.meta.asOf,
        hash: f.response.sha256,
        writes: [
          into(researchBundles, [{ tokenSlug: p.slug, missingScope: null, problemCode: null, summary: n.summary, payload: f.data, ...rowMeta(input, { asOf: f.meta.asOf }) }]),
          // Ids are valid inside one response only: a token's graph is replaced whole.
          into(valueDrivers, n.drivers, wholeSet(valueDrivers, scope, true)),
          into(valueDriverEdges, n.edges, wholeSet(valueDriverEdges, scope, true)),
          into(tokenFunctions, n.functions, wholeSet(tokenFunctions, scope, true)),
        ],
      };
    },
  },
});

/** Refused (401/402/403): the bundle says so, and keeps what an earlier fetch stored. */
function refusedByUpstream(input: Stamp, slug: string, status: string, err: ProblemError): Outcome {
  const refusal = { status, missingScope: err.scope ?? null, problemCode: err.code ?? null };
  const row = { tokenSlug: slug, missingScope: refusal.missingScope, problemCode: refusal.problemCode, ...rowMeta(input, { status }) };
  return {
    status,
    freshness: null,
    details: refusal,
    // Linked to the refusal's archived body: the answer that refused it.
    writes: [into(researchBundles, [row], { keep: ['summary', 'payload', 'asOf', 'freshness'], from: err.sha256 ? { path: err.path, sha256: err.sha256 } : null })],
  };
}
