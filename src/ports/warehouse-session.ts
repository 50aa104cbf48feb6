// A session of its own on the warehouse, for what the upstream client keeps there without
// importing the store: the rate budget's records when the workers share them in Postgres
// (src/upstream/budget/postgres-budget-store.ts). The store's Warehouse is one
// (src/store/connection.ts `Warehouse.session`); the composition root hands it over.
import type postgres from 'postgres';

export interface WarehouseSessionOptions {
  /** `application_name`, shown in pg_stat_activity (at most 63 bytes). */
  name: string;
  /** Called when the connection closes, whatever closed it. */
  onClose?: () => void;
  /** Called with each notification of a channel the session LISTENs to (lost with the session: LISTEN again after `onClose`). */
  onNotify?: (channel: string, payload: string) => void;
}

export interface WarehouseSessions {
  /**
   * A connection of its own, outside the pool, for session state that must last (LISTEN): never
   * handed to another caller. postgres.js reconnects it lazily when it drops, as a new session.
   */
  session(options: WarehouseSessionOptions): postgres.Sql;
}
