// A run always ends (issue 44): whatever an error says, what tesync records of it can be
// written (no U+0000, no unpaired surrogate, a few hundred characters, never a query's
// parameters), and a run whose full record cannot be written is closed with the least one
// before the command reports the failure. On real Postgres, with a real failed query.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { performSync } from '../../../src/cli/sync-session.ts';
import { closeRun } from '../../../src/engine/run/close-run.ts';
import { walkFailure } from '../../../src/engine/run/run-stats.ts';
import { emptyStats, type WalkStats } from '../../../src/ports/run-ledger.ts';
import { loadConfig } from '../../../src/lib/config.ts';
import { WarehouseError } from '../../../src/lib/errors.ts';
import { judgeFailure } from '../../../src/lib/failure.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { MESSAGE_CHARS, RECORD_CHARS } from '../../../src/lib/recordable.ts';
import { runs } from '../../../src/schema/warehouse/sync.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { writeFailure } from '../../../src/store/books/resource-state.ts';
import { finishRun, markInterrupted, startRun } from '../../../src/store/books/runs.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';
import { createTestLogger, withServerClockOffset } from '../../helpers/services.ts';

/** True when `s` holds U+0000 or a surrogate not part of a pair: what Postgres refuses. */
const unrecordable = (s: string) => /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

interface RunRow {
  status: string;
  error: string | null;
  stats: unknown;
  finished: boolean;
  /** Seconds between finished_at and the server's now(). */
  age: number | null;
}

