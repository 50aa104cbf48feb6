// The budget's records in Redis, shared by every worker process and machine: the compare-and-
// set of versioned-budget-store.ts as two Lua scripts, on Redis time (the one clock every
// process decides on). Changes are announced over pub/sub, so waiting processes wake (they
// poll as well, in case a message is lost).
import type { PacingClock } from '../../ports/pacing-clock.ts';
import type { Redis } from 'ioredis';
import { VersionedBudgetStore, type VersionedRead } from './versioned-budget-store.ts';
import { luaFile } from '../redis/scripts.ts';

const readScript = luaFile(new URL('./budget-read.lua', import.meta.url));
const writeScript = luaFile(new URL('./budget-write.lua', import.meta.url));

export interface RedisBudgetStoreOptions {
  /** Commands go here; a duplicate connection subscribes to change messages. Not closed by the store. */
  redis: Redis;
  /** Key prefix shared by every process that shares the budget. */
  prefix: string;
  /** A record nobody writes for this long is dropped. */
  ttlMs: number;
  /** The pacing clock's reading (tests: a skewed one); decisions run on Redis' clock. */
  now?: PacingClock['now'];
}

export class RedisBudgetStore extends VersionedBudgetStore {
  private readonly channel: string;
  private readonly subscriber: Redis;
  private readonly subscribed: Promise<unknown>;

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
    return decodeRead((await readScript(this.options.redis, [this.key(bucket)], [])) as unknown[]);
  }

  protected async write(bucket: string, version: number, serialized: string, announce: boolean): Promise<VersionedRead | undefined> {
    const args = [version, serialized, this.options.ttlMs, announce ? this.channel : '', this.message(bucket)];
    const reply = (await writeScript(this.options.redis, [this.key(bucket)], args)) as unknown[];
    return Number(reply[0]) === 1 ? undefined : decodeRead(reply.slice(1));
  }

  private key(bucket: string): string {
    return `${this.options.prefix}:budget:${bucket}:record`;
  }
}

function decodeRead(reply: unknown[]): VersionedRead {
  const [version, serialized, seconds, micros] = reply;
  return { version: Number(version), serialized: String(serialized), nowMs: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) };
}
