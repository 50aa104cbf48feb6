// The rate budget shared by worker processes and machines that run without Redis: the one
// Budget, its records in the warehouse's Postgres (postgres-budget-store.ts) and its clock the
// Postgres server's, so machines with skewed clocks agree. RedisBudget's counterpart; the
// composition root chooses between them.
import { Budget, checkSharedLease, type SharedBudgetOptions } from '../upstream/budget.ts';
import { RECORD_TTL_MS } from '../ports/budget-store.ts';
import type { Warehouse } from '../store/connection.ts';
import { PostgresBudgetStore } from '../store/budget/postgres-budget-store.ts';

export interface PostgresBudgetOptions extends SharedBudgetOptions {
  /** The budget opens one connection of its own on it (Warehouse.session), closed with the budget. */
  warehouse: Pick<Warehouse, 'session'>;
  /** The budget: every process that shares it uses the same prefix. */
  prefix: string;
}

export class PostgresBudget extends Budget {
  constructor(options: PostgresBudgetOptions) {
    checkSharedLease('PostgresBudget', options.leaseMs);
    super(new PostgresBudgetStore({ warehouse: options.warehouse, prefix: options.prefix, ttlMs: RECORD_TTL_MS, now: options.now }), options);
  }
}
