// The rate budget shared by every worker process and machine: the one Budget, its records
// in Redis (redis-budget-store.ts) and its clock Redis time, so machines with skewed clocks
// agree.
import { Budget, checkSharedLease, type SharedBudgetOptions } from './budget.ts';
import { RECORD_TTL_MS } from './budget-store.ts';
import { RedisBudgetStore } from './redis-budget-store.ts';
import type { RedisClient } from '../redis/client.ts';

export interface RedisBudgetOptions extends SharedBudgetOptions {
  /** Commands go here; a duplicate connection subscribes to change messages. Not closed by the budget. */
  redis: RedisClient;
  /** Key prefix shared by every process that shares the budget. */
  prefix: string;
}

/** A lease outlives its request's timeout by this much before a dead process's slot is freed. */
export const LEASE_MARGIN_MS = 1000;

export class RedisBudget extends Budget {
  constructor(options: RedisBudgetOptions) {
    checkSharedLease('RedisBudget', options.leaseMs);
    super(new RedisBudgetStore({ redis: options.redis, prefix: options.prefix, ttlMs: RECORD_TTL_MS, now: options.now }), options);
  }
}
