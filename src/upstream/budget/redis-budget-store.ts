// The budget's records in Redis, shared by every worker process and machine: the compare-and-
// set of versioned-budget-store.ts as two Lua scripts, on Redis time (the one clock every
// process decides on). Changes are announced over pub/sub, so waiting processes wake (they
// poll as well, in case a message is lost). On a Redis Cluster, a record another node serves
// since this holder's last look (a replica promoted by a failover, which may not have received
// the last writes) is read as one that lost writes (versioned-budget-store.ts `recovered`).
import type { PacingClock } from '../../ports/pacing-clock.ts';
import { VersionedBudgetStore, type VersionedRead } from './versioned-budget-store.ts';
import { servingNode, type RedisClient } from '../redis/client.ts';
import { luaFile } from '../redis/scripts.ts';

const readScript = luaFile(new URL('./budget-read.lua', import.meta.url));
const writeScript = luaFile(new URL('./budget-write.lua', import.meta.url));

export interface RedisBudgetStoreOptions {
  /** Commands go here; a duplicate connection subscribes to change messages. Not closed by the store. */
  redis: RedisClient;
  /** Key prefix shared by every process that shares the budget. */
  prefix: string;
  /** A record nobody writes for this long is dropped. */
  ttlMs: number;
  /** The pacing clock's reading (tests: a skewed one); decisions run on Redis' clock. */
  now?: PacingClock['now'];
}

export class RedisBudgetStore extends VersionedBudgetStore {
  private readonly channel: string;
  private readonly subscriber: RedisClient;
  private readonly subscribed: Promise<unknown>;
  /** Per bucket, the node that answered this holder's last command on its record (a cluster's; none on one server). */
  private readonly servedBy = new Map<string, string>();

  constructor(private readonly options: RedisBudgetStoreOptions) {
    super(options.now);
    this.channel = `${options.prefix}:budget:changed`;
    this.subscriber = options.redis.duplicate();
    this.subscriber.on('message', (_channel: string, message: string) => this.heard(message));
    // A lost subscription only slows waiters down to polling: never fatal.
    this.subscriber.on('error', () => {});
    this.subscribed = this.subscriber.subscribe(this.channel).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }

  protected ready(): Promise<unknown> {
    return this.subscribed;
  }

  protected async read(bucket: string): Promise<VersionedRead> {
    const reply = (await readScript(this.options.redis, [this.key(bucket)], [])) as unknown[];
    return { ...decodeRead(reply), lost: this.moved(bucket) };
  }

  protected async write(bucket: string, version: number, serialized: string, announce: boolean): Promise<VersionedRead | undefined> {
    const args = [version, serialized, this.options.ttlMs, announce ? this.channel : '', this.message(bucket)];
    const reply = (await writeScript(this.options.redis, [this.key(bucket)], args)) as unknown[];
    const moved = this.moved(bucket);
    // Written on a node other than the one read from: computed from a record the new node may
    // not hold, it is read again (its result is not used) and recovered.
    if (Number(reply[0]) === 1) return moved ? { ...(await this.read(bucket)), lost: true } : undefined;
    return { ...decodeRead(reply.slice(1)), lost: moved };
  }

  /** Whether another node answers for the bucket's record than answered this holder's last command on it. */
  private moved(bucket: string): boolean {
    const node = servingNode(this.options.redis, this.key(bucket));
    if (node === undefined) return false;
    const before = this.servedBy.get(bucket);
    this.servedBy.set(bucket, node);
    return before !== undefined && before !== node;
  }

  private key(bucket: string): string {
    return `${this.options.prefix}:budget:${bucket}:record`;
  }
}

function decodeRead(reply: unknown[]): VersionedRead {
  const [version, serialized, seconds, micros] = reply;
  return { version: Number(version), serialized: String(serialized), nowMs: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) };
}