describe('a run always ends', () => {
  const w = useTestWarehouse();
  /** A parameter value of the failed query: it must never be stored or printed. */
  const canary = `param_canary_${randomBytes(6).toString('hex')}`;
  let failedInsert: unknown;

  beforeAll(async () => {
    // The failure of issue 44: an insert of a string holding U+0000 into a text column.
    failedInsert = await w.db
      .insert(runs)
      .values({ id: randomUUID(), trigger: 'a\u0000b', sources: [canary], options: { note: canary }, status: 'running' })
      .then(() => undefined, (err: unknown) => err);
  });

  const run = async (id: string): Promise<RunRow | undefined> =>
    (
      await w.query<RunRow>(
        sql`select status, error, stats, finished_at is not null as finished, extract(epoch from now() - finished_at)::float8 as age from sync.runs where id = ${id}`,
      )
    )[0];
  const open = async (trigger = 'cli') => {
    const id = randomUUID();
    await startRun(w.db, { id, trigger, sources: ['app'] });
    return id;
  };

  it('the failed insert is a real one: drizzle\'s error, its message holding the parameters and the NUL', () => {
    expect(failedInsert).toBeInstanceOf(Error);
    const e = failedInsert as Error & { params?: unknown; cause?: { code?: string } };
    expect(e.message).toContain(canary);
    expect(e.message).toContain('\u0000');
    expect(Array.isArray(e.params)).toBe(true);
    expect(e.cause?.code).toBe('22021');
  });

  it('judgeFailure, writeFailure and finishRun record it without NUL, within bounds, without parameters; the run closes', async () => {
    const failure = judgeFailure(failedInsert);
    expect(failure.type).toBe('PostgresError');
    expect(failure.message).toBe('PostgresError: invalid byte sequence for encoding "UTF8": 0x00');
    expect(failure.message.length).toBeLessThanOrEqual(MESSAGE_CHARS);

    const runId = await open();
    await writeFailure(w.db, { source: 'app', resource: 'token/x/history', kind: 'history', runId, at: new Date(), failure: { ...failure, bucket: 'app-public' } });
    const [state] = await w.query<{ last_error: string; error_type: string }>(
      sql`select last_error, error_type from sync.resource_state where source = 'app' and resource = 'token/x/history'`,
    );
    expect(state?.last_error).toBe(failure.message);
    expect(state?.error_type).toBe('PostgresError');

    const stats: WalkStats = { ...emptyStats(), planned: 1, failed: 1, failures: [walkFailure({ name: 'app.history', source: 'app' }, 'token/x/history', failure)] };
    await finishRun(w.db, runId, { status: 'failed', stats, error: failure.message });
    const row = await run(runId);
    expect(row).toMatchObject({ status: 'failed', finished: true, error: failure.message });
    const stored = JSON.stringify(row?.stats);
    expect((row?.stats as WalkStats).failures[0]?.error).toBe(failure.message);
    for (const text of [state!.last_error, row!.error!, stored]) {
      expect(unrecordable(text)).toBe(false);
      expect(text).not.toContain(canary);
      expect(text).not.toContain('params:');
    }
  });

  it('finishRun makes a raw error and stats recordable itself: NUL, lone surrogates and 4 KB still close the run', async () => {
    const raw = (failedInsert as Error).message;
    const runId = await open();
    const stats = { ...emptyStats(), failed: 1, failures: [{ job: 'app.tokens', resource: 'tokens\ud800', error: `${raw}\ud83d ${'x'.repeat(4000)}` }], 'key\u0000': 1 };
    await finishRun(w.db, runId, { status: 'partial', stats, error: `${raw}${'y'.repeat(4000)}` });
    const row = await run(runId);
    expect(row).toMatchObject({ status: 'partial', finished: true });
    expect(row!.error!.length).toBeLessThanOrEqual(RECORD_CHARS);
    expect(row!.error).toContain('\\u0000');
    const failures = (row!.stats as WalkStats).failures;
    expect(failures[0]!.error.length).toBeLessThanOrEqual(RECORD_CHARS);
    expect(failures[0]!.resource).toBe('tokens\\ud800');
    expect(Object.keys(row!.stats as object)).toContain('key\\u0000');
  });

  it('stats that cannot be serialised: closed again with the least record, then the failure is thrown', async () => {
    const runId = await open();
    const closing = finishRun(w.db, runId, { status: 'partial', stats: { ...emptyStats(), rows: 10n } });
    await expect(closing).rejects.toBeInstanceOf(WarehouseError);
    await expect(closing).rejects.toThrow(`could not record the end of run ${runId}`);
    const row = await run(runId);
    expect(row).toMatchObject({ status: 'partial', finished: true, stats: {} });
    expect(row!.error).toMatch(/^the first close failed \(TypeError: .*BigInt.*\): closed without its stats$/);
    expect(Math.abs(row!.age!)).toBeLessThan(60);
  });

  it('a statement Postgres refuses: the least record is written, on the server\'s clock; the error thrown names no parameter', async () => {
    const runId = await open();
    // A constraint of this database refuses this run's stats: the full close fails in Postgres
    // itself (a DrizzleQueryError listing the stats as a parameter), the least record passes.
    await w.query(sql.raw(`alter table sync.runs add constraint refuse_stats_${runId.replace(/-/g, '')} check (id <> '${runId}' or stats = '{}'::jsonb) not valid`));
    // Through a connection whose server clock is 3 days behind: the close is stamped with it.
    const behind = await openWarehouse({ databaseUrl: withServerClockOffset(w.databaseUrl, '-3 days'), dataDir: '', maxConnections: 1 });
    let thrown: unknown;
    try {
      await finishRun(behind.db, runId, { status: 'succeeded', stats: { ...emptyStats(), note: canary } }).catch((err: unknown) => {
        thrown = err;
      });
    } finally {
      await behind.close();
    }
    expect(thrown).toBeInstanceOf(WarehouseError);
    const message = (thrown as Error).message;
    expect(message).toMatch(/could not record the end of run .*: closed succeeded without its stats/);
    expect(message).toContain('PostgresError');
    expect(message).not.toContain(canary);
    expect(message.length).toBeLessThanOrEqual(RECORD_CHARS);
    const row = await run(runId);
    expect(row).toMatchObject({ status: 'succeeded', finished: true, stats: {} });
    expect(row!.error).toMatch(/^the first close failed \(PostgresError: .*refuse_stats.*\): closed without its stats$/);
    expect(row!.error).not.toContain(canary);
    // 3 days behind the server's own now(): its clock (with the offset), not this process's.
    expect(row!.age).toBeGreaterThan(3 * 86_400 - 60);
    expect(row!.age).toBeLessThan(3 * 86_400 + 60);
  });

  it('an interrupted run closed with the least record ends at its signal', async () => {
    const runId = await open();
    await markInterrupted(w.db, runId, 'SIGINT');
    await expect(finishRun(w.db, runId, { status: 'interrupted', stats: { n: 1n }, error: 'interrupted by SIGINT' })).rejects.toThrow(WarehouseError);
    const [row] = await w.query<{ status: string; error: string; at_signal: boolean }>(
      sql`select status, error, finished_at = (options->'interrupted'->>'at')::timestamptz as at_signal from sync.runs where id = ${runId}`,
    );
    expect(row).toMatchObject({ status: 'interrupted', at_signal: true });
    expect(row!.error).toMatch(/^the first close failed \(TypeError: .*\): closed without its stats; interrupted by SIGINT$/);
  });

  it('when even the least record is refused, the error says so and the run is left for the abandoned-run closers', async () => {
    const runId = await open();
    await w.query(sql.raw(`alter table sync.runs add constraint keep_running_${runId.replace(/-/g, '')} check (id <> '${runId}' or status = 'running') not valid`));
    const closing = finishRun(w.db, runId, { status: 'failed', stats: emptyStats() });
    await expect(closing).rejects.toThrow(/could not close run .* \(PostgresError: .*\), nor without its stats \(PostgresError: .*\): it stays running until found abandoned/);
    expect(await run(runId)).toMatchObject({ status: 'running', finished: false });
  });

  it('closeRun: requests that cannot be counted still close the run, with its stats, then it throws', async () => {
    const runId = await open();
    const failing: Warehouse = { ...w, query: () => Promise.reject(failedInsert) };
    const stats: WalkStats = { ...emptyStats(), planned: 2, done: 1, failed: 1, rows: 5 };
    const log = createTestLogger();
    const closing = closeRun(failing, runId, stats, { requestsRetentionDays: 0, logger: log.logger });
    await expect(closing).rejects.toThrow(WarehouseError);
    await expect(closing).rejects.toThrow(/closed partial, but its requests could not be counted \(PostgresError: invalid byte sequence/);
    const row = await run(runId);
    expect(row).toMatchObject({ status: 'partial', finished: true, stats: { done: 1, failed: 1, rows: 5 } });
    expect(row!.error).toMatch(/^its requests could not be counted \(PostgresError: /);
    expect(row!.error).not.toContain(canary);
  });

  it('tesync sync: a walk that breaks (its last progress report throws) closes its run failed before the error is thrown', async () => {
    const runId = randomUUID();
    const broke = new Error('the progress display broke\u0000');
    // Only the report at the walk's end (called from performSync itself, not from its ticker):
    // the same path as a request log that cannot be flushed at the end.
    const onProgress = () => {
      if (new Error().stack?.includes('performSync')) throw broke;
    };
    const sync = performSync(loadConfig({}), createTestLogger().logger, w, { sources: [], trigger: 'test', runId, onProgress });
    await expect(sync).rejects.toBe(broke);
    expect(await run(runId)).toMatchObject({ status: 'failed', finished: true, error: 'the walk stopped: Error: the progress display broke\\u0000' });
  });

  it('the logger drops the query\'s parameters: the driver\'s message, its SQLSTATE, the start of the SQL', () => {
    const chunks: string[] = [];
    const destination = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString('utf8')), cb()) });
    for (const level of ['info', 'debug']) {
      chunks.length = 0;
      createLogger({ level, secrets: [], destination }).error({ err: failedInsert }, 'write failed');
      const line = chunks.join('');
      expect(line).not.toContain(canary);
      expect(line).not.toContain('params');
      const err = (JSON.parse(line) as { err: Record<string, string> }).err;
      expect(err.message).toBe('invalid byte sequence for encoding "UTF8": 0x00');
      expect(err.code).toBe('22021');
      expect(err.query).toMatch(/^insert into "sync"\."runs"/);
      expect(err.query!.length).toBeLessThanOrEqual(120);
      if (level === 'debug') expect(err.stack).toContain('PostgresError');
    }
  });
});
