// The `sync` schema: tesync's bookkeeping (src/schema/warehouse/sync.ts).
import { NOTIFICATION_FUNCTIONS, NOTIFICATION_TABLES } from './notifications.ts';
import type { SchemaDescription } from './types.ts';

export const sync: SchemaDescription = {
  name: 'sync',
  title: 'bookkeeping',
  description:
    'tesync\'s bookkeeping: runs, every upstream request, archived response bodies, per-resource state, upstream contract drift, the upstream the warehouse is bound to, the rate budget of workers without Redis, the functions that keep the versions of `app` and `gateway`, and those that read them back as changes.',
  tables: {
    runs: {
      summary: 'one row per sync walk',
      columns: {
        id: 'the run; every row it writes carries it as `run_id`',
        started_at: 'when the run started',
        finished_at: 'when it finished; null while it runs',
        status: '`running`, `succeeded` (everything fetched), `partial` (some resources failed, retried next run; or an API key was refused on every request that needs it, see `stats`), `failed` (nothing could be done), `interrupted` (Ctrl-C or SIGTERM stopped it: `finished_at` is when the signal came; what it did is kept, the next run goes on from there)',
        trigger: 'what started it: `cli` (`tesync sync`), `schedule` (a worker\'s schedule), `manual` (a walk enqueued by hand), `demo`, `test`',
        sources: '`app`, `gateway`: the sources it synced',
        options: '`--token`, `--only`, `--full` as given; for a worker\'s walk also its `schedule`, walk `job` id, `queuePrefix` (`TE_QUEUE_PREFIX`) and `queueBackend` (`redis`, or `postgres`: the queues in this warehouse; absent before 2026-11-27: `redis`); `settings`, what its reads depended on besides their bodies (bundles asked or not, the history overlap and periods, chart timeframes, ...: never a key), which `tesync replay` reads its bodies with again (absent before 2026-12-07)',
        stats: 'resources done/failed per group, rows written, requests by HTTP status, 429s waited out, first failures, keys refused on every request that needs them (`requests.keyRefusals`: the variable, never the key)',
        error: 'why a run failed as a whole',
      },
    },
    run_counts: {
      summary: 'the counts of a run while its jobs run, on a worker without Redis',
      description:
        'The run ledger of workers that keep their queues in Postgres: one row per run, written as its jobs are planned and settled, each job counted once however often it runs. The run\'s final counts are in `sync.runs.stats` once it finishes. A run\'s rows here (and in `sync.run_jobs`) are kept until `expires_at` and removed when a later run starts.',
      columns: {
        queue_prefix: 'the deployment: the workers\' queue prefix (`TE_QUEUE_PREFIX`), which separates deployments sharing a warehouse',
        run_id: 'the run (`sync.runs.id`, as text)',
        planned: 'jobs planned, less those another run had queued already (`deduplicated`)',
        pending: 'jobs planned and not settled yet; the run finishes when it reaches 0',
        done: 'jobs that ended done',
        failed: 'jobs that failed, and follow-ups that could not be planned',
        deduplicated: 'jobs another run had queued already: that run fetches them',
        rows: 'rows the run\'s jobs wrote',
        by_group: 'jobs by `source.group` and the resource status they ended with: `{"app.tokens": {"ok": 1}}`',
        failures: 'the run\'s first 50 failures: job, resource, source, status, error class, upstream code, HTTP status, bucket and message',
        expires_at: 'until when the run is kept, on the warehouse server\'s clock: 7 days after it last planned a new job, a few minutes once it is recorded in `sync.runs`',
      },
    },
    run_jobs: {
      summary: 'every job a run planned, on a worker without Redis',
      description: 'Beside `sync.run_counts`: a row per job the run planned, so that a job planned or settled again is counted once. Removed with its run\'s counts.',
      columns: {
        queue_prefix: 'the deployment, as in `sync.run_counts`',
        run_id: 'the run (`sync.runs.id`, as text)',
        job_id: 'the job: its queue job id, `<run_id>.<source>.<resource>`',
        settled: 'whether its outcome was counted; false while it is pending',
      },
    },
    requests: {
      summary: 'every upstream attempt',
      description:
        'Kept `TE_REQUESTS_RETENTION_DAYS` days (90 by default; 0: forever): older rows are removed, in batches, as runs end. The bodies (`sync.raw_responses`) and the versions are never removed.',
      columns: {
        id: 'the attempt, numbered in the order recorded',
        run_id: 'the run that made it (`sync.runs.id`)',
        source: '`app` or `gateway`',
        bucket: 'the rate budget it counts against: `app-public`, `app-key`, `gateway`',
        method: 'the HTTP method (`GET`)',
        path: 'path and query, never the host or a key',
        http_status: 'the response\'s HTTP status; null when no response arrived (network error, timeout)',
        attempt: '1, 2, ...: the try of the same request',
        started_at: 'when the attempt started',
        duration_ms: 'how long it took, milliseconds',
        bytes: 'size of the response body, bytes',
        rate_limit_remaining: 'the response\'s remaining rate budget, from whichever form announced it (`X-RateLimit-Remaining`, the IETF `RateLimit` `r` or `RateLimit-Remaining`)',
        rate_limit_limit: 'the response\'s rate budget, from the same form (`X-RateLimit-Limit`, the IETF `RateLimit-Policy` `q` or `RateLimit-Limit`)',
        retry_after_ms: "how long the response held its bucket, milliseconds: any response's `Retry-After` (a 429's, a 503's during announced maintenance, ...); for a 429 without one, its rate-limit reset, else tesync's backoff",
        problem_code: 'the RFC 9457 problem `code` of an error response',
        request_id: 'upstream\'s request id (`X-Request-Id`, or the problem\'s `requestId`)',
        error: 'what went wrong, when something did: timeout, reset, too large, invalid JSON, a redirect not followed (only the target\'s host), ...; on a redirect that was followed, where it led (`redirect 307 followed to <path>`): each hop is a row of its own; `stopped: ...` for a request cut short because its walk was stopped (Ctrl-C, SIGTERM, a lost lock)',
      },
    },
    raw_responses: {
      summary: 'the archive of bodies',
      description:
        "Every 2xx body, and the body of every refusal (4xx other than 429) that a row may link to. Identical bodies of one path are stored once: `sha256` leaves out `meta.servedAt`, which changes on every call, so unchanged data hashes the same. Each body is kept exactly, in one of `body`, `body_text`, `body_bytes`, never with a character dropped or replaced; a body refused (`status` `invalid`) as served is `coalesce(body_bytes, convert_to(body_text, 'UTF8'))`. Never pruned: the table refuses `DELETE` and `TRUNCATE`, since versions link to its rows (`raw_response_id`, `closing_raw_response_id`).",
      columns: {
        id: 'the body; rows of `app` and `gateway` name it in `raw_response_id`',
        run_id: 'the run that first received it',
        source: '`app` or `gateway`',
        path: 'path and query of the request, never the host or a key; after redirects, still the path of the route asked for (the hops are in `sync.requests`)',
        fetched_at: 'when this body was first received (the warehouse server\'s clock, as every time in the warehouse)',
        last_seen_at: 'when the same body was last received again (the same clock)',
        http_status: 'the response\'s HTTP status',
        content_type: 'the response\'s `Content-Type`',
        sha256: "hash of the body without `meta.servedAt`: unchanged data hashes the same; for a body kept `invalid`, the sha256 of the bytes served (after `invalid:` when a job refused it): `encode(sha256(coalesce(body_bytes, convert_to(body_text, 'UTF8'))), 'hex')`",
        body: 'the body as jsonb, numbers exact',
        body_text: 'the body as received, when it was not JSON (or not valid JSON, refused, or `partial`) and text holds it exactly',
        body_bytes:
          "the body as served, byte for byte, when neither `body` (jsonb) nor `body_text` can hold it exactly: a U+0000 (NUL), bytes that are not UTF-8; then both are null. The body as served, whichever column holds it: `coalesce(body_bytes, convert_to(body_text, 'UTF8'))` for refused bodies",
        status:
          '`ok`; `partial` for a list whose items holding a string Postgres cannot store exactly (U+0000, an unpaired surrogate) were refused alone, the rest of it read (its rows link here); or `invalid` when the body failed validation or was not understood (such a string outside every item of a list, or in a response that is not a list; bytes that are not UTF-8). `partial` and `invalid` bodies are kept as received',
      },
    },
    writes: {
      summary: 'the write record: each write, its known time and the bodies it used',
      description:
        "One row per write of a job (a transaction that took a known time with `begin_write`), written in that transaction: its known time, run, resource, the job and payload that wrote it, and the archived bodies it used, in the order the job read them. Also one row per try that read bodies and wrote nothing (refused, failed, or superseded by a newer response), at the time it ended. `tesync replay` writes a warehouse again from these and `sync.raw_responses` alone, each write at its known time. Rows written before this table was added (2026-12) have none: their bodies cannot be replayed, and `tesync replay` counts them.",
      columns: {
        id: 'the record, numbered in the order written',
        known_at: 'the write\'s known time: every row and version it wrote is known from this instant (`fetched_at`, `known_from`, `known_to`); for a try that wrote nothing, when it ended',
        run_id: 'the run whose job wrote (`sync.runs.id`)',
        source: '`app` or `gateway`',
        resource: 'the resource written, as in `sync.resource_state`',
        job: 'the job that wrote it, by name (`app.history`, `gateway.screener`, ...)',
        payload: 'the job\'s payload: with `job`, what replay runs again',
        how: '`read` (rows read from the bodies), `unchanged` (a resource found unchanged by its marker that still wrote what it stored), `confirmed` (upstream\'s 304: the rows as they stood, no body), `refused` (bodies read and not understood: nothing written; replayed at their receipt, so that a reader that now understands them writes their rows then), `unwritten` (bodies read, nothing written: a failure, or a response older than one written already)',
        bodies: 'the archived bodies (`sync.raw_responses.id`) the try read, in order, a page or a stream after another and a confirming fetch after what it confirmed; empty for a write that read none',
      },
    },
    archive_days: {
      summary: 'each daily archive\'s days: rows, and the last transaction that changed them',
      description:
        'Kept by a trigger on each daily archive (`app.screener_daily`, `app.token_snapshots_daily`, `gateway.screener_daily`), in the transaction that writes the archive: a day\'s row count and the last writer. `tesync export` reads it to write only the days changed since its last export, without reading the archives.',
      columns: {
        archive: 'the archive, `schema.table`',
        day: 'the archive\'s `snapshot_date`',
        rows: 'the archive\'s rows of that day (0 once they are all removed)',
        writer: 'the last transaction (`pg_current_xact_id()`) that wrote or removed a row of the day: `pg_visible_in_snapshot(writer, s)` tells whether a reader in snapshot `s` saw the day as it is now',
      },
    },
    resource_state: {
      summary: 'where each resource stands',
      description:
        'A resource is what one job fetches: `metrics`, `tokens`, `screener`, `token/<slug>/snapshot`, `token/<slug>/history`, `token/<slug>/charts`, `token/<slug>/chart/<key>`, `token/<slug>/bundle`, ...',
      columns: {
        source: '`app` or `gateway`',
        resource: 'the resource, e.g. `tokens`, `screener`, `token/<slug>/history`, `token/<slug>/chart/<key>`',
        kind: 'the resource group, for status reports: `catalog`, `tokens`, `screener`, `snapshot`, `history`, `charts`, `bundle`, ...',
        last_attempt_at: 'when tesync last tried it',
        last_success_at: 'the last fetch written',
        verified_at: 'the last time it was confirmed current, by a fetch or by an unchanged marker',
        received_at:
          'when the response behind the last success was received (a 2xx written, or a 304), on the warehouse server\'s clock. A response of the resource received before it, whose write comes later, is superseded: nothing of it is written (the newest response wins, not the last commit). Null before the first such success.',
        status:
          '`ok`, `unchanged`, `partial`, `failed`, `invalid`, `rate_limited`, `skipped`, `unauthorized`, `no_credits`, `missing_scope`, `not_materialized`, `not_found` (upstream answered 404 `token_not_found` / `chart_not_found`; not asked again until its token list or chart catalog says it exists again)',
        last_error: 'the last failure\'s message, for people (`<error class>: <message>`); for a resource written `partial`, why it is not whole (`incomplete: <sign>`, `<n> item(s) refused: <the first reason>`); count and group failures by `error_type`, `error_code`, `http_status`, never by this text',
        error_type: 'the last failure\'s error class: `ProblemError`, `UpstreamServerError`, `UpstreamTimeoutError`, `NotUnderstoodError`, ...; null after a success',
        error_code: 'the last failure\'s upstream problem code: `missing_scope`, `token-not-found`, `service-unavailable`, ...; null after a success',
        http_status: 'the last failure\'s upstream HTTP status, when an error response arrived; null after a success',
        bucket: 'the rate budget the job\'s requests go to (`app-public`, `app-key`, `gateway`), kept with a failure; null after a success',
        last_run_id: 'the run that last fetched it',
        freshness: 'change marker: the freshness the last successful fetch saw',
        as_of: 'change marker: the `asOf` the last successful fetch saw',
        hash: 'change marker: the hash of the body the last successful fetch saw',
        etag: 'change marker: the `ETag` of the one response the last successful fetch read (null when it read several, or upstream sent none); the next fetch sends it as `If-None-Match`, and a 304 confirms the resource without writing',
        row_count: 'rows the last fetch wrote, across the tables it writes',
        consecutive_failures: 'failures in a row since the last success',
        details:
          'per resource: e.g. the last history day seen (`lastTs`), the history\'s `form`, counts of unreadable cells, a screener\'s rows counted by upstream\'s freshness verdict (`freshness`, e.g. `{"fresh": 11, "stale": 1}`), for a list not proven whole why, naming the sign (`incomplete`, e.g. `"header X-Total-Count = 4, 2 items read"`: the resource is `partial` and removed nothing), for items of a list or rows of a chart refused alone (a string Postgres cannot store exactly) how many (`refusedItems`) and the first 20 reasons naming item and field (`refused`), and for a failure the upstream problem\'s `code`, `status`, `instance`, `requestId`, `detail` and `path` in `details->\'problem\'`',
        active: 'whether tesync tracks the resource: false once a complete list no longer plans it (its token delisted, a chart gone from its catalog, a history period no longer configured, a coverage flag dropped; with the resources it planned), left out of `tesync status` and `analytics.data_age`; true again when it is asked again',
      },
      notes:
        'A failure is also kept as data, cleared by the next success: `error_type`, `error_code`, `http_status` and `bucket`; an upstream problem\'s `code`, `status`, `instance`, `requestId`, `detail` and `path` are in `details->\'problem\'`, for both sources.',
    },
    contract_changes: {
      summary: 'upstream contract drift',
      description:
        'One row per change upstream made to what it sends; `change` tells the two kinds apart. `change = \'openapi\'`: the gateway\'s `/openapi-product.json` differs from the previous copy. `change = \'fields\'`: field names appeared on, or disappeared from, a kind of resource (see `sync.resource_fields`).',
      columns: {
        id: 'the change, numbered in the order detected',
        run_id: 'the run that noticed it',
        source: '`app` or `gateway`',
        change: '`openapi` or `fields`',
        path: 'for `openapi`, the document\'s path; for added fields, the response that showed them first (its body is in `sync.raw_responses` under the same `source`, `path`, `sha256`); null for removed fields',
        detected_at: 'when tesync noticed the change',
        previous_sha256: 'for `openapi`, the previous copy\'s hash',
        sha256: 'for `openapi`, the document\'s hash; for added fields, the hash of the response that showed them first; null for removed fields',
        added_paths: 'for `openapi`, the API paths added',
        removed_paths: 'for `openapi`, the API paths removed',
        kind: 'for `fields`, the kind of resource: a route name, e.g. `app.history`, `gateway.screener`',
        added_fields: 'for `fields`, the field names that appeared',
        removed_fields: 'for `fields`, the field names that disappeared',
        details:
          'for `openapi`: paths whose operations changed, other changed sections, both versions; for removed fields: `absentFromRuns` (the two runs they were missing from) and `responses` (responses of the kind per run, the measure of how much each run fetched)',
      },
      notes:
        'Every such row is also logged once, at warn level, with "drift" in the message. Unknown fields are never an error: they stay in the rows\' `payload`.',
    },
    resource_fields: {
      summary: 'the field names each kind of resource carries',
      description:
        'A field is a dotted path of an object member of the response\'s `data` (of each item when `data` is a list), two levels deep: `token.slug`, `row.multiples`; members of array elements are merged under `[]`: `streams[].key`. Objects whose keys are data are listed but not entered: `rows`, `data` (table rows, chart points) and `sections`, objects with a key that is not an identifier of at most 64 characters (`30d`, a date, a slug with `-`), with more than 48 keys, or whose members are all tables (history keyed by stream).',
      columns: {
        source: '`app` or `gateway`',
        kind: 'the route name: `app.tokens`, `app.history`, `gateway.token`, ...',
        field: 'the dotted path: `row.multiples`, `streams[].key`',
        first_seen_at: 'when a response first carried it',
        first_run_id: 'the run that first saw it',
        last_seen_at: 'when a response last carried it',
        last_seen_run_id: 'the run that last saw it',
        removed_at: 'set when the field was missing from every response of the kind in two runs in a row; cleared when it comes back',
      },
      notes:
        'Rules: the first run that receives a kind is its baseline (its fields are not drift). A field first seen in a later run is recorded added. A field is recorded removed when the kind is next received after two consecutive runs that received the kind without it in any response, provided one of those two fetched at least as many distinct responses of the kind (`sync.requests`) as the run that last saw the field, so a `--token` run or a run that skipped unchanged resources does not count as an absence. A field recorded removed that comes back is recorded added again.',
    },
    resource_kinds: {
      summary: 'kinds of resource received',
      columns: {
        source: '`app` or `gateway`',
        kind: 'the route name, e.g. `app.history`, `gateway.screener`',
        first_seen_at: 'when a response of the kind was first received',
        baseline_run_id: 'the run whose fields are the baseline: fields first seen in it are not drift',
        last_seen_at: 'when the newest of `recent_run_ids` first received the kind',
        recent_run_ids: 'the last three runs that received the kind, newest first: removals are judged on the two before the newest',
      },
    },
    upstream_bindings: {
      summary: 'the upstream each source mirrors',
      description:
        'One row per source, written by the first sync of that source into this warehouse: the base URL it synced, as scheme, host, port and path (never a key, a query or userinfo), or `simulator` for `tesync demo`\'s bundled simulator, whatever port it ran on. `tesync sync`, `worker`, `enqueue` and `demo` compare their configured upstream with it before they write anything, and refuse another one (exit 2, naming both) unless `--force` rebinds the source; every change is kept in `sync.upstream_binding_log`.',
      columns: {
        source: '`app` or `gateway`',
        upstream: 'the upstream, canonical: lower-case scheme and host, the port unless it is the scheme\'s default, the path without trailing slashes (`https://app.example.com`, `http://127.0.0.1:8080/te`); `simulator` for the demo\'s simulator',
        scheme: '`http` or `https`; null for the simulator',
        host: 'the host name or address, lower-case; null for the simulator',
        port: 'the port, the scheme\'s default (80, 443) when the URL gave none; null for the simulator',
        path: 'the base path without trailing slashes, empty for none; null for the simulator',
        bound_at: 'when this binding was written, on the warehouse server\'s clock',
        event: 'how it came to be: `bound` (the first sync of the source), `adopted` (data synced by a release of tesync that did not record upstreams: bound to what the command was configured with), `rebound` (`--force`)',
        command: 'the command that wrote it: `sync`, `worker`, `enqueue`, `demo`',
      },
    },
    upstream_binding_log: {
      summary: 'every binding and rebinding of a source',
      description:
        'Append-only: a row each time `sync.upstream_bindings` is written, so a rebinding (`--force`) says when it happened, from what and to what.',
      columns: {
        id: 'the event, numbered in the order written',
        source: '`app` or `gateway`',
        event: '`bound`, `adopted` or `rebound`, as in `sync.upstream_bindings.event`',
        at: 'when, on the warehouse server\'s clock',
        from_upstream: 'the upstream the source was bound to before (`simulator` for the demo\'s); null when none was recorded',
        to_upstream: 'the upstream it is bound to since',
        command: 'the command that wrote it: `sync`, `worker`, `enqueue`, `demo`',
        host: 'the machine it ran on (its host name)',
      },
    },
    rate_budgets: {
      summary: 'the rate budget worker processes share without Redis',
      description:
        'One row per rate-limit bucket of each budget kept in the warehouse rather than in Redis: what every process sharing the budget decides on before it sends a request, so that together they stay within upstream\'s limits, and a `Retry-After` one of them receives holds back all of them. Bookkeeping for tesync rather than data: rows change several times per request, and one nobody wrote for a day is removed.',
      columns: {
        prefix: 'the budget: the processes that share one use the same prefix; independent budgets in one warehouse use different ones',
        bucket: 'the rate budget: `app-public`, `app-key`, `gateway`',
        record:
          'the bucket\'s state as tesync\'s rate budget keeps it: in `state`, what upstream\'s last response said of the budget (`remaining`, `limit`, `resetAtMs`), a block until `blockedUntilMs` (a `Retry-After`) and its `blockReason`, and the window learned from a host that sends no reset time; in `leases`, the requests granted and not answered yet, each with the instant its slot frees itself if its process never answers. Instants are milliseconds since 1970 on the warehouse server\'s clock',
        version: 'how many times the row was written: a write takes place only if the row is still at the version its process read',
        updated_at: 'when the row was last written, on the warehouse server\'s clock',
        expires_at: 'when the row stops counting and is removed unless written again (a day after `updated_at`)',
        written_by: 'the process and write that wrote the row last (an identifier of tesync\'s own)',
      },
    },
    ...NOTIFICATION_TABLES,
  },
  functions: {
    ...NOTIFICATION_FUNCTIONS,
    'keep_version()':
      'The trigger function that keeps the versions: before an UPDATE or DELETE on a versioned table `T` of `app` or `gateway`, it copies the old row into `T_history`, held from its `fetched_at` until the write\'s known time (`known_at()`), with the body that replaced or removed it (`closing_raw_response_id`); the new row starts where the old version ends. A row the same transaction wrote held at no instant and makes no version. The newest response wins, not the last commit: a write whose known time is earlier than the current row\'s `fetched_at` (a writer that took its known time first and committed last) leaves the row as it is and is placed in the history where its known time puts it (`place_version`); a removal so leaves the key absent from its known time until the newer row began. An older release\'s mending move (a later start, exactly where the key\'s history ends, nothing else changed) makes no version. Not for calling.',
    'start_after_history()':
      'The trigger function that keeps a key\'s current row after its history: once per INSERT statement on a versioned table `T` of `app` or `gateway`, an inserted row whose `fetched_at` is earlier than the end of its key\'s last version in `T_history` (a writer that took its known time before another removed the key, and inserted it after; or a backdated insert) is an older write: it is placed in the history where its known time puts it (`place_version`) and leaves `T`, which stays as the newer writer left it. Nothing is dropped. Reads only the versions still held after the earliest inserted row\'s start, through the `T_history_no_overlap` index. Its arguments are the key\'s columns. Not for calling.',
    'place_version(schema_name text, table_name text, key_columns text[], key_row jsonb, version jsonb, "at" timestamptz, closing bigint)':
      'Places an older write of one key in `T_history` where its known time `at` puts it: the version holding at `at` now ends there (closed by `closing`, the older write\'s body) and `version` (null for a removal) holds from `at` until that version used to end; when the key was absent at `at`, until its next version or current row begins. A version the same transaction placed at `at` is replaced. Called by `keep_version` and `start_after_history`; not for calling.',
    'server_clock()':
      'Known time\'s clock: the warehouse server\'s `clock_timestamp()`, the one clock every tesync writer shares (plus the `tesync.clock_offset` setting, an interval, which tests set to run syncs days apart).',
    'known_at()':
      'The known time of the current write: the instant `begin_write` took for this transaction, else the transaction\'s start on `server_clock`. The default of every `fetched_at`, `first_seen_at` and `last_seen_at`.',
    'begin_write(closing_body bigint, resource text, "at" timestamptz)':
      'Starts a writing transaction: with `resource` (`<source>/<resource>`, e.g. `app/tokens`), first waits for any other write of that resource to end (a lock held until this one ends), so that writes of one resource commit in the order of their known times; then holds the write barrier (shared) until it ends, takes `server_clock()` as its known time, and names the archived body whose answer closes the rows it removes. Returns the known time. Run first in every transaction tesync writes rows in; `resource` defaults to null (no resource lock). `at` (default null) is a known time given instead of the clock\'s: only `tesync replay` gives one, the known time the write record kept for the write it repeats.',
    'set_closing_body(closing_body bigint)':
      'Names the archived body (`sync.raw_responses.id`) whose answer closes the rows the next statements of this transaction remove; null for none. `begin_write` calls it.',
    'closing_body()':
      'The archived body the current transaction named with `set_closing_body` (or `begin_write`), or null: what a removed row\'s version links to as `closing_raw_response_id`.',
    'pass_write_barrier()':
      'Takes the write barrier alone for the rest of the transaction, which waits until every write holding it (every `begin_write` transaction) has committed, and returns `server_clock()`: every write known before that instant is then visible. The daily archives\' fill runs after it.',
    'primary_key(t regclass)':
      'A table\'s primary key columns, in the key\'s order: what the versions and the daily archives take a table\'s key from.',
    'fill_daily_archive(archive regclass, source regclass, universe regclass, at timestamptz)':
      'Fills a daily archive (`app.screener_daily`, `app.token_snapshots_daily`, `gateway.screener_daily`) for each UTC day from the last one archived through the day of `at`: `source`\'s rows of each token `universe` listed at the day\'s end, as known then (`source_as_of`); archived rows no longer known at their day\'s end leave. Run by tesync after each run, after `pass_write_barrier()`.',
    'count_archive_days()':
      'The statement trigger function on each daily archive that keeps `sync.archive_days`: per day, the rows a statement added or removed (from its transition tables), and the statement\'s transaction as the day\'s last writer; a `TRUNCATE` sets every day of the archive to 0 rows. Not for calling.',
    'track_archive_days(schema_name text, table_name text, day_column text)':
      'Puts the `count_archive_days` triggers on a daily archive and, when `sync.archive_days` holds none of its days yet, counts them from the archive as it is. Run by the migrations for every daily archive.',
    'keep_history(schema_name text, table_name text)':
      'Makes a table versioned, from the table itself: creates `T_history` with `T`\'s columns and the version\'s (`known_from`, `known_to`, `closing_raw_response_id`) if it is missing, adds a column `T` gained (nullable) and follows a changed type or a dropped NOT NULL, adds the key-and-time index and one beside each of `T`\'s indexes, then the triggers (`keep_version` before an UPDATE or DELETE, `start_after_history` after each INSERT statement), the constraint (`enforce_versions`) and `T_as_of` (`create_as_of`). On a table that had no `start_after_history` yet, it first moves a row an earlier release left starting inside its key\'s history to where that history ends. Run by the migrations for every versioned table.',
    'enforce_versions(schema_name text, table_name text, key_columns text[])':
      'Adds `T_history`\'s exclusion constraint (`T_history_no_overlap`: one key, no overlapping `[known_from, known_to)`), once, after cutting versions a release before it left overlapping; its GiST index holds the period first, then the key, and is what `T_as_of` finds the versions holding at an instant through (an earlier release\'s key-first constraint is rebuilt so). Run by the migrations.',
    'keep_bodies()':
      'The trigger function that refuses `DELETE` and `TRUNCATE` on `sync.raw_responses`: versions link to its bodies. Not for calling.',
    'changes(tbl regclass, from_at timestamptz, to_at timestamptz)':
      'Every change of the versioned table `tbl` (a table of `app` or `gateway`, the daily archives aside) known in (`from_at`, `to_at`], in the order it became known, one row each: `change_type` (`insert`, `update`, `delete`); `key`, the key\'s columns as jsonb (one function serves every table, so it cannot return each table\'s own key columns: `T_changes` returns the same); `known_at`, the change\'s known time; `run_id` and `raw_response_id`, the run that wrote the version the change began and the body it was read from (for a delete, the body that no longer carried the row and the run that first received it); `before` and `after`, the row\'s columns as jsonb (numbers exact), null where the key had no row; `changed`, the columns whose values differ, in the table\'s order, the bookkeeping columns (`fetched_at`, `run_id`, `raw_response_id`, `last_seen_at`) aside (every other column for an insert or a delete); `data_time`, the row\'s `ts` in a table that is a series of points, else null; `revision`, whether it is an update or delete of a value whose `data_time` is before `from_at`. Read from the versions: the changes carry `T_as_of(from_at)` to `T_as_of(to_at)`. An instant written as a literal needs its type (`timestamptz \'2026-12-01 00:00Z\'`): a bare literal could be a run id too.',
    'changes(tbl regclass, run_a uuid, run_b uuid)':
      'The changes of `tbl` between the ends of two runs: `changes(tbl, run_end(run_a), run_end(run_b))`, those that became known after `run_a` finished and by the time `run_b` did.',
    'changes_net(tbl regclass, from_at timestamptz, to_at timestamptz)':
      'One row per key of `tbl` whose row differs between `T_as_of(from_at)` and `T_as_of(to_at)`, bookkeeping columns aside, in the columns of `changes`: `before` the row at `from_at`, `after` the row at `to_at`, `change_type` what the interval did to the key as a whole, `changed` the columns that differ; `known_at`, `run_id`, `raw_response_id` and `data_time` those of its last change. A value changed and changed back, or a row inserted and removed again, is not listed.',
    'changes_net(tbl regclass, run_a uuid, run_b uuid)':
      'The net changes of `tbl` between the ends of two runs: `changes_net(tbl, run_end(run_a), run_end(run_b))`.',
    'revisions(tbl regclass, from_at timestamptz, to_at timestamptz)':
      'The revisions of `tbl` in (`from_at`, `to_at`]: the rows of `changes` with `revision`, updates and deletes of values whose data time (`ts`, in the tables that are series of points) is before `from_at`. What a backtest deciding at `from_at` would have read otherwise, had it read the table later: the look-ahead of a backtest that reads the current tables. A point that arrives late for an earlier day is an insert, not a revision (nothing of it was known before); a row of a table without a data time is about the instant its response describes, and a change of it is a new observation.',
    'revisions(tbl regclass, run_a uuid, run_b uuid)':
      'The revisions of `tbl` between the ends of two runs: `revisions(tbl, run_end(run_a), run_end(run_b))`.',
    'change_summary(from_at timestamptz, to_at timestamptz)':
      'Per versioned table (`table_name`, as `schema.table`, in name order), its `inserts`, `updates`, `deletes` and `revisions` in (`from_at`, `to_at`], as `changes` lists them; a table with none has its row of zeros.',
    'change_summary(run_a uuid, run_b uuid)':
      'The summary of the changes between the ends of two runs: `change_summary(run_end(run_a), run_end(run_b))`.',
    'run_end(run uuid)':
      'The end of a run (`sync.runs.finished_at`): the instant a bound given as a run id stands for. Refuses a run that is not in `sync.runs`, or has not finished.',
    'changes_function(tbl regclass)':
      'The name of the versioned table `tbl`\'s `T_changes` function, which `changes` calls; refuses a table that is not versioned.',
    'create_changes(schema_name text, table_name text, data_time text, bookkeeping text)':
      'Creates or replaces the function `table_name_changes(from_at timestamptz, to_at timestamptz)` of a versioned table, from its columns in their stored order and its key, with its data-time column (`data_time`; empty when it has none) and the bookkeeping columns left out of `changed` (`bookkeeping`, comma-separated): a SQL query over the table and its history that finds the versions touching the interval through `T_history_no_overlap` and each one\'s predecessor through the key\'s index. Run by the migrations for every versioned table.',
    'create_as_of(schema_name text, table_name text)':
      'Creates or replaces the function `table_name_as_of(at timestamptz)` of a versioned table, from its columns in their stored order: a SQL function Postgres inlines into the query that calls it, so that an as-of read uses the indexes as a plain read does. Run by the migrations.',
  },
};
