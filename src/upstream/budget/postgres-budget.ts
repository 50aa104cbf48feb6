// The rate budget shared by worker processes and machines that run without Redis: the one
// Budget, its records in the warehouse's Postgres (postgres-budget-store.ts) and its clock the
// Postgres server's, so machines with skewed clocks agree. RedisBudget's counterpart; the
// composition root chooses between them.
import { Budget, checkSharedLease, type SharedBudgetOptions } from './budget.ts';
import { RECORD_TTL_MS } from './budget-store.ts';
import type { WarehouseSessions } from '../../ports/warehouse-session.ts';
import { PostgresBudgetStore } from './postgres-budget-store.ts';

export interface PostgresBudgetOptions extends SharedBudgetOptions {
  /** The budget opens one connection of its own on it (a session: the store's Warehouse is one), closed with the budget. */
  warehouse: WarehouseSessions;
  /** The budget: every process that shares it uses the same prefix. */
  prefix: string;
  /** The command holding its session, in the session's name (PostgresBudgetStoreOptions.holder). */
  holder?: string | undefined;
}

export class PostgresBudget extends Budget {
  constructor(options: PostgresBudgetOptions) {
    checkSharedLease('PostgresBudget', options.leaseMs);
    super(new PostgresBudgetStore({ warehouse: options.warehouse, prefix: options.prefix, ttlMs: RECORD_TTL_MS, now: options.now, holder: options.holder }), options);
  }
}
