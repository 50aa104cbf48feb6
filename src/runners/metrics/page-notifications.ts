// The status page's notifications: the last events told, each in words with its deliveries,
// and the ones an endpoint gave up on. Pure: built from what page-data.ts read.
import { ago, second } from '../../lib/ages.ts';
import type { EventDelivery, NotificationsRead, ToldEvent } from '../../store/read/notifications.ts';
import { textOf } from '../notify/events.ts';

type Tone = 'ok' | 'warn' | 'bad' | 'idle';

export interface DeliveryItem {
  endpoint: string;
  status: string;
  tone: Tone;
  detail: string;
}

export interface NotificationItem {
  id: string;
  type: string;
  at: string;
  ago: string;
  tone: Tone;
  text: string;
  deliveries: DeliveryItem[];
}

export interface NotificationsModel {
  /** The endpoints this process delivers to, by label; or why none. */
  endpoints: string;
  pending: number;
  recent: NotificationItem[];
  dead: NotificationItem[];
}

const BAD = new Set(['custom_run_failed', 'custom_group_overdue', 'custom_coverage_below', 'custom_worker_lost', 'custom_upstream_rebound']);
const GOOD = new Set(['custom_run_recovered', 'custom_group_on_time', 'custom_coverage_restored', 'custom_bucket_released']);
const toneOf = (type: string): Tone => (BAD.has(type) ? 'bad' : GOOD.has(type) ? 'ok' : 'warn');

function deliveryItem(d: EventDelivery, now: Date): DeliveryItem {
  const last = d.lastHttpStatus !== null ? `answered ${d.lastHttpStatus}` : (d.lastError ?? 'no answer');
  const attempts = `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`;
  if (d.status === 'delivered') return { endpoint: d.endpoint, status: 'delivered', tone: 'ok', detail: `${attempts}, the last ${ago(d.lastAttemptAt, now)}` };
  if (d.status === 'dead') return { endpoint: d.endpoint, status: 'dead', tone: 'bad', detail: `gave up after ${attempts}; the last ${last}, ${ago(d.lastAttemptAt, now)}` };
  const next = d.nextAttemptAt && d.nextAttemptAt.getTime() > now.getTime() ? `; next at ${second(d.nextAttemptAt)} UTC` : '';
  return { endpoint: d.endpoint, status: 'pending', tone: d.attempts > 0 ? 'warn' : 'idle', detail: d.attempts === 0 ? 'not sent yet' : `${attempts}, the last ${last}${next}` };
}

function item(e: ToldEvent, warehouse: string, now: Date): NotificationItem {
  return {
    id: e.id,
    type: e.type,
    at: `${second(e.occurredAt)} UTC`,
    ago: ago(e.occurredAt, now),
    tone: toneOf(e.type),
    text: textOf(e, warehouse),
    deliveries: e.deliveries.map((d) => deliveryItem(d, now)),
  };
}

/** Pure: the section's model; `endpoints`, the labels this process delivers to. */
export function notificationsModel(read: NotificationsRead, endpoints: readonly string[], warehouse: string, now: Date): NotificationsModel {
  return {
    endpoints: endpoints.length === 0 ? 'none here: TE_NOTIFY_URL is not set (events are recorded all the same)' : endpoints.join(', '),
    pending: read.pending,
    recent: read.recent.map((e) => item(e, warehouse, now)),
    dead: read.dead.map((e) => item(e, warehouse, now)),
  };
}
