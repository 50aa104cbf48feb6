// The outbox (issue 59 item 2), in the warehouse: an event is written by the statement that
// changes the state, in its transaction (a run's close, a contract change, a rebinding), or by
// sync.notify_transition for what only a read can see; only changes are told; and each
// endpoint takes its events in order, a failure holding the later ones back.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { finishRun, startRun } from '../../../src/store/books/runs.ts';
import { claimNext, fanOut, findLostWorkers, heartbeat, recordAttempt, tellTransition } from '../../../src/store/books/notifications.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const w = useTestWarehouse();

const events = async (subject?: string) =>
  w.query<{ id: string; type: string; subject: string; run_id: string | null; figures: Record<string, unknown> }>(
    sql`select id, type, subject, run_id, figures from sync.notifications ${subject ? sql`where subject = ${subject}` : sql``} order by seq`,
  );

async function run(status: 'succeeded' | 'partial' | 'failed' | 'interrupted', options: Record<string, unknown> = {}, stats: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  await startRun(w.db, { id, trigger: 'cli', sources: ['app', 'gateway'], options: { only: [], tokens: [], ...options } });
  await finishRun(w.db, id, { status, stats: { planned: 10, done: 8, failed: 2, rows: 5, failures: [{ job: 'app.history', resource: 'token/a/history', source: 'app', status: 'failed', type: 'ProblemError', httpStatus: 422, code: 'bad', error: 'ProblemError: x' }], ...stats } });
  return id;
}

describe('a run\'s end, told by its close', () => {
  it('a first success tells nothing; a failure, a partial and the first success after them each once; an interrupted run nothing', async () => {
    await run('succeeded');
    expect(await events('run:app+gateway')).toEqual([]);
    const failed = await run('failed');
    await run('failed');
    await run('interrupted');
    const partial = await run('partial');
    const recovered = await run('succeeded');
    await run('succeeded');
    const told = await events('run:app+gateway');
    expect(told.map((e) => [e.type, e.run_id])).toEqual([
      ['custom_run_failed', failed],
      ['custom_run_partial', partial],
      ['custom_run_recovered', recovered],
    ]);
    expect(told[0]!.figures).toMatchObject({ status: 'failed', previous: 'succeeded', trigger: 'cli', planned: 10, failed: 2, failures: [{ resource: 'token/a/history', http_status: 422, code: 'bad' }] });
    expect(told[2]!.figures).toMatchObject({ previous: 'partial' });
  });

  it('runs of a schedule, or of other sources and groups, are a walk of their own', async () => {
    await run('failed', { schedule: 'screener' });
    await run('failed', { only: ['history'] });
    expect((await events('run:schedule screener')).map((e) => e.type)).toEqual(['custom_run_failed']);
    expect((await events('run:app+gateway only history')).map((e) => e.type)).toEqual(['custom_run_failed']);
  });
});

describe('contract drift and rebinding, told by the rows that record them', () => {
  it('each contract change, and each rebinding (not a first binding)', async () => {
    await w.query(sql`insert into sync.contract_changes (source, change, path, detected_at, added_paths, removed_paths) values ('gateway', 'openapi', '/openapi-product.json', now(), '{/v1/new}', '{}')`);
    await w.query(sql`insert into sync.upstream_binding_log (source, event, from_upstream, to_upstream, command, host) values ('app', 'bound', null, 'simulator', 'demo', 'h'), ('app', 'rebound', 'simulator', 'https://app.example.com', 'sync', 'h')`);
    const told = await events();
    expect(told.filter((e) => e.type === 'custom_contract_drift').map((e) => [e.subject, e.figures.added_paths])).toEqual([['contract:gateway:openapi', ['/v1/new']]]);
    expect(told.filter((e) => e.type === 'custom_upstream_rebound').map((e) => e.figures)).toEqual([expect.objectContaining({ from: 'simulator', to: 'https://app.example.com', command: 'sync' })]);
  });
});

describe('transitions only', () => {
  it('a subject is told when its state changes, once however often it is judged', async () => {
    const t = (state: string) => tellTransition(w, { subject: 'overdue:app.history', state, quiet: 'on_time', types: { overdue: 'custom_group_overdue', on_time: 'custom_group_on_time' }, source: 'app', group: 'history' });
    expect(await t('on_time')).toBeNull();
    const first = await t('overdue');
    expect(first).not.toBeNull();
    expect(await Promise.all([t('overdue'), t('overdue'), t('overdue')])).toEqual([null, null, null]);
    expect(await t('on_time')).not.toBeNull();
    expect((await events('overdue:app.history')).map((e) => e.type)).toEqual(['custom_group_overdue', 'custom_group_on_time']);
  });

  it('a worker not seen for a while is lost, told once; one that stopped is not', async () => {
    await heartbeat(w, 'w1', { host: 'h', pid: 1 });
    expect(await findLostWorkers(w, 60_000)).toBe(0);
    await w.query(sql`update sync.alert_states set seen_at = seen_at - interval '10 minutes' where subject = 'worker:w1'`);
    expect(await findLostWorkers(w, 60_000)).toBe(1);
    expect(await findLostWorkers(w, 60_000)).toBe(0);
    expect((await events('worker:w1')).map((e) => [e.type, e.figures.worker, e.figures.host])).toEqual([['custom_worker_lost', 'w1', 'h']]);
  });
});

describe('delivery bookkeeping', () => {
  it('each endpoint takes its events in order; a failure holds the rest back until it is due; ten failures make it dead', async () => {
    const endpoint = 'http://receiver.test#00000000';
    await fanOut(w, [endpoint]);
    const first = (await claimNext(w, endpoint, 60_000))!;
    const all = await events();
    expect(first.id).toBe(all[0]!.id);
    // Taken: nobody else takes it, nor the one after it.
    expect(await claimNext(w, endpoint, 60_000)).toBeNull();
    expect(await recordAttempt(w, endpoint, first.id, { delivered: false, httpStatus: 500, durationMs: 3, error: 'answered 500', retryAfterMs: null }, 60_000, 10)).toBe('pending');
    expect(await claimNext(w, endpoint, 60_000)).toBeNull();
    await w.query(sql`update sync.notification_deliveries set next_attempt_at = now() - interval '1 second' where notification_id = ${first.id}`);
    const again = (await claimNext(w, endpoint, 60_000))!;
    expect([again.id, again.attempts]).toEqual([first.id, 1]);
    expect(await recordAttempt(w, endpoint, first.id, { delivered: true, httpStatus: 200, durationMs: 2, error: null, retryAfterMs: null }, 60_000, 10)).toBe('delivered');
    expect((await claimNext(w, endpoint, 60_000))!.id).toBe(all[1]!.id);
    await w.query(sql`update sync.notification_deliveries set attempts = 9, lease_until = null where notification_id = ${all[1]!.id}`);
    expect(await recordAttempt(w, endpoint, all[1]!.id, { delivered: false, httpStatus: null, durationMs: 10_000, error: 'no answer', retryAfterMs: null }, 60_000, 10)).toBe('dead');
    expect((await claimNext(w, endpoint, 60_000))!.id).toBe(all[2]!.id);
    const [log] = await w.query<{ log: unknown[] }>(sql`select log from sync.notification_deliveries where notification_id = ${first.id}`);
    expect(log!.log).toEqual([expect.objectContaining({ httpStatus: 500, error: 'answered 500' }), expect.objectContaining({ httpStatus: 200, error: null })]);
  });
});
