// The job catalog: every job definition a file of ./app/ or ./gateway/ exports, found when this
// module loads. A resource is its file: it declares where a walk starts (`root`) or which job
// plans it (`plannedBy`, or its parent's follow-ups), and nothing is listed here.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobDefinition, JobRequest, Source } from '../engine/kit/types.ts';

const SOURCES: readonly Source[] = ['app', 'gateway'];

function isJobDefinition(v: unknown): v is JobDefinition<unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Partial<JobDefinition<unknown>>;
  return typeof d.name === 'string' && typeof d.reader?.read === 'function' && typeof d.resource === 'function' && (d.source === 'app' || d.source === 'gateway');
}

/** Pure: the catalog of the definitions found, by name; one name, one definition. */
export function catalogOf(found: readonly unknown[]): Map<string, JobDefinition<any>> {
  const out = new Map<string, JobDefinition<any>>();
  for (const d of found) {
    if (!isJobDefinition(d)) continue;
    const seen = out.get(d.name);
    if (seen && seen !== d) throw new Error(`two jobs are named ${d.name}`);
    out.set(d.name, d);
  }
  for (const d of out.values()) if (d.plannedBy !== undefined && !out.has(d.plannedBy)) throw new Error(`${d.name} is planned by ${d.plannedBy}, which is no job`);
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The extension of this module's own file: `.ts` from the sources, `.js` once compiled. */
const MODULE_EXTENSION = path.extname(fileURLToPath(import.meta.url));

/** Every export of every resource file under `root` (src/resources, or a copy of it). */
export async function resourceExports(root: URL): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const source of SOURCES) {
    const dir = new URL(`${source}/`, root);
    for (const file of readdirSync(dir).filter((f) => f.endsWith(MODULE_EXTENSION)).sort()) {
      out.push(...Object.values((await import(new URL(file, dir).href)) as Record<string, unknown>));
    }
  }
  return out;
}

export const catalog: ReadonlyMap<string, JobDefinition<any>> = catalogOf(await resourceExports(new URL('./', import.meta.url)));

/** Where a walk of the sources starts (the jobs declared `root`); everything else is a follow-up. */
export function walkRoots(sources: readonly Source[]): JobRequest[] {
  return [...catalog.values()].filter((j) => j.root && sources.includes(j.source)).map((j) => ({ name: j.name, payload: {} }));
}

/** Resource groups, for `--only`, in alphabetical order. */
export function groups(): string[] {
  return [...new Set([...catalog.values()].map((j) => j.group))].sort();
}

export type { JobContext, JobDefinition, JobRequest, JobResult, Source, SyncSettings } from '../engine/kit/types.ts';
