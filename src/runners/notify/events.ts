// What a notification says: the payload's stable schema, and its `text` in words. A Slack or
// Mattermost incoming webhook takes the payload as it is: both post `text` and leave the other
// fields be, and the event types begin with `custom_`, the one post type Mattermost accepts from
// a webhook (26 characters at most). The figures come from the warehouse, which never holds a
// key; every text is scrubbed of the configured secrets all the same. Pure.
import { scrub } from '../../lib/logger.ts';
import { scrubDeep } from '../../lib/secrets.ts';
import type { StoredEvent } from '../../store/books/notifications.ts';

export const EVENT_TYPES = [
  'custom_run_failed',
  'custom_run_partial',
  'custom_run_recovered',
  'custom_group_overdue',
  'custom_group_on_time',
  'custom_coverage_below',
  'custom_coverage_restored',
  'custom_contract_drift',
  'custom_upstream_rebound',
  'custom_bucket_held',
  'custom_bucket_released',
  'custom_worker_lost',
  'custom_test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** An event as the outbox holds it (declared by the outbox's book). */
export type { StoredEvent } from '../../store/books/notifications.ts';

/** The body POSTed: these fields, always, in this order (`version` moves if one ever changes meaning). */
export interface Payload {
  version: 1;
  type: string;
  id: string;
  occurred_at: string;
  warehouse: string;
  source: string | null;
  group: string | null;
  run_id: string | null;
  subject: string;
  figures: Record<string, unknown>;
  text: string;
}

/** Pure: the payload of an event, for the warehouse named `warehouse`. */
export function payloadOf(e: StoredEvent, warehouse: string, secrets: readonly string[] = []): Payload {
  const clean = (s: string) => scrub(s, secrets);
  return {
    version: 1,
    type: e.type,
    id: e.id,
    occurred_at: e.occurredAt.toISOString(),
    warehouse: clean(warehouse),
    source: e.source,
    group: e.group,
    run_id: e.runId,
    subject: clean(e.subject),
    figures: scrubDeep(e.figures, clean),
    text: clean(textOf(e, warehouse)),
  };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const some = (xs: string[], n = 5) => (xs.length <= n ? xs.join(', ') : `${xs.slice(0, n).join(', ')} and ${xs.length - n} more`);

function runFigures(f: Record<string, unknown>): string {
  const parts = [`${num(f.done) ?? 0} done`, `${num(f.failed) ?? 0} failed`].join(', ');
  const planned = num(f.planned);
  return planned === null ? parts : `${parts} of ${planned} resources`;
}

function failures(f: Record<string, unknown>): string {
  const xs = Array.isArray(f.failures) ? (f.failures as Record<string, unknown>[]) : [];
  if (xs.length === 0) return '';
  const one = (x: Record<string, unknown>) => `${str(x.resource) ?? '?'} (${[str(x.status), str(x.type), num(x.http_status), str(x.code)].filter((y) => y !== null).join(' ')})`;
  return `; first failures: ${xs.map(one).join(', ')}`;
}

/** `run 70c175ac-…, trigger schedule`. */
const runOf = (e: StoredEvent) => [e.runId ? `run ${e.runId}` : null, str(e.figures.trigger) ? `trigger ${str(e.figures.trigger)}` : null].filter(Boolean).join(', ');

/** Pure: the event in words, one line or two, for a person reading a chat. */
export function textOf(e: StoredEvent, warehouse: string): string {
  const f = e.figures;
  const group = e.source && e.group ? `${e.source}.${e.group}` : (str(f.group) ?? e.subject);
  const lead = `tesync (${warehouse}):`;
  switch (e.type) {
    case 'custom_run_failed':
      return `${lead} run failed: ${str(f.scope) ?? e.subject} (${runOf(e)}): ${runFigures(f)}${str(f.error) ? `; ${str(f.error)}` : ''}${failures(f)}`;
    case 'custom_run_partial':
      return `${lead} run partial: ${str(f.scope) ?? e.subject} (${runOf(e)}): ${runFigures(f)}${failures(f)}. Failed resources are retried on the next run.`;
    case 'custom_run_recovered':
      return `${lead} run succeeded again: ${str(f.scope) ?? e.subject}, after ${str(f.previous) ?? 'a failure'} (${runFigures(f)})`;
    case 'custom_group_overdue':
      return `${lead} ${group} is overdue: ${str(f.reason) ?? 'past its threshold'}`;
    case 'custom_group_on_time':
      return `${lead} ${group} is on time again${str(f.data_time) ? `: its oldest data is of ${str(f.data_time)}` : ''}`;
    case 'custom_coverage_below':
      return `${lead} ${group} holds ${str(f.held) ?? '?'} of what its lists promise, below its minimum of ${num(f.min_pct) ?? 100}%; missing: ${str(f.missing) ?? '?'}`;
    case 'custom_coverage_restored':
      return `${lead} ${group} holds ${str(f.held) ?? 'all'} of what its lists promise again`;
    case 'custom_contract_drift': {
      const what = str(f.change) === 'openapi' ? `contract changed (${str(f.path) ?? 'OpenAPI document'})` : `fields changed on ${str(f.route) ?? 'a route'}`;
      const lists = [
        ['fields added', list(f.added_fields)],
        ['fields removed', list(f.removed_fields)],
        ['paths added', list(f.added_paths)],
        ['paths removed', list(f.removed_paths)],
      ].flatMap(([label, xs]) => ((xs as string[]).length > 0 ? [`${label as string}: ${some(xs as string[])}`] : []));
      return `${lead} ${e.source ?? 'upstream'} ${what}${lists.length > 0 ? `: ${lists.join('; ')}` : ''}`;
    }
    case 'custom_upstream_rebound':
      return `${lead} ${e.source ?? 'a source'} rebound to another upstream: ${str(f.from) ?? 'none recorded'} → ${str(f.to) ?? '?'} (tesync ${str(f.command) ?? '?'}${str(f.host) ? ` on ${str(f.host)}` : ''})`;
    case 'custom_bucket_held':
      return `${lead} bucket ${str(f.bucket) ?? e.subject} held by upstream's Retry-After for ${Math.round((num(f.retry_after_ms) ?? 0) / 60_000)} min, until ${str(f.until) ?? '?'}`;
    case 'custom_bucket_released':
      return `${lead} bucket ${str(f.bucket) ?? e.subject} is free again: no Retry-After holds it`;
    case 'custom_worker_lost':
      return `${lead} worker ${str(f.worker) ?? e.subject} lost: not seen since ${str(f.last_seen_at) ?? '?'}; its jobs go to the other workers`;
    case 'custom_test':
      return `${lead} test notification: this endpoint receives tesync's events`;
    default:
      return `${lead} ${e.type}: ${e.subject}`;
  }
}
