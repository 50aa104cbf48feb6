// The embedded server keeps its port across restarts, so that a BI tool's saved connection keeps
// working: a server of the folder still stopping is waited for, not moved away from; and
// TE_EMBEDDED_PORT pins the port: kept to at every start, refused in one line naming the variable
// when another program holds it (or the folder's server runs on another), a bad value exit 2.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireEmbeddedServer, type EmbeddedServer } from '../../../src/store/server/embedded-server.ts';
import { runCli } from '../../helpers/cli.ts';
import { answers, embeddedFolder, isAlive, seededFolder, serverPids, type TempFolder } from '../../helpers/embedded.ts';
import { freePort } from '../../helpers/own-servers.ts';
import { patience } from '../../helpers/patience.ts';

/** A listener on 127.0.0.1:port, as another program would hold it. */
function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const savedPort = (dir: string) => Number(readFileSync(path.join(dir, 'postgres', 'port'), 'utf8').trim());
const portOf = (server: EmbeddedServer) => Number(/@127\.0\.0\.1:(\d+)\//.exec(server.url)![1]);
/** postmaster.pid: the pid (line 1) and the status (line 8). */
function postmaster(dir: string): { pid: number; status: string } {
  const lines = readFileSync(path.join(dir, 'postgres', 'data', 'postmaster.pid'), 'utf8').split('\n');
  return { pid: Number(lines[0]), status: (lines[7] ?? '').trim() };
}

describe('the embedded server keeps its port', () => {
  let folder: TempFolder | undefined;
  const listeners: Server[] = [];
  const held: EmbeddedServer[] = [];
  afterEach(async () => {
    for (const s of held.splice(0)) await s.release().catch(() => {});
    await Promise.all(listeners.splice(0).map((l) => new Promise((resolve) => l.close(resolve))));
    await folder?.cleanup();
    folder = undefined;
  });

  it('a server of the folder still stopping is waited for: the next start is on the same port, and answers', async () => {
    folder = await seededFolder('tesync-port-stopping');
    const first = await acquireEmbeddedServer(folder.dir);
    held.push(first);
    const port = portOf(first);
    // A client keeps a smart shutdown (SIGTERM) going: the server says `stopping` until it leaves.
    const client = postgres(first.url, { max: 1, onnotice: () => {} });
    await client`select 1`;
    const { pid } = postmaster(folder.dir);
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + patience(10_000);
    while (postmaster(folder.dir).status !== 'stopping' && Date.now() < deadline) await delay(20);
    expect(postmaster(folder.dir).status).toBe('stopping');

    let joined = false;
    const next = acquireEmbeddedServer(folder.dir).then((s) => {
      joined = true;
      held.push(s);
      return s;
    });
    // While the old server stops, the start waits (it neither joins a server that is going nor
    // moves to another port); the stop ends when the client leaves.
    await delay(500);
    expect(joined).toBe(false);
    await client.end({ timeout: 5 });
    const second = await next;
    // A server started afresh, not the one that was stopping.
    expect(postmaster(folder.dir).pid).not.toBe(pid);
    expect(portOf(second)).toBe(port);
    expect(savedPort(folder.dir)).toBe(port);
    expect(await answers(second)).toBe('tesync');
  });

  it('TE_EMBEDDED_PORT: the server starts on it whatever the folder saved, and keeps to it', async () => {
    folder = await seededFolder('tesync-port-pinned');
    const pinned = await freePort();
    expect(savedPort(folder.dir)).not.toBe(pinned);
    const server = await acquireEmbeddedServer(folder.dir, { port: pinned });
    held.push(server);
    expect(portOf(server)).toBe(pinned);
    expect(savedPort(folder.dir)).toBe(pinned);
    expect(await answers(server)).toBe('tesync');
    // Another command with the same pin joins it.
    const joining = await acquireEmbeddedServer(folder.dir, { port: pinned });
    held.push(joining);
    expect(joining.url).toBe(server.url);
    // One with another pin is refused, naming the variable: the running server is not moved.
    const refused = await acquireEmbeddedServer(folder.dir, { port: pinned + 1 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(refused?.name).toBe('WarehouseError');
    expect(refused?.message).toContain(`TE_EMBEDDED_PORT=${pinned + 1}, but the embedded Postgres server of ${path.join(folder.dir, 'postgres')} is running on 127.0.0.1:${pinned}`);
  });

  it('TE_EMBEDDED_PORT held by another program: exit 1 naming the variable, nothing started, the port not moved', async () => {
    folder = await embeddedFolder('tesync-port-pin-taken');
    const pinned = await freePort();
    listeners.push(await occupy(pinned));
    const r = await runCli(['migrate'], { TE_DATA_DIR: folder.dir, TE_EMBEDDED_PORT: String(pinned) }, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`TE_EMBEDDED_PORT=${pinned}: another program listens on 127.0.0.1:${pinned}`);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect((await serverPids(folder.dir)).filter(isAlive)).toEqual([]);
  });

  it.each(['80', '70000', 'five'])('TE_EMBEDDED_PORT=%s: exit 2 naming it', async (value) => {
    const r = await runCli(['migrate'], { TE_DATA_DIR: '/nonexistent/tesync', TE_EMBEDDED_PORT: value });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tesync: configuration error: TE_EMBEDDED_PORT: must be a port from 1024 to 65535 \(example: TE_EMBEDDED_PORT=5433\)\n$/);
  });
});
