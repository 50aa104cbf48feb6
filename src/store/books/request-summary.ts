// The request figures of a run, for sync.runs.stats, whichever runner ran it.
import { sql } from 'drizzle-orm';
import { STOPPED_REQUEST } from '../../ports/recorder.ts';
import type { Warehouse } from '../connection.ts';

export interface RequestSummary {
  total: number;
  byStatus: Record<string, number>;
  rateLimited: number;
  failedAttempts: number;
  /** Keys upstream refused on every request that needed them; absent from runs recorded before it was kept. */
  keyRefusals?: KeyRefusal[];
}

/** An API key refused (401/403) by every answer to the requests that carry it. Names its variable, never the key. */
export interface KeyRefusal {
  variable: 'TE_APP_API_KEY' | 'TE_GATEWAY_API_KEY';
  source: 'app' | 'gateway';
  /** The rate budget bucket of the requests that carry the key (routes.ts). */
  bucket: string;
  /** Requests refused. */
  refused: number;
  /** `401 unauthorized` → count: what upstream answered. */
  answers: Record<string, number>;
}

// The buckets whose requests carry a key (routes.ts: `auth: 'bearer'`), with the variable it comes from.
const KEYED_BUCKETS = {
  'app-key': { variable: 'TE_APP_API_KEY', source: 'app' },
  gateway: { variable: 'TE_GATEWAY_API_KEY', source: 'gateway' },
} as const;

export interface BucketAnswers {
  bucket: string | null;
  httpStatus: number | null;
  problemCode: string | null;
  n: number;
}

/**
 * Pure: the keys refused on every request that needed them. Only answers that speak about the
 * key count: a 429, a 5xx or no response says nothing about it; a single other answer (200,
 * 402 no credits, 404) shows the key was accepted. 401 and 403 are refusals.
 */
export function judgeKeyRefusals(rows: readonly BucketAnswers[]): KeyRefusal[] {
  const out: KeyRefusal[] = [];
  for (const [bucket, key] of Object.entries(KEYED_BUCKETS)) {
    const telling = rows.filter((r) => r.bucket === bucket && r.httpStatus !== null && r.httpStatus !== 429 && r.httpStatus < 500 && r.n > 0);
    if (telling.length === 0 || !telling.every((r) => r.httpStatus === 401 || r.httpStatus === 403)) continue;
    const answers: Record<string, number> = {};
    for (const r of telling) {
      const answer = [r.httpStatus, r.problemCode].filter((x) => x !== null && x !== '').join(' ');
      answers[answer] = (answers[answer] ?? 0) + r.n;
    }
    out.push({ variable: key.variable, source: key.source, bucket, refused: telling.reduce((a, r) => a + r.n, 0), answers });
  }
  return out;
}

/** Pure: one line for people (summary, log): the variable, the count, upstream's answers; never the key. */
export function describeKeyRefusal(r: KeyRefusal): string {
  const host = r.source === 'app' ? 'the app host' : 'the gateway';
  const what = r.source === 'app' ? 'research bundles were not fetched' : 'no gateway resource was fetched';
  const answers = Object.entries(r.answers)
    .map(([a, n]) => `${a}: ${n}`)
    .join(', ');
  return `${host} refused the key in ${r.variable} on every request that needs it (${r.refused} request${r.refused === 1 ? '' : 's'}; ${answers}): ${what}; check the key`;
}

export async function summarizeRunRequests(warehouse: Warehouse, runId: string): Promise<RequestSummary> {
  const rows = await warehouse.query<{ status: string; n: string }>(
    sql`select coalesce(http_status::text, case when starts_with(error, ${STOPPED_REQUEST}) then 'stopped' else 'network' end) as status, count(*)::text as n
        from sync.requests where run_id = ${runId} group by 1`,
  );
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const failedAttempts = Object.entries(byStatus)
    .filter(([s]) => s === 'network' || Number(s) >= 500)
    .reduce((a, [, n]) => a + n, 0);
  const answers = await warehouse.query<{ bucket: string | null; http_status: number | null; problem_code: string | null; n: string }>(
    sql`select bucket, http_status, problem_code, count(*)::text as n from sync.requests
        where run_id = ${runId} and bucket in (${sql.join(Object.keys(KEYED_BUCKETS).map((b) => sql`${b}`), sql`, `)}) group by 1, 2, 3`,
  );
  const keyRefusals = judgeKeyRefusals(answers.map((r) => ({ bucket: r.bucket, httpStatus: r.http_status === null ? null : Number(r.http_status), problemCode: r.problem_code, n: Number(r.n) })));
  return { total, byStatus, rateLimited: byStatus['429'] ?? 0, failedAttempts, keyRefusals };
}
