// The request log and raw archive, the one writer of sync.requests and sync.raw_responses:
// every attempt goes to sync.requests, every 2xx body to sync.raw_responses (identical bodies
// once, by hash), and so does a body a job refused (keepInvalidBody). Rows are batched so that
// logging does not slow the sync, and a failed write is logged and dropped: recording must
// never fail the sync it describes. What a record holds is the upstream client's
// (src/ports/recorder.ts).
//
// A body is kept exactly or not at all: as jsonb (a valid body), as text, or, where text cannot
// say it (a U+0000, bytes that are not UTF-8), as the bytes served (`body_bytes`); never with
// a character dropped or replaced. The other text columns are not data: a U+0000 or an
// unpaired surrogate in them (a problem code from upstream) is written as a visible escape.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { rawResponses, requests } from '../../schema/warehouse/sync.ts';
import type { Logger } from '../../lib/logger.ts';
import { bodyKey, type RawBody, type RequestRecord, type RequestRecorder, type ResponseRecord } from '../../ports/recorder.ts';
import { servedBodyHash } from '../../lib/hash.ts';
import { holdsExactly, visibleText } from '../../lib/pg-text.ts';
import type { Source } from '../../ports/sources.ts';
import type { Warehouse } from '../connection.ts';
import { SERVER_CLOCK, WarehouseClock } from '../warehouse-clock.ts';

