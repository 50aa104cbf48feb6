// Job ids and deduplication ids, derived from the resource. BullMQ refuses ids with `:` and
// ids that are integer strings; resources may hold any character a chart key allows.
import { createHash } from 'node:crypto';

/** Percent-encodes everything but a plain set (`:` and `%` included), so the mapping is injective. */
export function encodeResource(resource: string): string {
  let out = '';
  for (const ch of resource) {
    if (/^[A-Za-z0-9._~/-]$/.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** One resource of one source: the same in every run. */
export function resourceKey(source: string, resource: string): string {
  return `${source}.${encodeResource(resource)}`;
}

/** A fetch job: unique per run and resource, so a run never queues a resource twice. */
export function fetchJobId(runId: string, source: string, resource: string): string {
  return `${runId}.${resourceKey(source, resource)}`;
}

export function finishJobId(runId: string): string {
  return `finish.${runId}`;
}

/**
 * The run of a scheduled walk job, derived from the job id: a walk job that stalls and runs
 * again continues the same run instead of starting a second one.
 */
export function runIdFor(queueKey: string, jobId: string): string {
  const h = createHash('sha256').update(`${queueKey}\u0000${jobId}`).digest('hex');
  // UUID layout with version 8 ("custom") and the RFC 4122 variant bits.
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
