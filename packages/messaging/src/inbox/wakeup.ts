import type { Logger } from "@agent-platform/common";
import postgres, { type Sql } from "postgres";

/** The NOTIFY channel the inbox insert signals on, with the messaging channel's name as the payload. */
export const INBOX_NOTIFY_CHANNEL = "messaging_inbox";

export interface InboxWakeupOptions {
  /** The pool whose connection settings the listening connection copies; it takes no connection from it. */
  sql: Sql;
  /**
   * Called with the messaging channel whose inbox got rows, or with undefined after (re)connecting, when
   * notifications may have been missed while no LISTEN was in place.
   */
  onWake(channel: string | undefined): void;
  logger: Logger;
  /** Pause before trying to LISTEN again after the connection was lost or could not be made. */
  retryMs: number;
}

/**
 * Wakes this process's workers when any process commits new inbox rows: LISTEN on a connection of its own
 * (a listening session cannot be shared with the pool's queries). postgres.js's `sql.listen` re-listens once
 * after a lost connection and gives up silently if that fails, so the connection and its retries are kept
 * here instead. The workers still poll: this only makes them look sooner.
 */
export class InboxWakeup {
  private readonly client: Sql;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: InboxWakeupOptions) {
    // The pool's parsed options with the two hooks postgres.js's own listen() passes the same way (`onnotify`
    // is not in its typings): postgres() takes parsed options as they are.
    const listening = {
      ...options.sql.options,
      max: 1,
      idle_timeout: null,
      max_lifetime: null,
      fetch_types: false,
      onnotify: (channel: string, payload: string) => {
        if (channel === INBOX_NOTIFY_CHANNEL) options.onWake(payload);
      },
      // The session and its LISTEN are gone; a new connection must LISTEN again.
      onclose: () => this.scheduleListen(),
    };
    this.client = postgres(listening as unknown as postgres.Options<Record<string, never>>);
  }

  /** Starts listening; resolves once the first LISTEN is in place or has failed (then retried in the background). */
  start(): Promise<void> {
    return this.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.client.end({ timeout: 1 });
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    try {
      await this.client.unsafe(`LISTEN "${INBOX_NOTIFY_CHANNEL}"`);
      this.options.onWake(undefined);
    } catch (error) {
      if (this.closed) return;
      this.options.logger.warn(
        { err: error, retry_in_ms: this.options.retryMs },
        "inbox LISTEN failed; workers poll until it is back",
      );
      this.scheduleListen();
    }
  }

  private scheduleListen(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.listen();
    }, this.options.retryMs);
    this.retryTimer.unref();
  }
}
