// The embedded server's port "is changed if taken": also when another process takes it between
// the check that it is free and the server's own bind. The test takes the port at exactly that
// moment (the `beforeStart` hook runs after the check, just before pg_ctl), with a real listener:
// the server moves to another free port, saves it, and answers there; when every port it tries
// is taken, it says so in one line and leaves nothing running.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireEmbeddedServer, type EmbeddedServer } from '../../../src/store/server/embedded-server.ts';
import { runCli } from '../../helpers/cli.ts';
import { answers, embeddedFolder, isAlive, serverPids, type TempFolder } from '../../helpers/embedded.ts';
import { freePort } from '../../helpers/own-servers.ts';

/** A listener on 127.0.0.1:port, as another program would hold it. */
function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function savedPort(dir: string): number {
  return Number(readFileSync(path.join(dir, 'postgres', 'port'), 'utf8').trim());
}

describe('the embedded server when another process takes its port', () => {
  let folder: TempFolder | undefined;
  const listeners: Server[] = [];
  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((l) => new Promise((resolve) => l.close(resolve))));
    await folder?.cleanup();
    folder = undefined;
  });

  /** A `beforeStart` hook that takes the port the server is about to start on, the first `times` times. */
  function racer(times: number) {
    const tried: number[] = [];
    return {
      tried,
      beforeStart: async (port: number) => {
        tried.push(port);
        if (tried.length <= times) listeners.push(await occupy(port));
      },
    };
  }

  it('moves to another free port, at its first start and at a later one, and saves it', async () => {
    folder = await embeddedFolder('tesync-port-race');
    // First start (initialising the folder): the port it chose is taken as it starts.
    const first = racer(1);
    const a = await acquireEmbeddedServer(folder.dir, { beforeStart: first.beforeStart });
    try {
      // At least two ports: other test files start servers from 5433 up at the same time, and
      // may take the next one too. It answers on the last it tried, and saved that one.
      expect(first.tried.length).toBeGreaterThanOrEqual(2);
      expect(new Set(first.tried).size).toBe(first.tried.length);
      expect(savedPort(folder.dir)).toBe(first.tried.at(-1));
      expect(a.url).toContain(`@127.0.0.1:${first.tried.at(-1)}/`);
      expect(await answers(a)).toBe('tesync');
    } finally {
      await a.release();
    }
    expect((await serverPids(folder.dir)).filter(isAlive)).toEqual([]);

    // A later start: the saved port is free at the check, then taken before the server binds it.
    const later = racer(1);
    const b = await acquireEmbeddedServer(folder.dir, { beforeStart: later.beforeStart });
    try {
      expect(later.tried[0]).toBe(first.tried.at(-1));
      expect(later.tried.length).toBeGreaterThanOrEqual(2);
      expect(savedPort(folder.dir)).toBe(later.tried.at(-1));
      expect(await answers(b)).toBe('tesync');
    } finally {
      await b.release();
    }
  });

  it('a port taken before the command starts: `tesync migrate` starts the server on another one', async () => {
    folder = await embeddedFolder('tesync-port-taken');
    await (await acquireEmbeddedServer(folder.dir)).release();
    const saved = await freePort();
    writeFileSync(path.join(folder.dir, 'postgres', 'port'), `${saved}\n`);
    listeners.push(await occupy(saved));
    const r = await runCli(['migrate'], { TE_DATA_DIR: folder.dir });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const moved = savedPort(folder.dir);
    expect(moved).not.toBe(saved);
    expect(r.stdout).toContain(`(127.0.0.1:${moved})`);
  });

  it('every port it tries taken: one line saying so and which ports, nothing left running', async () => {
    folder = await embeddedFolder('tesync-port-race-lost');
    const always = racer(Infinity);
    const err = (await acquireEmbeddedServer(folder.dir, { beforeStart: always.beforeStart }).then(
      () => undefined,
      (e: unknown) => e as Error,
    ))!;
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('WarehouseError');
    expect(always.tried.length).toBeGreaterThan(1);
    expect(new Set(always.tried).size).toBe(always.tried.length);
    expect(err.message).not.toContain('\n');
    expect(err.message).toMatch(
      new RegExp(`^the embedded Postgres server in \\S+ did not start: another process took each port it tried \\(${always.tried.join(', ')}\\) between the check that it was free and the server's start \\("Address already in use"\\)`),
    );
    expect((await serverPids(folder.dir)).filter(isAlive)).toEqual([]);
    // The folder is left usable: the next start, with its ports free, succeeds.
    const again = await acquireEmbeddedServer(folder.dir);
    try {
      expect(await answers(again)).toBe('tesync');
    } finally {
      await again.release();
    }
  });
});
