-- Notifications: the outbox (sync.notifications) written in the transaction of the state
-- change that caused each event. A run's end, a contract change and a rebinding are rows
-- tesync writes anyway: a trigger on each inserts its event in the same statement's
-- transaction, so no writer can forget it and no crash can lose it. A change only a read can
-- see (a group overdue, coverage short, a bucket held, a worker lost) is judged by one
-- function, notify_transition, which keeps the last state told of each subject
-- (sync.alert_states) and tells only a change of it. Delivery reads the outbox
-- (src/runners/notify/deliver.ts). Event types begin with `custom_`: Mattermost's incoming
-- webhooks refuse any other post type (and keep at most 26 characters of it).

-- Tells a subject's state when it changed: records it, and inserts the event `event_types`
-- names for the new state (none: recorded, not told). A subject first seen is taken to have
-- been in `quiet_state`. Returns the event's id, or null when nothing was told.
CREATE OR REPLACE FUNCTION "sync"."notify_transition"(about text, now_state text, quiet_state text, event_types jsonb,
  event_source text DEFAULT NULL, event_group text DEFAULT NULL, event_run uuid DEFAULT NULL, event_figures jsonb DEFAULT '{}'::jsonb)
RETURNS uuid LANGUAGE plpgsql AS $fn$
DECLARE
  at timestamptz := "sync"."server_clock"();
  previous text;
  told uuid;
BEGIN
  INSERT INTO "sync"."alert_states" (subject, state, since, seen_at) VALUES (about, quiet_state, at, at) ON CONFLICT (subject) DO NOTHING;
  -- One judge at a time per subject: two workers seeing the same change tell it once.
  SELECT a.state INTO previous FROM "sync"."alert_states" a WHERE a.subject = about FOR UPDATE;
  UPDATE "sync"."alert_states" a
  SET state = now_state, seen_at = at, figures = event_figures, since = CASE WHEN previous IS DISTINCT FROM now_state THEN at ELSE a.since END
  WHERE a.subject = about;
  IF previous IS DISTINCT FROM now_state AND event_types ? now_state THEN
    INSERT INTO "sync"."notifications" (type, subject, occurred_at, source, "group", run_id, figures)
    VALUES (event_types->>now_state, about, at, event_source, event_group, event_run, event_figures || jsonb_build_object('previous', previous))
    RETURNING id INTO told;
  END IF;
  RETURN told;
END
$fn$;

-- A run's end, told when its walk's health changed: the first failed or partial run after a
-- success (or ever), and the first success after either (`custom_run_recovered`). Runs of one
-- schedule, or of the same sources and groups, are one subject; an interrupted run changes
-- nothing.
CREATE OR REPLACE FUNCTION "sync"."notify_run_end"() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  o jsonb;
  groups text;
  tokens boolean;
  scope text;
BEGIN
  IF NOT (OLD.status = 'running' AND NEW.status IN ('succeeded', 'partial', 'failed')) THEN
    RETURN NULL;
  END IF;
  o := NEW.options;
  groups := (
    SELECT string_agg(g, ',' ORDER BY g)
    FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(coalesce(o->'groups', o->'only')) = 'array' THEN coalesce(o->'groups', o->'only') END) g
  );
  tokens := jsonb_typeof(o->'tokens') = 'array' AND jsonb_array_length(o->'tokens') > 0;
  scope := coalesce(
    'schedule ' || nullif(o->>'schedule', ''),
    nullif(array_to_string(NEW.sources, '+'), '') || coalesce(' only ' || groups, '') || CASE WHEN tokens THEN ' (some tokens)' ELSE '' END,
    NEW.trigger
  );
  PERFORM "sync"."notify_transition"('run:' || scope, NEW.status, 'succeeded',
    '{"failed": "custom_run_failed", "partial": "custom_run_partial", "succeeded": "custom_run_recovered"}'::jsonb,
    CASE WHEN cardinality(NEW.sources) = 1 THEN NEW.sources[1] END, NULL, NEW.id,
    jsonb_build_object(
      'status', NEW.status, 'trigger', NEW.trigger, 'sources', to_jsonb(NEW.sources), 'schedule', o->'schedule', 'scope', scope,
      'started_at', NEW.started_at, 'finished_at', NEW.finished_at, 'error', NEW.error,
      'planned', NEW.stats->'planned', 'done', NEW.stats->'done', 'failed', NEW.stats->'failed', 'rows', NEW.stats->'rows',
      'requests', NEW.stats->'requests'->'total',
      'failures', coalesce((
        SELECT jsonb_agg(jsonb_build_object('resource', f->'resource', 'source', f->'source', 'status', f->'status', 'type', f->'type', 'http_status', f->'httpStatus', 'code', f->'code'))
        FROM (SELECT f FROM jsonb_array_elements(CASE WHEN jsonb_typeof(NEW.stats->'failures') = 'array' THEN NEW.stats->'failures' END) f LIMIT 5) x
      ), '[]'::jsonb)));
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  -- Telling must never keep a run from closing: the event is lost, said in the server's log.
  RAISE WARNING 'tesync: run % closed, its notification not recorded: %', NEW.id, SQLERRM;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE TRIGGER "notify_run_end" AFTER UPDATE OF status ON "sync"."runs" FOR EACH ROW EXECUTE FUNCTION "sync"."notify_run_end"();

