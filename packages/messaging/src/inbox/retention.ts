import type { Logger } from "@agent-platform/common";
import type { InboxStore } from "./store.js";

/** How long finished rows are kept, in days; 0 keeps them forever. */
export interface RetentionRule {
  /** `done`, `rejected` and `notice` rows, by the time they were last updated. */
  doneDays: number;
  /** `failed` rows, by the time they failed. */
  failedDays: number;
}

export interface RetentionPassOptions extends RetentionRule {
  store: InboxStore;
  channels: readonly string[];
  logger: Logger;
  /** Between passes. */
  intervalMs: number;
  /** Rows per DELETE: short statements, so no lock is held long and a webhook's commit never waits long. */
  batch: number;
  /** Longest one DELETE may run; a pass stops at the first that does not finish in time. */
  statementTimeoutMs: number;
  /** Longest one pass runs; the rest waits for the next pass. */
  passMs: number;
  /**
   * Shortest time from one batch's start to the next's, and after a slow batch at least as long again as it
   * took: deleting is throttled so the WAL it writes does not crowd out the webhooks' commits.
   */
  batchIntervalMs: number;
}

/**
 * Deletes finished rows past their retention, in every process: each pass deletes small batches (rows another
 * transaction holds are skipped, so a row being retried or erased is left to it) until none is left or the pass
 * has run `passMs`. Processes sharing the database take disjoint batches.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly options: RetentionPassOptions) {}

  start(): void {
    const { doneDays, failedDays, intervalMs } = this.options;
    if (this.timer !== undefined || this.stopped || (doneDays === 0 && failedDays === 0)) return;
    // The first pass soon after the start, not at once: the start itself has work to do.
    const schedule = (ms: number) => {
      this.timer = setTimeout(() => {
        this.running = this.pass().finally(() => {
          this.running = undefined;
          if (!this.stopped) schedule(intervalMs);
        });
      }, ms);
      this.timer.unref();
    };
    schedule(Math.min(intervalMs, 1_000 + Math.floor(Math.random() * 4_000)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass over every channel; never rejects (a failure is logged and the next pass tries again). */
  async pass(): Promise<{ done: number; failed: number }> {
    const {
      store,
      channels,
      logger,
      doneDays,
      failedDays,
      batch,
      statementTimeoutMs,
      passMs,
      batchIntervalMs,
    } = this.options;
    const deadline = Date.now() + passMs;
    const total = { done: 0, failed: 0 };
    for (const channel of channels) {
      try {
        for (;;) {
          const started = Date.now();
          const deleted = await store.prune(channel, { doneDays, failedDays, batch, statementTimeoutMs });
          total.done += deleted.done;
          total.failed += deleted.failed;
          if ((deleted.done < batch && deleted.failed < batch) || Date.now() >= deadline || this.stopped)
            break;
          const took = Date.now() - started;
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(1_000, Math.max(batchIntervalMs - took, took))),
          );
        }
      } catch (error) {
        logger.warn({ err: error, channel }, "inbox retention pass failed; the next pass tries again");
      }
    }
    if (total.done + total.failed > 0) logger.info({ deleted: total }, "inbox retention deleted old rows");
    return total;
  }
}
