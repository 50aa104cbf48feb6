// What the status page shows of the notifications: the last events told, each with its
// deliveries (endpoint, status, attempts, the last answer), the events some endpoint gave up on
// (dead), and how many deliveries wait.
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';
import type { StoredEvent } from '../books/notifications.ts';

export interface EventDelivery {
  endpoint: string;
  status: string;
  attempts: number;
  lastAttemptAt: Date | null;
  lastHttpStatus: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
}

export interface ToldEvent extends StoredEvent {
  deliveries: EventDelivery[];
}

export interface NotificationsRead {
  recent: ToldEvent[];
  /** Events an endpoint gave up on (ten attempts failed), newest first. */
  dead: ToldEvent[];
  /** Deliveries still to go. */
  pending: number;
}

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(String(v)));

function toldEvent(r: Record<string, unknown>): ToldEvent {
  const deliveries = (Array.isArray(r.deliveries) ? r.deliveries : []) as Record<string, unknown>[];
  return {
    id: String(r.id),
    type: String(r.type),
    subject: String(r.subject),
    occurredAt: new Date(String(r.occurred_at)),
    source: (r.source as string | null) ?? null,
    group: (r.group as string | null) ?? null,
    runId: (r.run_id as string | null) ?? null,
    figures: (r.figures as Record<string, unknown>) ?? {},
    deliveries: deliveries.map((d) => ({
      endpoint: String(d.endpoint),
      status: String(d.status),
      attempts: Number(d.attempts),
      lastAttemptAt: date(d.last_attempt_at),
      lastHttpStatus: d.last_http_status === null || d.last_http_status === undefined ? null : Number(d.last_http_status),
      lastError: (d.last_error as string | null) ?? null,
      nextAttemptAt: date(d.next_attempt_at),
    })),
  };
}

const withDeliveries = sql`
  select n.id, n.type, n.subject, n.occurred_at, n.source, n."group", n.run_id, n.figures,
    coalesce((select jsonb_agg(to_jsonb(d) - 'log' - 'notification_id' order by d.endpoint) from sync.notification_deliveries d where d.notification_id = n.id), '[]'::jsonb) as deliveries
  from sync.notifications n`;

/** The last `limit` events, the dead ones (at most `limit`), and the deliveries waiting. */
export async function readNotifications(w: Warehouse, limit: number): Promise<NotificationsRead> {
  const recent = await w.query<Record<string, unknown>>(sql`${withDeliveries} order by n.seq desc limit ${limit}`);
  const dead = await w.query<Record<string, unknown>>(
    sql`${withDeliveries} where n.id in (select notification_id from sync.notification_deliveries where status = 'dead') order by n.seq desc limit ${limit}`,
  );
  const [pending] = await w.query<{ n: number }>(sql`select count(*)::int as n from sync.notification_deliveries where status = 'pending'`);
  return { recent: recent.map(toldEvent), dead: dead.map(toldEvent), pending: Number(pending?.n ?? 0) };
}
