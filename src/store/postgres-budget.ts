// The rate budget shared by worker processes and machines that run without Redis: the one
// Budget, its records in the warehouse's Postgres (postgres-budget-store.ts) and its clock the
// Postgres server's, so machines with skewed clocks agree. RedisBudget's counterpart; the
// composition root chooses between them.
import { Budget, type Sleep } from '../upstream/budget.ts';
import type { BudgetPolicy } from '../upstream/budget-state.ts';
import { RECORD_TTL_MS } from '../upstream/budget-store.ts';
import type { Warehouse } from './connection.ts';
import { PostgresBudgetStore } from './postgres-budget-store.ts';

export interface PostgresBudgetOptions {
  /** The budget opens one connection of its own on it (Warehouse.session), closed with the budget. */
  warehouse: Pick<Warehouse, 'session'>;
  /** The budget: every process that shares it uses the same prefix. */
  prefix: string;
  /** How long a grant holds its slot without an observation (request timeout + LEASE_MARGIN_MS). */
  leaseMs: number;
  policy?: Partial<BudgetPolicy>;
  /** The local clock (tests: a skewed one); decisions run on the Postgres server's time regardless. */
  now?: () => number;
  random?: () => number;
  sleep?: Sleep;
}

export class PostgresBudget extends Budget {
  constructor(options: PostgresBudgetOptions) {
    if (!Number.isFinite(options.leaseMs)) throw new RangeError('PostgresBudget: leaseMs must be finite (a dead process must not hold its slots forever)');
    super(new PostgresBudgetStore({ warehouse: options.warehouse, prefix: options.prefix, ttlMs: RECORD_TTL_MS, now: options.now }), options);
  }
}
