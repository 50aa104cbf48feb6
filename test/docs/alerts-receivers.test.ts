// docs/operations.md, "Alerts": the receiver's check it shows in Node and in Python, run as
// written against a real signed delivery (an event of the outbox POSTed by the deliverer to a
// receiver of the test's own): each accepts it, and refuses it with its body changed by one
// byte, under another secret, or signed ten minutes ago (the replay window). The payload
// example there has the fields the code sends, in its order; every event type is in its table.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signature } from '../../src/lib/notify-signature.ts';
import { deliverPending } from '../../src/runners/notify/deliver.ts';
import { EVENT_TYPES, payloadOf } from '../../src/runners/notify/events.ts';
import { tellTransition } from '../../src/store/books/notifications.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { useTestWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';

const SECRET = 'the-receivers-secret-0123456789';
const doc = await import('node:fs').then((fs) => fs.readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8'));
const alerts = doc.split('\n## Alerts\n')[1]!.split('\n## ')[0]!;
const block = (lang: string) => new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\\n\`\`\``).exec(alerts)![1]!;

describe('the receiver\'s check in docs/operations.md', () => {
  const w = useTestWarehouse();
  let receiver: Receiver;
  let dir: string;
  let header: string;
  let body: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-receivers-'));
    await tellTransition(w, { subject: 'overdue:app.history', state: 'overdue', quiet: 'on_time', types: { overdue: 'custom_group_overdue' }, source: 'app', group: 'history', figures: { reason: 'data of token aurora is 3.0d old — by its newest history point' } });
    const sent = await deliverPending({ warehouse: w, urls: [receiver.url], secret: SECRET, warehouseName: 'Postgres at db:5432/tesync', secrets: [], logger: createTestLogger().logger });
    expect(sent.delivered).toBe(1);
    header = String(receiver.received[0]!.headers['x-tesync-signature']);
    body = receiver.received[0]!.body;
    writeFileSync(path.join(dir, 'verify.mjs'), `${block('js')}\n`);
    writeFileSync(path.join(dir, 'node-check.mjs'), "import { readFileSync } from 'node:fs';\nimport { verifyTesync } from './verify.mjs';\nconst [secret, header, file] = process.argv.slice(2);\nconsole.log(verifyTesync(secret, header, readFileSync(file, 'utf8')));\n");
    writeFileSync(path.join(dir, 'python-check.py'), `${block('python')}\n\nimport sys\nprint(verify_tesync(sys.argv[1], sys.argv[2], open(sys.argv[3], 'rb').read()))\n`);
  });
  afterAll(async () => {
    await receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const check = (secret: string, h: string, b: string) => {
    const file = path.join(dir, `body-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, b);
    return {
      node: execFileSync(process.execPath, [path.join(dir, 'node-check.mjs'), secret, h, file], { encoding: 'utf8' }).trim(),
      python: execFileSync('python3', [path.join(dir, 'python-check.py'), secret, h, file], { encoding: 'utf8' }).trim(),
    };
  };

  it('each accepts the delivery as received', () => {
    expect(body).toContain('—');
    expect(check(SECRET, header, body)).toEqual({ node: 'true', python: 'True' });
  });

  it('each refuses it changed by one byte, under another secret, or signed ten minutes ago', () => {
    expect(check(SECRET, header, body.replace('"version":1', '"version":2'))).toEqual({ node: 'false', python: 'False' });
    expect(check('another secret of the same length', header, body)).toEqual({ node: 'false', python: 'False' });
    const old = signature(SECRET, Math.floor(Date.now() / 1000) - 600, body);
    expect(check(SECRET, old, body)).toEqual({ node: 'false', python: 'False' });
  });

  it('the payload example has the fields sent, in their order; the table has every event type', () => {
    const example = JSON.parse(block('json')) as Record<string, unknown>;
    const sent = payloadOf({ id: 'x', type: 'custom_test', subject: 'test', occurredAt: new Date(), source: null, group: null, runId: null, figures: {} }, 'w');
    expect(Object.keys(example)).toEqual(Object.keys(sent));
    expect(Object.keys(JSON.parse(body) as object)).toEqual(Object.keys(sent));
    for (const type of EVENT_TYPES) expect(alerts, type).toContain(`| \`${type}\` |`);
  });
});
