// The rate budget per bucket as the status page shows it now: read from the budget's store
// (Redis, or sync.rate_budgets in the warehouse), which every worker and sync sharing the
// budget writes, rather than one process's last look. Reading changes nothing: an update
// that returns its record as it was writes nothing (upstream/budget/budget-store.ts).
import { Budget, type RateBudget } from '../../upstream/budget/budget.ts';
import { describe, type BucketStatus } from '../../upstream/budget/budget-state.ts';
import { BUCKETS } from '../../upstream/routes.ts';
import { systemPacingClock, type PacingClock } from '../../ports/pacing-clock.ts';

export interface BudgetNow {
  buckets: BucketStatus[];
  /** Why the figures are not the shared budget's, where they are not. */
  note: string | null;
}

/**
 * Each bucket's state now. A shared Budget is read from its store (the times converted at the
 * local clock: the store's may differ by the clocks' skew, which only shifts a wait shown);
 * any other budget says what this process last saw.
 */
export async function readBudgetNow(budget: RateBudget, note: string | null = null, nowMs: PacingClock['now'] = systemPacingClock.now): Promise<BudgetNow> {
  if (!(budget instanceof Budget)) return { buckets: budget.snapshot(), note };
  const buckets = await Promise.all(BUCKETS.map(async (bucket) => describe(bucket, await budget.readState(bucket), nowMs(), budget.policy, 0)));
  return { buckets, note };
}
