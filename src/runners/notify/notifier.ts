// A worker's notifier: on its tick (and as soon as one of its runs closes) it beats its heart,
// judges what only a read can see (watch.ts) and delivers the outbox (deliver.ts). One round at
// a time; a round that fails is logged and the next goes on. Closing it says the worker
// stopped (it is not lost) and waits for the round under way.
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import { errorLine } from '../../lib/recordable.ts';
import { forgetWorker } from '../../store/books/notifications.ts';
import type { Warehouse } from '../../store/connection.ts';
import { deliverPending } from './deliver.ts';
import { watch } from './watch.ts';

/** Between two rounds of a worker. */
export const NOTIFY_TICK_MS = 30_000;

export interface NotifierOptions {
  warehouse: Warehouse;
  config: Pick<Config, 'schedules' | 'scheduleTz' | 'exportDir' | 'minCoverage' | 'notify' | 'secrets'>;
  logger: Logger;
  worker: { name: string; figures: Record<string, unknown> };
  tickMs?: number;
}

export interface Notifier {
  /** A round now (a run closed), or right after the one under way. */
  kick(): void;
  close(): Promise<void>;
}

export function startNotifier(o: NotifierOptions): Notifier {
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const round = async () => {
    await watch({ warehouse: o.warehouse, config: o.config, logger: o.logger, worker: o.worker });
    await deliverPending({
      warehouse: o.warehouse,
      urls: o.config.notify.urls,
      secret: o.config.notify.secret,
      warehouseName: o.warehouse.location,
      secrets: o.config.secrets,
      logger: o.logger,
    });
  };
  const kick = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = round()
      .catch((err: unknown) => o.logger.warn({ err: errorLine(err) }, 'notifications: a round failed; the next goes on'))
      .finally(() => {
        running = undefined;
        if (again && !closed) {
          again = false;
          kick();
        }
      });
  };
  const timer = setInterval(kick, o.tickMs ?? NOTIFY_TICK_MS);
  timer.unref();
  kick();
  return {
    kick,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await forgetWorker(o.warehouse, o.worker.name).catch((err: unknown) => o.logger.warn({ err: errorLine(err) }, 'notifications: could not say this worker stopped'));
    },
  };
}
