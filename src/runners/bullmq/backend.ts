// The queue backend the workers share: Redis where REDIS_URL is set, otherwise the warehouse's
// own Postgres (BullMQ's Postgres backend). Everything tesync keeps for its workers lives in it
// under one prefix (TE_QUEUE_PREFIX): the BullMQ queues, jobs and schedulers, the shared rate
// budget and the run ledger. The runner sees only this interface; redis-backend.ts and
// postgres-backend.ts are the two ways to build it.
import type { Processor, Queue, Worker, WorkerOptions } from 'bullmq';
import type { Config } from '../../lib/config.ts';
import type { RunLedger } from '../../ports/run-ledger.ts';
import type { Warehouse } from '../../store/connection.ts';
import type { RateBudget } from '../../upstream/budget/budget.ts';

/** A BullMQ queue on either backend (their types differ only in the connection). */
export type AnyQueue = Queue<any, any, string, any, any, string, any, any>;
export type AnyWorker = Worker<any, any, string, any, any, any>;

export type QueueBackendKind = 'redis' | 'postgres';

/** Pure: where the workers' queues are: Redis when REDIS_URL is set, otherwise the warehouse's Postgres. */
export function queueBackendKind(config: Pick<Config, 'redisUrl'>): QueueBackendKind {
  return config.redisUrl ? 'redis' : 'postgres';
}

/** The run ledger as the workers use it: also whether one job is pending, and how long a recorded run's state lingers. */
export interface WorkerLedger extends RunLedger {
  isPending(runId: string, jobId: string): Promise<boolean>;
  expire(runId: string, ms: number): Promise<void>;
}

/** What a BullMQ Worker is given besides its connection, which the backend adds. */
export type WorkerSettings = Omit<WorkerOptions, 'connection' | 'prefix'>;

export interface QueueBackend {
  readonly kind: QueueBackendKind;
  readonly prefix: string;
  /** Where the queues are, for messages: never a password. */
  readonly where: string;
  /** A queue of this backend; closed by its user. */
  queue(name: string): AnyQueue;
  /** A worker of this backend; closed by its user. */
  worker(name: string, processor: Processor, settings: WorkerSettings): AnyWorker;
  /** The run ledger every process of the prefix shares. */
  readonly ledger: WorkerLedger;
  /** The rate budget every process of the prefix shares; closed with the backend. */
  budget(leaseMs: number): RateBudget & { close(): Promise<void> };
  /** Resolves when the backend answers (`/healthz`). */
  ping(): Promise<void>;
  /** Workers connected under the prefix; undefined when the backend would not say. */
  workersCount(): Promise<number | undefined>;
  /** `listener` runs each time the backend's connection comes back after a loss (Redis: it may come back empty; a cluster's failover: without the last writes). */
  onReconnect(listener: () => void): void;
  close(): Promise<void>;
}

export interface OpenBackendOptions {
  config: Config;
  /** The warehouse (the Postgres backend lives in its database; the Redis one only names the runs there). */
  warehouse: Warehouse;
  /** Names this process's connections (`<prefix>:<name>`), as pg_stat_activity and CLIENT LIST show them. */
  name: string;
}

/** The worker's name: on every job it takes (processedBy) and its connection's name, so a prefix's workers are told apart from another's. */
export function workerName(prefix: string, host: string, pid: number): string {
  return `${prefix}@${host}.${pid}`;
}