export interface WarehouseRecorderOptions {
  /** Pending rows that trigger a write. */
  batchRows?: number;
  /** Longest a row waits before it is written. */
  flushIntervalMs?: number;
  /** Pending body characters that trigger a write (and the most one statement carries). */
  batchBodyChars?: number;
  /**
   * The process's reading of the warehouse's clock, whose offset places the times the client
   * measured (one of its own when not given). Its offset is read at most once a minute: the
   * times of requests sent within it are moved alike, so they keep the order and the gaps this
   * process measured (a reading per flush moved each batch by its own round trip's jitter, and
   * a request sent after a 503 had been read could be stored before it). A clock that steps is
   * still followed within a minute.
   */
  clock?: WarehouseClock;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT4_MAX = 2_147_483_647;

const int = (v: number | undefined | null): number | null => (v === undefined || v === null || !Number.isFinite(v) ? null : Math.min(INT4_MAX, Math.round(v)));
const uuidOrNull = (v: string | undefined): string | null => (v && UUID.test(v) ? v : null);
/** Text that is not data, readable and storable: U+0000 and unpaired surrogates as visible escapes. */
const pgText = visibleText;

/**
 * How a body is kept: `text` when Postgres text holds it exactly, else `bytes` (the bytes
 * served, or the UTF-8 of a text holding U+0000, which is those bytes).
 */
function bodyForm(text: string, bytes: Uint8Array | undefined): { text: string; bytes: null } | { text: null; bytes: Buffer } {
  if (bytes) return { text: null, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  if (holdsExactly(text)) return { text, bytes: null };
  // Only U+0000 can get here from the client (its text is decoded from UTF-8, no lone surrogates).
  return { text: null, bytes: Buffer.from(text, 'utf8') };
}

/** The JSON text jsonb reads: a byte-order mark is not part of the value. */
const jsonTextOf = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

export class WarehouseRecorder implements RequestRecorder {
  private pendingRequests: RequestRecord[] = [];
  private pendingResponses: ResponseRecord[] = [];
  private pendingChars = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly batchRows: number;
  private readonly flushIntervalMs: number;
  private readonly batchBodyChars: number;
  private readonly clock: WarehouseClock;

  constructor(
    private readonly warehouse: Pick<Warehouse, 'db'>,
    private readonly logger: Logger,
    options: WarehouseRecorderOptions = {},
  ) {
    this.batchRows = options.batchRows ?? 200;
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.batchBodyChars = options.batchBodyChars ?? 4 * 1024 * 1024;
    this.clock = options.clock ?? new WarehouseClock(warehouse.db);
  }

  request(r: RequestRecord): void {
    this.pendingRequests.push(r);
    this.scheduled();
  }

  response(r: ResponseRecord): void {
    this.pendingResponses.push(r);
    this.pendingChars += r.text.length;
    this.scheduled();
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const reqs = this.pendingRequests;
    const resps = this.pendingResponses;
    this.pendingRequests = [];
    this.pendingResponses = [];
    this.pendingChars = 0;
    if (reqs.length === 0 && resps.length === 0) return this.writing;
    // One write at a time, in order; a failure is contained in write().
    this.writing = this.writing.then(() => this.write(reqs, resps));
    return this.writing;
  }

  async rawResponseIds(source: Source, bodies: readonly RawBody[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const wanted = bodies.filter((b) => b.sha256 !== '');
    if (wanted.length === 0) return out;
    await this.flush();
    const want = new Set(wanted.map(bodyKey));
    try {
      const rows = await this.warehouse.db
        .select({ id: rawResponses.id, path: rawResponses.path, sha256: rawResponses.sha256 })
        .from(rawResponses)
        .where(and(eq(rawResponses.source, source), inArray(rawResponses.path, [...new Set(wanted.map((b) => pgText(b.path)))]), inArray(rawResponses.sha256, [...new Set(wanted.map((b) => b.sha256))])));
      for (const r of rows) if (want.has(bodyKey(r))) out.set(bodyKey(r), r.id);
    } catch (err) {
      this.logger.warn({ err }, 'could not look up archived bodies; rows keep no link to them');
    }
    return out;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private scheduled(): void {
    if (this.pendingRequests.length + this.pendingResponses.length >= this.batchRows || this.pendingChars >= this.batchBodyChars) {
      void this.flush();
      return;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
      this.timer.unref();
    }
  }

  private async write(reqs: RequestRecord[], resps: ResponseRecord[]): Promise<void> {
    // On the warehouse's clock, as every time in the warehouse (src/store/warehouse-clock.ts).
    let offsetMs = 0;
    if (!(await this.guard('request and response rows', async () => (offsetMs = await this.clock.offset())))) return;
    if (reqs.length > 0) {
      await this.guard(`${reqs.length} request rows`, () => this.insertRequests(reqs, offsetMs));
    }
    for (const chunk of chunkByChars(dedupe(resps), this.batchBodyChars)) {
      if (await this.guard(null, () => this.insertResponses(chunk, offsetMs))) continue;
      // One bad row (a body Postgres' jsonb refuses, say) must not take the batch with it.
      for (const [i, r] of chunk.entries()) {
        if (await this.guard(null, () => this.insertResponses([r], offsetMs))) continue;
        if (await this.guard(`raw response of ${r.path}`, () => this.insertResponses([r], offsetMs, true))) continue;
        // Not even as text: the warehouse itself is failing; do not hammer it row by row.
        if (i + 1 < chunk.length) this.logger.warn({ dropped: chunk.length - i - 1 }, 'could not record raw responses; dropped');
        break;
      }
    }
  }

  private async guard(what: string | null, fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      if (what) this.logger.warn({ err }, `could not record ${what}; dropped`);
      return false;
    }
  }

  private async insertRequests(rows: RequestRecord[], offsetMs: number): Promise<void> {
    await this.warehouse.db.insert(requests).values(
      rows.map((r) => ({
        runId: uuidOrNull(r.runId),
        source: r.source,
        bucket: r.bucket,
        method: 'GET',
        path: pgText(r.path),
        httpStatus: r.httpStatus,
        attempt: r.attempt,
        startedAt: this.clock.place(r.startedAt, offsetMs),
        durationMs: int(r.durationMs) ?? 0,
        bytes: int(r.bytes),
        rateLimitRemaining: int(r.rateLimitRemaining),
        rateLimitLimit: int(r.rateLimitLimit),
        retryAfterMs: int(r.retryAfterMs),
        problemCode: r.problemCode ? pgText(r.problemCode) : null,
        requestId: r.requestId ? pgText(r.requestId) : null,
        error: r.error ? pgText(r.error) : null,
      })),
    );
  }

  /** `asText`: store even a valid JSON body as text (when jsonb refuses it). */
  private async insertResponses(rows: PendingResponse[], offsetMs: number, asText = false): Promise<void> {
    if (rows.length === 0) return;
    await this.warehouse.db
      .insert(rawResponses)
      .values(
        rows.map((r) => {
          const form = bodyForm(r.text, r.bytes);
          // jsonb refuses \u0000 (and an unpaired surrogate: then the row is written again asText).
          const json = r.status === 'ok' && !asText && form.text !== null && !r.text.includes('\\u0000');
          return {
            runId: uuidOrNull(r.runId),
            source: r.source,
            path: pgText(r.path),
            fetchedAt: this.clock.place(r.fetchedAt, offsetMs),
            lastSeenAt: this.clock.place(r.lastSeenAt, offsetMs),
            httpStatus: r.httpStatus,
            contentType: r.contentType ? pgText(r.contentType) : null,
            sha256: r.sha256,
            // The text as received is valid JSON with its numbers exactly as upstream wrote them.
            body: json ? sql`${jsonTextOf(r.text)}::jsonb` : null,
            bodyText: json ? null : form.text,
            bodyBytes: json ? null : form.bytes,
            status: r.status,
          };
        }),
      )
      .onConflictDoUpdate({
        target: [rawResponses.source, rawResponses.path, rawResponses.sha256],
        set: { lastSeenAt: sql`greatest(${rawResponses.lastSeenAt}, excluded."last_seen_at")` },
      });
  }
}

type PendingResponse = ResponseRecord & { lastSeenAt: Date };

/** Identical bodies of one path once per statement (a statement may not update a row twice). */
function dedupe(rows: ResponseRecord[]): PendingResponse[] {
  const byKey = new Map<string, PendingResponse>();
  for (const r of rows) {
    const key = `${r.source}\u0000${r.path}\u0000${r.sha256}`;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { ...r, lastSeenAt: r.fetchedAt });
    else if (r.fetchedAt > seen.lastSeenAt) seen.lastSeenAt = r.fetchedAt;
  }
  return [...byKey.values()];
}

function* chunkByChars(rows: PendingResponse[], maxChars: number): Generator<PendingResponse[]> {
  let chunk: PendingResponse[] = [];
  let chars = 0;
  for (const r of rows) {
    if (chunk.length > 0 && (chars + r.text.length > maxChars || chunk.length >= 500)) {
      yield chunk;
      chunk = [];
      chars = 0;
    }
    chunk.push(r);
    chars += r.text.length;
  }
  if (chunk.length > 0) yield chunk;
}

/** A response a job read and refused: kept with its raw text, whatever its JSON said. */
export interface InvalidBody {
  source: Source;
  runId: string;
  path: string;
  httpStatus: number;
  contentType: string | null;
  text: string;
  /** The body as served, byte for byte, when `text` does not say it exactly (UpstreamResponse `raw`). */
  bytes?: Uint8Array | undefined;
}

/**
 * Keeps a refused body as `invalid` in its own hash space (the archive may hold the same bytes
 * as a valid body), stamped on the server's clock; seen again, it is only marked seen. Its
 * `sha256` is `invalid:` and the sha256 of the bytes served; the body is kept as text, or as
 * those bytes where text cannot hold it exactly.
 */
export async function keepInvalidBody(warehouse: Warehouse, b: InvalidBody): Promise<void> {
  const form = bodyForm(b.text, b.bytes);
  await warehouse.db
    .insert(rawResponses)
    .values({
      runId: uuidOrNull(b.runId),
      source: b.source,
      path: pgText(b.path),
      fetchedAt: SERVER_CLOCK,
      lastSeenAt: SERVER_CLOCK,
      httpStatus: b.httpStatus,
      contentType: b.contentType ? pgText(b.contentType) : null,
      sha256: `invalid:${servedBodyHash(b.text, b.bytes)}`,
      bodyText: form.text,
      bodyBytes: form.bytes,
      status: 'invalid',
    })
    .onConflictDoUpdate({ target: [rawResponses.source, rawResponses.path, rawResponses.sha256], set: { lastSeenAt: SERVER_CLOCK, runId: uuidOrNull(b.runId) } });
}
