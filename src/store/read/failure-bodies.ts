// The failing resources (sync.resource_state) with the archived body of each failure, and
// those bodies, for the status page. A failure's body is kept when upstream answered it with
// one: a 4xx problem (archived by the client) or a response refused as not understood (kept
// `invalid` by the job). 5xx answers, 429s and failures without an answer leave none.
//
// Which body is a resource's: the one at the request path the failure recorded
// (`details.problem.path` for an upstream problem; `details.path` where a failure records it),
// the latest seen. A refusal whose path was not recorded is linked only when it is certain: the
// single body refused in the resource's last run (of its source, and for a token's resource,
// at a path of that token).
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';

/** The resource statuses the page lists as failing (as `tesync status` counts them). */
export const FAILING_STATUSES = ['failed', 'invalid', 'rate_limited'] as const;

export interface FailingResource {
  source: string;
  group: string;
  resource: string;
  status: string;
  type: string | null;
  code: string | null;
  httpStatus: number | null;
  bucket: string | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  consecutiveFailures: number;
  /** sync.raw_responses.id of the failure's body; null when none was kept (or none can be told for certain). */
  bodyId: number | null;
}

const asDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
const asText = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** A refused body, as the fallback match reads it. */
export interface RefusedBody {
  id: number;
  source: string;
  runId: string;
  path: string;
}

/**
 * Pure: the one body refused in the resource's last run that can be its own (its source; for
 * `token/<slug>/...`, a path with that slug as a whole segment), or null when there are none
 * or several.
 */
export function soleRefusedBody(r: { source: string; resource: string; runId: string | null }, bodies: readonly RefusedBody[]): number | null {
  if (r.runId === null) return null;
  const parts = r.resource.split('/');
  const slug = parts[0] === 'token' ? parts[1] : undefined;
  const candidates = bodies.filter((b) => b.source === r.source && b.runId === r.runId && (slug === undefined || pathSegments(b.path).includes(slug)));
  return candidates.length === 1 ? candidates[0]!.id : null;
}

function pathSegments(path: string): string[] {
  const bare = path.split(/[?#]/)[0]!;
  return bare.split('/').map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
}

/** The failing resources still tracked, most recently attempted first, at most `limit`; with the count of all. */
export async function readFailingResources(w: Warehouse, limit: number): Promise<{ resources: FailingResource[]; total: number }> {
  const failing = sql.join(
    FAILING_STATUSES.map((s) => sql`${s}`),
    sql`, `,
  );
  const rows = await w.query<Record<string, unknown>>(sql`
    select s.source, coalesce(s.kind, 'other') as grp, s.resource, s.status, s.error_type, s.error_code, s.http_status, s.bucket,
           s.last_error, s.last_attempt_at, s.consecutive_failures, s.last_run_id::text as run_id, b.id as body_id,
           count(*) over ()::int as total
    from sync.resource_state s
    left join lateral (
      select x.id from sync.raw_responses x
      where x.source = s.source and x.path = coalesce(s.details->'problem'->>'path', s.details->>'path')
        and (x.status = 'invalid' or x.http_status >= 300)
      order by x.last_seen_at desc, x.id desc
      limit 1
    ) b on true
    where s.active and s.status in (${failing})
    order by s.last_attempt_at desc nulls last, s.source, s.resource
    limit ${limit}`);
  const resources = rows.map((r) => ({
    source: String(r.source),
    group: String(r.grp),
    resource: String(r.resource),
    status: String(r.status),
    type: asText(r.error_type),
    code: asText(r.error_code),
    httpStatus: r.http_status === null || r.http_status === undefined ? null : Number(r.http_status),
    bucket: asText(r.bucket),
    lastError: asText(r.last_error),
    lastAttemptAt: asDate(r.last_attempt_at),
    consecutiveFailures: Number(r.consecutive_failures ?? 0),
    bodyId: r.body_id === null || r.body_id === undefined ? null : Number(r.body_id),
    runId: asText(r.run_id),
  }));
  // Refusals without a recorded path: the bodies refused in their runs, read once.
  const unlinked = resources.filter((r) => r.bodyId === null && r.status === 'invalid' && r.runId !== null);
  if (unlinked.length > 0) {
    const runs = [...new Set(unlinked.map((r) => r.runId!))];
    const bodies = (
      await w.query<Record<string, unknown>>(sql`
        select id, source, run_id::text as run_id, path from sync.raw_responses
        where status = 'invalid' and run_id in (${sql.join(
          runs.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`)
    ).map((b) => ({ id: Number(b.id), source: String(b.source), runId: String(b.run_id), path: String(b.path) }));
    for (const r of unlinked) r.bodyId = soleRefusedBody(r, bodies);
  }
  return { resources: resources.map(({ runId: _, ...r }) => r), total: Number(rows[0]?.total ?? 0) };
}

/** An archived body of a failure, as served: JSON pretty-printed from jsonb, text as kept, bytes as served. */
export interface FailureBody {
  id: number;
  source: string;
  path: string;
  httpStatus: number;
  contentType: string | null;
  /** ok (a 4xx problem upstream sent) | invalid (refused as not understood) */
  status: string;
  fetchedAt: Date;
  lastSeenAt: Date;
  body: { kind: 'json' | 'text'; text: string } | { kind: 'bytes'; bytes: Buffer } | { kind: 'none' };
}

/**
 * The archived body `id` when it is a failure's (kept `invalid`, or an answer of 3xx or more);
 * undefined for any other body (the archive of data is not the page's to serve) or none.
 */
export async function readFailureBody(w: Warehouse, id: number): Promise<FailureBody | undefined> {
  if (!Number.isSafeInteger(id) || id <= 0) return undefined;
  const [r] = await w.query<Record<string, unknown>>(sql`
    select id, source, path, http_status, content_type, status, fetched_at, last_seen_at,
           case when body is not null then jsonb_pretty(body) end as json, body_text, body_bytes
    from sync.raw_responses
    where id = ${id} and (status = 'invalid' or http_status >= 300)`);
  if (!r) return undefined;
  const body: FailureBody['body'] =
    r.json !== null && r.json !== undefined
      ? { kind: 'json', text: String(r.json) }
      : r.body_text !== null && r.body_text !== undefined
        ? { kind: 'text', text: String(r.body_text) }
        : r.body_bytes instanceof Uint8Array
          ? { kind: 'bytes', bytes: Buffer.from(r.body_bytes) }
          : { kind: 'none' };
  return {
    id: Number(r.id),
    source: String(r.source),
    path: String(r.path),
    httpStatus: Number(r.http_status),
    contentType: asText(r.content_type),
    status: String(r.status),
    fetchedAt: asDate(r.fetched_at)!,
    lastSeenAt: asDate(r.last_seen_at)!,
    body,
  };
}
