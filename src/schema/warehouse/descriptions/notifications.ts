// The notification tables and functions of the `sync` schema (src/schema/warehouse/notifications.ts,
// src/store/sql/notifications.sql), merged into sync.ts's description.
import type { RelationDescription } from './types.ts';

export const NOTIFICATION_TABLES: Readonly<Record<string, RelationDescription>> = {
  notifications: {
    summary: 'every event tesync tells: the outbox',
    description:
      'One row per event, written in the transaction of the state change that caused it: a run\'s end (`custom_run_failed`, `custom_run_partial`, `custom_run_recovered`), a group overdue or back on time (`custom_group_overdue`, `custom_group_on_time`), coverage below its minimum or restored (`custom_coverage_below`, `custom_coverage_restored`), contract drift (`custom_contract_drift`), a rebinding (`custom_upstream_rebound`), a bucket held by `Retry-After` or free again (`custom_bucket_held`, `custom_bucket_released`), a worker lost (`custom_worker_lost`). Only changes are told (`sync.alert_states`). Delivered to each `TE_NOTIFY_URL` by a worker or a sync at its end (`sync.notification_deliveries`); kept whether or not any URL is set. The payload of each is described in docs/operations.md, "Alerts".',
    columns: {
      id: 'the event, also its `id` in the payload: a receiver tells a repeated delivery by it',
      seq: 'the order events were written in: deliveries to an endpoint go out in it',
      type: 'what happened, e.g. `custom_run_failed` (the `custom_` prefix is what Mattermost asks of a post type)',
      subject: 'what changed state: `run:<scope>` (a schedule, or the sources and groups a run walked), `overdue:<source>.<group>`, `coverage:<source>.<group>`, `bucket:<bucket>`, `worker:<name>`, `contract:<source>:<route>`, `binding:<source>`',
      occurred_at: 'when, on the warehouse server\'s clock',
      source: '`app` or `gateway`, where the event is of one',
      group: 'the resource group, where the event is of one',
      run_id: 'the run, where the event is of one (`sync.runs.id`)',
      figures: 'the event\'s figures, as in the payload: a run\'s status, counts and first failures, a group\'s age and threshold, coverage held of expected and the first missing, a bucket\'s hold; `previous`, the state it left. Never a key or a password',
    },
  },
  notification_deliveries: {
    summary: 'each event\'s delivery to each endpoint, and every attempt',
    description:
      'One row per event and endpoint, made by the first deliverer that finds the event unsent to an endpoint it is configured with (events of the last day). Each endpoint receives its events in order (`seq`): the next is sent once the one before is delivered or dead. A failed attempt (no answer within the timeout, a 5xx, a 429, any other status than 2xx) is tried again with backoff (1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 6 h, 9 h: about a day), or after `Retry-After` when the endpoint says so and that is later; the tenth failure makes it `dead`.',
    columns: {
      endpoint: 'the endpoint as it may be shown: scheme, host and port, and the first 8 hex digits of the sha256 of its whole URL (`https://hooks.slack.com#1a2b3c4d`); never the URL, which may hold a token',
      notification_id: 'the event (`sync.notifications.id`)',
      seq: 'the event\'s `seq`',
      status: '`pending`, `delivered` (a 2xx came back), `dead` (ten attempts failed)',
      attempts: 'attempts so far',
      next_attempt_at: 'not sent again before (warehouse clock)',
      lease_until: 'taken by a deliverer until then (its attempt under way); a deliverer that dies lets it go when it passes',
      last_attempt_at: 'when the last attempt ended',
      delivered_at: 'when a 2xx came back',
      last_http_status: 'the last answer\'s HTTP status; null when none came (timeout, refused connection)',
      last_error: 'what went wrong with the last attempt, in words, never the URL',
      log: 'every attempt, in order: `at`, `httpStatus`, `durationMs`, `error`, `retryAfterMs`',
    },
  },
  alert_states: {
    summary: 'the last state told of each subject',
    description:
      'What makes notifications transitions only: a subject (a group\'s freshness or coverage, a bucket, a walk\'s health, a worker) is told when its state changes, not each time it is judged. A worker\'s row is its heartbeat: written each minute or so while it runs, removed when it stops; one not seen for five minutes is lost.',
    columns: {
      subject: 'as in `sync.notifications.subject`',
      state: 'its state: `overdue` / `on_time`, `below` / `held`, `held` / `free`, `succeeded` / `partial` / `failed`, `alive` / `lost`',
      since: 'when it entered this state (warehouse clock)',
      seen_at: 'when it was last judged (a worker\'s last heartbeat)',
      figures: 'the figures it was last judged with',
    },
  },
};

export const NOTIFICATION_FUNCTIONS: Readonly<Record<string, string>> = {
  'notify_transition(about text, now_state text, quiet_state text, event_types jsonb, event_source text, event_group text, event_run uuid, event_figures jsonb)':
    'Tells a subject\'s state when it changed: records `now_state` for `about` in `sync.alert_states` and, when it differs from the state recorded (a subject first seen counts as in `quiet_state`) and `event_types` names an event for it, inserts that event into `sync.notifications` with `event_figures` and the state it left (`previous`). One caller at a time per subject. Returns the event\'s id, or null when nothing was told.',
  'notify_run_end()':
    'The trigger function that tells a run\'s end, in the transaction that closes it: its walk\'s health (the runs of one schedule, or of the same sources and groups) told when it changes: `custom_run_failed`, `custom_run_partial`, and `custom_run_recovered` for the first success after either. An interrupted run changes nothing. A failure to record it leaves the run closed and says so in the server\'s log. Not for calling.',
  'notify_contract_change()':
    'The trigger function that tells each `sync.contract_changes` row as it is inserted (`custom_contract_drift`), with at most 20 names of each list and their counts. Not for calling.',
  'notify_rebinding()':
    'The trigger function that tells each rebinding written to `sync.upstream_binding_log` (`custom_upstream_rebound`: from, to, the command and machine). Not for calling.',
  'notify_lost_workers(stale interval)':
    'Tells each worker whose heartbeat (`sync.alert_states`, `worker:<name>`) is older than `stale` lost (`custom_worker_lost`), once; forgets those lost a week ago. Returns how many it found lost now. Run by workers on their tick.',
};
