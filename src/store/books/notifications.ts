// The outbox's statements (sync.notifications, sync.notification_deliveries, sync.alert_states):
// transitions told once (sync.notify_transition, src/store/sql/notifications.sql), workers'
// heartbeats, buckets held, and the delivery of each event to each endpoint, in order, one
// deliverer at a time. Every time here is the warehouse's clock.
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';
import { SERVER_CLOCK } from '../warehouse-clock.ts';

/** A subject's state as judged now, and the event each state is told as (none: recorded, not told). */
export interface Transition {
  subject: string;
  state: string;
  /** The state a subject first judged is taken to have been in: first seen in it, nothing is told. */
  quiet: string;
  types: Readonly<Record<string, string>>;
  source?: string | null;
  group?: string | null;
  runId?: string | null;
  figures?: Record<string, unknown>;
}

/** Records the state; returns the event's id when it changed and was told. */
export async function tellTransition(w: Warehouse, t: Transition): Promise<string | null> {
  const [row] = await w.query<{ id: string | null }>(sql`
    select "sync"."notify_transition"(${t.subject}, ${t.state}, ${t.quiet}, ${JSON.stringify(t.types)}::jsonb,
      ${t.source ?? null}::text, ${t.group ?? null}::text, ${t.runId ?? null}::uuid, ${JSON.stringify(t.figures ?? {})}::jsonb) as id`);
  return row?.id ?? null;
}

/** A worker's heartbeat: alive now. */
export async function heartbeat(w: Warehouse, worker: string, figures: Record<string, unknown>): Promise<void> {
  await tellTransition(w, { subject: `worker:${worker}`, state: 'alive', quiet: 'alive', types: {}, figures });
}

/** A worker that stops says so: it is not lost. */
export async function forgetWorker(w: Warehouse, worker: string): Promise<void> {
  await w.query(sql`delete from "sync"."alert_states" where subject = ${`worker:${worker}`}`);
}

/** Tells the workers not seen for `staleMs` lost; returns how many. */
export async function findLostWorkers(w: Warehouse, staleMs: number): Promise<number> {
  const [row] = await w.query<{ n: number }>(sql`select "sync"."notify_lost_workers"(${staleMs} * interval '1 millisecond') as n`);
  return Number(row?.n ?? 0);
}

export interface BucketHold {
  bucket: string;
  /** The longest Retry-After still in force, ms, and when it ends (warehouse clock). */
  retryAfterMs: number;
  until: Date;
}

/** Buckets a response's Retry-After of at least `holdMs` holds now (sync.requests, any process's). */
export async function heldBuckets(w: Warehouse, holdMs: number): Promise<BucketHold[]> {
  const rows = await w.query<{ bucket: string; ms: number; until: string | Date }>(sql`
    select bucket, max(retry_after_ms)::int as ms, max(started_at + retry_after_ms * interval '1 millisecond') as until
    from sync.requests
    where retry_after_ms >= ${holdMs} and bucket is not null and started_at > ${SERVER_CLOCK} - interval '2 days'
      and started_at + retry_after_ms * interval '1 millisecond' > ${SERVER_CLOCK}
    group by bucket`);
  return rows.map((r) => ({ bucket: r.bucket, retryAfterMs: Number(r.ms), until: new Date(r.until) }));
}

/** How far back an endpoint is given the events it has not had: about the retries' span. */
const FAN_OUT_WINDOW = sql`interval '1 day'`;

/** Each event of the last day an endpoint has no delivery of becomes one, pending. */
export async function fanOut(w: Warehouse, endpoints: readonly string[]): Promise<void> {
  if (endpoints.length === 0) return;
  await w.query(sql`
    insert into sync.notification_deliveries (endpoint, notification_id, seq, next_attempt_at)
    select e.endpoint, n.id, n.seq, n.occurred_at
    from sync.notifications n cross join unnest(${`{${endpoints.map((e) => JSON.stringify(e)).join(',')}}`}::text[]) e(endpoint)
    where n.occurred_at > ${SERVER_CLOCK} - ${FAN_OUT_WINDOW}
    on conflict do nothing`);
}

