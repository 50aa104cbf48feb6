// `tesync notify --test`: one test event POSTed to each TE_NOTIFY_URL now, signed as every
// notification is, and what each endpoint answered, so that a receiver is checked before an
// event has to reach it (as Fivetran checks a webhook with a test POST). Nothing is recorded:
// the outbox and its order are left as they are. Exit 0 when every endpoint answered 2xx.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { sendTest, type PostAnswer } from '../runners/notify/deliver.ts';
import { openWarehouse } from '../store/connection.ts';
import { UsageError, type CommandContext } from './context.ts';

const HELP = `Usage: tesync notify --test [--json]

Sends a test event (type custom_test) to each TE_NOTIFY_URL now, signed with
TE_NOTIFY_SECRET (X-Tesync-Signature), and says what each answered: its HTTP
status, how long it took, the start of its answer. Each endpoint is named by
its scheme, host and a hash of its URL, never by the URL. Exit 0 when every
endpoint answered 2xx, 1 otherwise, 2 when TE_NOTIFY_URL is not set. Nothing
is recorded: the events waiting in the outbox are left as they are.

  --test   send the test event (the one thing this command does)
  --json   the answers as JSON`;

export async function runNotify({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { test: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (!values.test) throw new UsageError('notify sends a test event: tesync notify --test');
  if (config.notify.urls.length === 0) {
    process.stderr.write('tesync: TE_NOTIFY_URL is not set: there is no endpoint to send to (docs/operations.md, "Alerts")\n');
    return 2;
  }
  // The event names the warehouse and its clock, as every event does.
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, databasePool: 2 });
  let at: Date;
  try {
    const [row] = await warehouse.query<{ now: string }>(sql`select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as now`);
    at = new Date(row!.now);
  } finally {
    await warehouse.close();
  }
  const event = { id: randomUUID(), type: 'custom_test', subject: 'test', occurredAt: at, source: null, group: null, runId: null, figures: { signed: Boolean(config.notify.secret) } };
  const answers = await sendTest({ urls: config.notify.urls, secret: config.notify.secret, warehouseName: warehouse.location, secrets: config.secrets, logger }, event);
  const ok = answers.every((a) => a.answer.delivered);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ id: event.id, signed: Boolean(config.notify.secret), endpoints: answers.map((a) => ({ endpoint: a.endpoint, ...a.answer })) }, null, 2)}\n`);
  } else {
    process.stdout.write(`Test event ${event.id}, ${config.notify.secret ? 'signed with TE_NOTIFY_SECRET' : 'unsigned: TE_NOTIFY_SECRET is not set'}:\n`);
    for (const a of answers) process.stdout.write(`  ${answerLine(a.endpoint, a.answer)}\n`);
  }
  return ok ? 0 : 1;
}

/** Pure: `https://hooks.example.com#1a2b3c4d: answered 200 in 143 ms: ok`. */
export function answerLine(endpoint: string, a: PostAnswer): string {
  const said = a.answer.replace(/\s+/g, ' ').trim();
  if (a.httpStatus === null) return `${endpoint}: ${a.error ?? 'no answer'} (${a.durationMs} ms)`;
  return `${endpoint}: answered ${a.httpStatus} in ${a.durationMs} ms${a.delivered ? '' : ' (not a 2xx: events are not delivered)'}${said ? `: ${said.slice(0, 80)}` : ''}`;
}