-- Each contract change is a change: told every time, with what changed (at most 20 names of each list).
CREATE OR REPLACE FUNCTION "sync"."notify_contract_change"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO "sync"."notifications" (type, subject, source, run_id, figures)
  VALUES ('custom_contract_drift', 'contract:' || NEW.source || ':' || coalesce(NEW.kind, NEW.change), NEW.source, NEW.run_id, jsonb_build_object(
    'change', NEW.change, 'route', NEW.kind, 'path', NEW.path, 'detected_at', NEW.detected_at,
    'added_fields', to_jsonb(NEW.added_fields[1:20]), 'removed_fields', to_jsonb(NEW.removed_fields[1:20]),
    'added_paths', to_jsonb(NEW.added_paths[1:20]), 'removed_paths', to_jsonb(NEW.removed_paths[1:20]),
    'counts', jsonb_build_object('added_fields', cardinality(NEW.added_fields), 'removed_fields', cardinality(NEW.removed_fields),
      'added_paths', cardinality(NEW.added_paths), 'removed_paths', cardinality(NEW.removed_paths))));
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'tesync: contract change recorded, its notification not: %', SQLERRM;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE TRIGGER "notify_contract_change" AFTER INSERT ON "sync"."contract_changes" FOR EACH ROW EXECUTE FUNCTION "sync"."notify_contract_change"();

-- A source rebound to another upstream (`--force`): told each time.
CREATE OR REPLACE FUNCTION "sync"."notify_rebinding"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.event = 'rebound' THEN
    INSERT INTO "sync"."notifications" (type, subject, source, figures)
    VALUES ('custom_upstream_rebound', 'binding:' || NEW.source, NEW.source, jsonb_build_object(
      'from', NEW.from_upstream, 'to', NEW.to_upstream, 'command', NEW.command, 'host', NEW.host, 'at', NEW.at));
  END IF;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'tesync: rebinding recorded, its notification not: %', SQLERRM;
  RETURN NULL;
END
$fn$;

CREATE OR REPLACE TRIGGER "notify_rebinding" AFTER INSERT ON "sync"."upstream_binding_log" FOR EACH ROW EXECUTE FUNCTION "sync"."notify_rebinding"();

-- Workers not seen for `stale` are lost: told once each (`custom_worker_lost`). Those lost a
-- week ago are forgotten. Returns how many were found lost now.
CREATE OR REPLACE FUNCTION "sync"."notify_lost_workers"(stale interval) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  w record;
  n integer := 0;
BEGIN
  FOR w IN
    SELECT subject, seen_at, figures FROM "sync"."alert_states"
    WHERE subject LIKE 'worker:%' AND state = 'alive' AND seen_at < "sync"."server_clock"() - stale
    FOR UPDATE SKIP LOCKED
  LOOP
    PERFORM "sync"."notify_transition"(w.subject, 'lost', 'alive', '{"lost": "custom_worker_lost"}'::jsonb, NULL, NULL, NULL,
      coalesce(w.figures, '{}'::jsonb) || jsonb_build_object('worker', substr(w.subject, 8), 'last_seen_at', w.seen_at));
    n := n + 1;
  END LOOP;
  DELETE FROM "sync"."alert_states" WHERE subject LIKE 'worker:%' AND state = 'lost' AND since < "sync"."server_clock"() - interval '7 days';
  RETURN n;
END
$fn$;