/** An event as the outbox holds it. */
export interface StoredEvent {
  id: string;
  type: string;
  subject: string;
  occurredAt: Date;
  source: string | null;
  group: string | null;
  runId: string | null;
  figures: Record<string, unknown>;
}

/** An event taken for delivery to one endpoint. */
export interface Claimed extends StoredEvent {
  /** Attempts before this one. */
  attempts: number;
}

/**
 * Takes the endpoint's next event, for `leaseMs`: the first pending in order, and only when it
 * is due and nobody holds it. The events after it wait (each endpoint gets them in order).
 */
export async function claimNext(w: Warehouse, endpoint: string, leaseMs: number): Promise<Claimed | null> {
  const [row] = await w.query<Record<string, unknown>>(sql`
    with head as (
      select notification_id from sync.notification_deliveries
      where endpoint = ${endpoint} and status = 'pending' order by seq limit 1 for update
    ), taken as (
      update sync.notification_deliveries d set lease_until = ${SERVER_CLOCK} + ${leaseMs} * interval '1 millisecond'
      from head
      where d.endpoint = ${endpoint} and d.notification_id = head.notification_id
        and d.next_attempt_at <= ${SERVER_CLOCK} and (d.lease_until is null or d.lease_until <= ${SERVER_CLOCK})
      returning d.notification_id, d.attempts
    )
    select n.id, n.type, n.subject, n.occurred_at, n.source, n."group", n.run_id, n.figures, taken.attempts
    from taken join sync.notifications n on n.id = taken.notification_id`);
  if (!row) return null;
  return {
    id: String(row.id),
    type: String(row.type),
    subject: String(row.subject),
    occurredAt: new Date(row.occurred_at as string),
    source: (row.source as string | null) ?? null,
    group: (row.group as string | null) ?? null,
    runId: (row.run_id as string | null) ?? null,
    figures: (row.figures as Record<string, unknown>) ?? {},
    attempts: Number(row.attempts),
  };
}

/** What one attempt came to. */
export interface AttemptOutcome {
  delivered: boolean;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  retryAfterMs: number | null;
}

/**
 * Records an attempt: delivered, or pending again after `retryInMs` (and after the endpoint's
 * Retry-After when that is later), or dead when it was the last of `maxAttempts`.
 */
export async function recordAttempt(w: Warehouse, endpoint: string, id: string, o: AttemptOutcome, retryInMs: number, maxAttempts: number): Promise<'delivered' | 'pending' | 'dead'> {
  const entry = JSON.stringify({ httpStatus: o.httpStatus, durationMs: o.durationMs, error: o.error, retryAfterMs: o.retryAfterMs });
  const wait = Math.max(retryInMs, o.retryAfterMs ?? 0);
  const [row] = await w.query<{ status: 'delivered' | 'pending' | 'dead' }>(sql`
    update sync.notification_deliveries set
      attempts = attempts + 1,
      status = case when ${o.delivered} then 'delivered' when attempts + 1 >= ${maxAttempts} then 'dead' else 'pending' end,
      delivered_at = case when ${o.delivered} then ${SERVER_CLOCK} end,
      last_attempt_at = ${SERVER_CLOCK},
      last_http_status = ${o.httpStatus}::int,
      last_error = ${o.error}::text,
      next_attempt_at = ${SERVER_CLOCK} + ${wait} * interval '1 millisecond',
      lease_until = null,
      log = log || jsonb_build_array(jsonb_build_object('at', ${SERVER_CLOCK}) || ${entry}::jsonb)
    where endpoint = ${endpoint} and notification_id = ${id}
    returning status`);
  return row?.status ?? 'pending';
}
