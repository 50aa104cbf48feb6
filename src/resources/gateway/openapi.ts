// /openapi-product.json: the gateway's product contract. The client archives every body in
// sync.raw_responses; this job compares the document with the previous copy and, when it
// differs, logs the difference and records it in sync.contract_changes (paths added and
// removed, paths whose operations changed, other top-level sections that changed). The
// first copy is not a change.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { openapiDocument } from '../../schema/upstream/gateway.ts';
import { isRecord, stableMarker } from '../../schema/upstream/values.ts';
import { contractChanges } from '../../schema/warehouse/sync.ts';
import { documentedPath } from '../../engine/kit/paths.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import { archivedBody } from './knows/archived-body.ts';

/** What is kept of a document to compare the next one with: a hash per path and per top-level section. */
export interface ContractFingerprint {
  version: string | null;
  paths: Record<string, string>;
  sections: Record<string, string>;
}

export interface ContractDiff {
  added: string[];
  removed: string[];
  /** Paths present in both whose operations differ. */
  changed: string[];
  /** Top-level members other than `paths` that differ (info, components, ...). */
  sections: string[];
}

const shortHash = (v: unknown) => createHash('sha256').update(stableMarker(v) ?? 'null').digest('hex').slice(0, 16);

/** Pure. */
export function fingerprint(doc: Record<string, unknown>): ContractFingerprint {
  const paths = isRecord(doc.paths) ? doc.paths : {};
  const info = isRecord(doc.info) ? doc.info : {};
  return {
    version: stableMarker(info.version),
    paths: Object.fromEntries(Object.keys(paths).sort().map((p) => [p, shortHash(paths[p])])),
    sections: Object.fromEntries(Object.keys(doc).filter((k) => k !== 'paths').sort().map((k) => [k, shortHash(doc[k])])),
  };
}

/** Pure. */
export function diffContract(prev: ContractFingerprint, next: ContractFingerprint): ContractDiff {
  const keys = (r: Record<string, string>) => new Set(Object.keys(r));
  const [pp, np] = [keys(prev.paths), keys(next.paths)];
  const [ps, ns] = [keys(prev.sections), keys(next.sections)];
  return {
    added: [...np].filter((p) => !pp.has(p)).sort(),
    removed: [...pp].filter((p) => !np.has(p)).sort(),
    changed: [...np].filter((p) => pp.has(p) && prev.paths[p] !== next.paths[p]).sort(),
    sections: [...new Set([...ps, ...ns])].filter((k) => prev.sections[k] !== next.sections[k]).sort(),
  };
}

const contractFingerprint = z.object({ version: z.string().nullable(), paths: z.record(z.string(), z.string()), sections: z.record(z.string(), z.string()) });

/** The previous copy: its fingerprint from the state's details, else from the archived body (`knows`). Pure. */
function previousFingerprint(details: unknown, archived: unknown): ContractFingerprint | null {
  const kept = contractFingerprint.safeParse(isRecord(details) ? details.fingerprint : undefined);
  if (kept.success) return kept.data;
  return isRecord(archived) ? fingerprint(archived) : null;
}

const PATH = documentedPath('gateway.openapi', {});

export const gatewayOpenapiJob = defineJob({
  name: 'gateway.openapi',
  route: 'gateway.openapi',
  source: 'gateway',
  group: 'contract',
  plannedBy: 'gateway.tokens',
  payload: z.object({}),
  resource: () => 'openapi',
  // The previous copy's body, where its state kept no fingerprint of it.
  knows: (_p, state) => (state?.hash && !contractFingerprint.safeParse(isRecord(state.details) ? state.details.fingerprint : undefined).success ? [archivedBody.ask({ source: 'gateway', path: PATH, sha256: state.hash })] : []),
  reader: {
    asks: () => [{ route: 'gateway.openapi', document: true, schema: openapiDocument }],
    read(input, [got]) {
      const response = got!.response!;
      const path = PATH;
      const next = fingerprint(response.body as Record<string, unknown>);
      const prevHash = input.state?.hash ?? null;
      const differs = prevHash !== null && prevHash !== response.sha256;
      const prev = differs ? previousFingerprint(input.state?.details, archivedBody.answerIn(input.known)) : null;
      const diff = differs ? diffContract(prev ?? { version: null, paths: {}, sections: {} }, next) : null;
      const notes = diff
        ? [{ level: 'warn' as const, msg: 'gateway contract changed', fields: { path, previousVersion: prev?.version ?? null, version: next.version, added: diff.added, removed: diff.removed, changed: diff.changed, sections: diff.sections } }]
        : [];
      const change = diff && {
        runId: input.runId,
        source: 'gateway',
        path,
        detectedAt: input.now(),
        previousSha256: prevHash,
        sha256: response.sha256,
        addedPaths: diff.added,
        removedPaths: diff.removed,
        details: { previousVersion: prev?.version ?? null, version: next.version, changedPaths: diff.changed, changedSections: diff.sections, previousKnown: prev !== null },
      };
      return {
        status: 'ok',
        ...(diff ? { reported: 'changed' } : {}),
        hash: response.sha256,
        freshness: next.version,
        details: { fingerprint: next, paths: Object.keys(next.paths).length },
        notes,
        writes: change ? [into(contractChanges, [change])] : [],
      };
    },
  },
});
