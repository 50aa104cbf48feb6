// A Redis Cluster of the test's own: three primaries and three replicas, six `redis-server`
// child processes on free loopback ports (each with its cluster bus on the port + 10000), made
// a cluster by `redis-cli --cluster create`, in a temporary folder, without persistence. A
// test kills its nodes, never the machine's Redis (TEST_REDIS_URL). Everything goes with
// cleanup(), or with the test process whatever ends it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { requireBinary } from './own-servers.ts';
import { patience } from './patience.ts';

const run = promisify(execFile);
const INSTALL = "install Debian's redis-server and redis-tools (apt-get install redis-server redis-tools), which .ci/run installs when missing";

export interface ClusterNode {
  port: number;
  /** `127.0.0.1:<port>`, as the cluster and ioredis name it. */
  key: string;
  child: ChildProcess;
}

export interface OwnCluster {
  /** `redis+cluster://127.0.0.1:P1,...`: every node as a seed, for REDIS_URL. */
  readonly url: string;
  readonly nodes: readonly ClusterNode[];
  /** One line of `redis-cli -p port` (e.g. `CLUSTER KEYSLOT k`, `CLUSTER INFO`), trimmed. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** The primary that serves `slot` now, as a live node sees it (`host:port`). */
  ownerOf(slot: number): Promise<string>;
  /** SIGKILL of one node; resolves once it has exited. */
  kill(port: number): Promise<void>;
  /** Waits until every live node says `cluster_state:ok` and `slot` has a live primary; resolves with it. */
  settled(slot: number, nominalMs?: number): Promise<string>;
  /** Kills every node and removes the folder; safe to call more than once. */
  cleanup(): Promise<void>;
}

/** A port nothing listens on whose cluster bus port (+10000) is free too. */
async function freeNodePort(taken: Set<number>): Promise<number> {
  const listen = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(undefined));
      s.listen(port, '127.0.0.1', () => {
        const got = (s.address() as { port: number }).port;
        s.close(() => resolve(got));
      });
    });
  for (;;) {
    const port = await listen(0);
    if (port === undefined || port > 55_000 || taken.has(port)) continue;
    if ((await listen(port + 10_000)) === undefined) continue;
    taken.add(port);
    return port;
  }
}

/** Starts six nodes and makes them a cluster of three primaries with a replica each. */
export async function startOwnCluster(options: { nodeTimeoutMs?: number } = {}): Promise<OwnCluster> {
  const server = requireBinary('redis-server', INSTALL);
  const cliBin = requireBinary('redis-cli', INSTALL);
  const dir = mkdtempSync(path.join(tmpdir(), 'tesync-own-cluster-'));
  // Readable by the servers whatever user they run as.
  chmodSync(dir, 0o755);
  const nodes: ClusterNode[] = [];
  const output = new Map<number, string>();
  const killOnExit = () => {
    for (const n of nodes) n.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const alive = (n: ClusterNode) => n.child.exitCode === null && n.child.signalCode === null;
  const cli = async (port: number, ...args: string[]) => (await run(cliBin, ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: patience(10_000) })).stdout.trim();

  const cleanup = async () => {
    await Promise.all(
      nodes.map(async (n) => {
        if (!alive(n)) return;
        const gone = new Promise((resolve) => n.child.once('exit', resolve));
        n.child.kill('SIGKILL');
        await gone;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killOnExit);
  };

  try {
    const taken = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const port = await freeNodePort(taken);
      const args = [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
        '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2000), '--daemonize', 'no', '--save', '',
        // A replica syncs at once (not 5 s later): one that never synced is never promoted.
        '--repl-diskless-sync-delay', '0', '--appendonly', 'no', '--dir', dir, '--logfile', '',
      ];
      const child = spawn(server, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const keep = (d: Buffer) => output.set(port, ((output.get(port) ?? '') + d.toString()).slice(-4000));
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      nodes.push({ port, key: `127.0.0.1:${port}`, child });
    }
    for (const n of nodes) {
      const deadline = Date.now() + patience(10_000);
      for (;;) {
        if (!alive(n)) throw new Error(`redis-server on port ${n.port} exited before it answered:\n${output.get(n.port) ?? ''}`);
        if ((await cli(n.port, 'PING').catch(() => '')) === 'PONG') break;
        if (Date.now() > deadline) throw new Error(`redis-server on port ${n.port} did not answer PING:\n${output.get(n.port) ?? ''}`);
        await delay(50);
      }
    }
    await run(cliBin, ['--cluster', 'create', ...nodes.map((n) => n.key), '--cluster-replicas', '1', '--cluster-yes'], { timeout: patience(60_000) });
  } catch (err) {
    await cleanup();
    throw err;
  }

  const ownerOf = async (slot: number): Promise<string> => {
    const live = nodes.find(alive);
    if (!live) throw new Error('no node of the cluster is alive');
    const slots = JSON.parse(await cli(live.port, '--json', 'CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
    const range = slots.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return `${range[2][0]}:${range[2][1]}`;
  };

  const settled = async (slot: number, nominalMs = 20_000): Promise<string> => {
    const deadline = Date.now() + patience(nominalMs);
    for (;;) {
      const states = await Promise.all(nodes.filter(alive).map((n) => cli(n.port, 'CLUSTER', 'INFO').catch(() => '')));
      if (states.every((s) => s.includes('cluster_state:ok'))) {
        const owner = await ownerOf(slot).catch(() => undefined);
        const node = nodes.find((n) => n.key === owner);
        if (node && alive(node) && (await cli(node.port, 'ROLE').catch(() => '')).startsWith('master')) return owner!;
      }
      if (Date.now() > deadline) throw new Error(`the cluster did not settle (cluster_state:ok, slot ${slot} on a live primary) within ${patience(nominalMs)} ms`);
      await delay(100);
    }
  };

  const replicasSynced = async () => {
    const deadline = Date.now() + patience(20_000);
    for (;;) {
      const roles = await Promise.all(nodes.map((n) => cli(n.port, 'INFO', 'replication').catch(() => '')));
      const replicas = roles.filter((r) => r.includes('role:slave'));
      if (replicas.length === 3 && replicas.every((r) => r.includes('master_link_status:up') && !r.includes('master_sync_in_progress:1'))) return;
      if (Date.now() > deadline) throw new Error(`the cluster's replicas did not finish their first sync within ${patience(20_000)} ms`);
      await delay(100);
    }
  };
  await settled(0, 30_000)
    .then(replicasSynced)
    .catch(async (err: unknown) => {
      await cleanup();
      throw err;
    });
  return {
    url: `redis+cluster://${nodes.map((n) => n.key).join(',')}`,
    nodes,
    cli,
    ownerOf,
    async kill(port) {
      const n = nodes.find((x) => x.port === port);
      if (!n) throw new Error(`no node of this cluster on port ${port}`);
      if (!alive(n)) return;
      const gone = new Promise((resolve) => n.child.once('exit', resolve));
      n.child.kill('SIGKILL');
      await gone;
    },
    settled,
    cleanup,
  };
}
