import type { Logger, LogMethod } from "@agent-platform/common";
import type { AgentHandler } from "../agents/agent.js";
import type { Channel } from "../channel.js";
import { publishProcessed } from "../diagnostics.js";
import { DeliveryError } from "../errors.js";
import { inMessageSpan, SPANS } from "../tracing.js";
import { retryDelayMs } from "./backoff.js";
import type { PaceLimit, PacePermits, SendPace } from "./send-pace.js";
import type { ClaimedMessage, InboxStore } from "./store.js";

/**
 * The longest a message waits in its worker for a send permit (see SendPace); a longer wait puts it back to
 * `pending` until then, without counting an attempt, so a paced chat does not hold a worker's slot for long.
 */
const MAX_PACE_WAIT_MS = 2_000;

export interface InboxWorkerOptions {
  store: InboxStore;
  channel: Channel;
  agent: AgentHandler;
  logger: Logger;
  concurrency: number;
  pollMs: number;
  startDelayMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** How long a claimed row stays leased without progress before another worker may take it. */
  leaseMs: number;
  /** `"conversation"`: one message of a conversation at a time, in the chat product's order (see InboxStore.claim). */
  ordering: "conversation" | "none";
  /** Send permits shared by every process (the channel's `pacing`). */
  pace: SendPace;
}

/**
 * Drains the inbox: claims due rows, asks the agent, sends the reply through the channel and marks the row
 * done, with at most `concurrency` messages in flight. Several workers (processes) may share one database.
 */
/**
 * After `stop`'s deadline aborts the calls in flight, how long it still waits for their tasks to end: an agent or
 * channel of the application's own that ignores the signal is left behind then (its row stays leased).
 */
export const ABORT_GRACE_MS = 1_000;

export class InboxWorker {
  private readonly inFlight = new Set<Promise<void>>();
  /** Aborts every outbound call in flight when stop()'s deadline passes. */
  private readonly calls = new AbortController();
  private loop: Promise<void> | undefined;
  private startTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private wakeRequested = false;
  private wakeWaiter: (() => void) | undefined;
  private readonly pauses = new Set<() => void>();

  constructor(private readonly options: InboxWorkerOptions) {}

  start(): void {
    if (this.loop || this.startTimer || this.stopping) return;
    const begin = () => {
      this.startTimer = undefined;
      this.loop = this.run();
    };
    if (this.options.startDelayMs > 0) this.startTimer = setTimeout(begin, this.options.startDelayMs);
    else begin();
  }

  /** New rows were stored: look now instead of at the next poll. */
  notify(): void {
    this.wakeRequested = true;
    this.wakeWaiter?.();
  }

  /**
   * Claims nothing more and resolves when every message in flight has been handled. When `deadline` aborts
   * first, the agent and channel calls in flight are aborted and their messages left leased, unrecorded: another
   * worker (or this server after a restart) takes them once their lease expires, as after a crash.
   */
  async stop(deadline?: AbortSignal): Promise<void> {
    this.stopping = true;
    for (const wake of this.pauses) wake();
    if (this.startTimer) clearTimeout(this.startTimer);
    this.startTimer = undefined;
    this.notify();
    let aborted: () => void = () => {};
    const abortedAndGrace = new Promise<void>((resolve) => {
      aborted = () => {
        this.calls.abort();
        setTimeout(resolve, ABORT_GRACE_MS).unref();
      };
    });
    if (deadline?.aborted) aborted();
    else deadline?.addEventListener("abort", aborted, { once: true });
    try {
      await this.loop;
      await Promise.race([Promise.allSettled(this.inFlight), abortedAndGrace]);
    } finally {
      deadline?.removeEventListener("abort", aborted);
    }
  }

  private async run(): Promise<void> {
    const { store, channel, logger, concurrency, pollMs, leaseMs, ordering } = this.options;
    // Claims go in batches: the worker refills once half of its slots are free (all of them when idle), so a
    // busy worker makes one claim per several messages instead of one per finished message.
    const refillAt = Math.ceil(concurrency / 2);
    let claimFailures = 0;
    while (!this.stopping) {
      const free = concurrency - this.inFlight.size;
      if (free >= refillAt) {
        let claimed: ClaimedMessage[];
        try {
          claimed = await store.claim(channel.name, free, leaseMs, ordering === "conversation");
          claimFailures = 0;
        } catch (error) {
          claimFailures++;
          logger.error({ err: error }, "inbox claim failed; retrying");
          await this.sleep(Math.min(pollMs * 2 ** claimFailures, 30_000));
          continue;
        }
        for (const row of claimed) this.track(this.handle(row));
        if (claimed.length === free) continue;
      }
      await this.sleep(pollMs);
    }
  }

  private track(task: Promise<void>): void {
    this.inFlight.add(task);
    void task.finally(() => {
      this.inFlight.delete(task);
      this.notify();
    });
  }

  /** Resolves after `ms`, or earlier on notify()/stop(); a notify that came while busy counts too. */
  private sleep(ms: number): Promise<void> {
    if (this.wakeRequested || this.stopping) {
      this.wakeRequested = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakeWaiter = undefined;
        this.wakeRequested = false;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakeWaiter = wake;
    });
  }

  /** Never rejects: every outcome is recorded on the row, or left to the lease expiring. */
  private async handle(row: ClaimedMessage): Promise<void> {
    const { store, logger, maxAttempts } = this.options;
    const log = childOnUse(logger, {
      channel: row.channel,
      message_id: row.messageId,
      attempt: row.attempts,
    });
    let outcome: Promise<boolean>;
    let kind: "done" | "retry" | "failed";
    if (row.attempts > maxAttempts) {
      // Only a lease that expired gets here: the worker that held it died or hung.
      const reason = row.lastError ?? "the worker processing it stopped before finishing";
      log.error("inbox message failed: attempts exhausted");
      kind = "failed";
      outcome = store.markFailed(row, `Gave up after ${maxAttempts} attempts: ${reason}`);
    } else {
      try {
        const parts = await this.deliver(row, log);
        kind = "done";
        outcome = store.markDone(row, parts);
      } catch (error) {
        if (error instanceof LeaseLostError) return;
        if (this.calls.signal.aborted) {
          log.warn(
            { err: error },
            "stopping: the call in flight was aborted; the message stays leased and is retried when its lease expires",
          );
          return;
        }
        if (error instanceof PaceDeferral) {
          // Not a failure: back to pending, no attempt counted, until its send permit is due.
          kind = "retry";
          outcome = store.defer(row, error.partsSent, error.waitMs);
        } else [kind, outcome] = this.recordFailure(row, error, log);
      }
    }
    try {
      await this.assertLeaseHeld(log, outcome);
      publishProcessed({ channel: row.channel, messageId: row.messageId, outcome: kind });
    } catch (error) {
      if (error instanceof LeaseLostError) return;
      log.error(
        { err: error },
        "could not record the outcome; the message is retried when its lease expires",
      );
    }
  }

  private recordFailure(
    row: ClaimedMessage,
    error: unknown,
    log: Logger,
  ): ["retry" | "failed", Promise<boolean>] {
    const { store, maxAttempts } = this.options;
    const reason = error instanceof Error ? error.message : String(error);
    // Anything that is not a classified delivery error (a bug in a custom agent, a database hiccup) is
    // treated as transient: a message only fails for good on a definite answer or exhausted attempts.
    const retryable = !(error instanceof DeliveryError) || error.retryable;
    if (retryable && row.attempts < maxAttempts) {
      const backoff = retryDelayMs(row.attempts, this.options.retryBaseMs, this.options.retryMaxMs);
      // A rate limit says when to come back; trying earlier would only be refused again.
      const hint = error instanceof DeliveryError ? (error.retryAfterMs ?? 0) : 0;
      const delay = Math.max(backoff, hint);
      log.warn({ err: error, retry_in_ms: delay }, "inbox message will be retried");
      return ["retry", store.retryLater(row, reason, delay)];
    }
    log.error({ err: error }, "inbox message failed");
    return [
      "failed",
      store.markFailed(row, retryable ? `Gave up after ${row.attempts} attempts: ${reason}` : reason),
    ];
  }

  /**
   * Asks the agent (unless an earlier attempt saved its reply) and sends the parts not yet accepted; returns how many
   * parts the reply has, all accepted by then.
   */
  private async deliver(row: ClaimedMessage, log: Logger): Promise<number> {
    const { store, channel, agent, leaseMs } = this.options;
    const call = { signal: this.calls.signal };
    const message = row.message;
    let parts = row.replyParts;
    if (parts === null) {
      // A notice (a user changed their number) is recorded only: no agent, no reply.
      const text = message.notice
        ? ""
        : message.supported
          ? ((
              await inMessageSpan(SPANS.agentCall, row, async () =>
                agent(
                  {
                    channel: channel.name,
                    from: message.from,
                    text: message.text,
                    type: message.type,
                    ...(message.media ? { media: message.media } : {}),
                    sessionId: channel.sessionId(message),
                    raw: message.raw,
                  },
                  call,
                ),
              )
            )?.text ?? "")
          : channel.unsupportedReply;
      parts = text === "" ? [] : channel.splitReply(text);
      await this.assertLeaseHeld(log, store.saveReply(row, parts, leaseMs));
    } else if (row.partsSent < parts.length) {
      // The claim was committed without waiting for its flush: make the lease durable before a send.
      await this.assertLeaseHeld(log, store.renewLease(row, leaseMs));
    }
    for (let index = row.partsSent; index < parts.length; index++) {
      // The parts before this one were accepted; the last part's record goes with markDone, in one commit.
      if (index > row.partsSent) await this.assertLeaseHeld(log, store.markPartsSent(row, index, leaseMs));
      const to = message.conversation ?? message.from;
      const permits = await this.paced(row, index, this.limitsOf(message.accountId, to), log);
      const reply = {
        accountId: message.accountId,
        to,
        text: parts[index] ?? "",
        ...(message.thread === undefined ? {} : { thread: message.thread }),
      };
      let retryAfterMs = 0;
      try {
        await inMessageSpan(SPANS.channelSend, row, async (span) => {
          span?.setAttribute("part", index + 1);
          await channel.send(reply, call);
        });
      } catch (error) {
        // A rate limit's hint paces the chat and the account too, not only this message's retry.
        if (error instanceof DeliveryError) retryAfterMs = error.retryAfterMs ?? 0;
        throw error;
      } finally {
        if (permits !== undefined) await this.releasePermits(permits, retryAfterMs, log);
      }
    }
    return parts.length;
  }

  /** The limits a send to `to` from `accountId` takes a permit of; keys are the channel's session ids' form. */
  private limitsOf(accountId: string, to: string): PaceLimit[] {
    const { channel } = this.options;
    const pacing = channel.pacing;
    if (pacing === undefined) return [];
    const limits: PaceLimit[] = [];
    if (pacing.perChatMs > 0) {
      limits.push({ key: `${channel.name}:${accountId}:${to}`, permits: 1, gapMs: pacing.perChatMs });
    }
    if (pacing.perAccountPerSecond > 0) {
      limits.push({ key: `${channel.name}:${accountId}`, permits: pacing.perAccountPerSecond, gapMs: 1_000 });
    }
    return limits;
  }

  /**
   * Waits for a permit of every limit, up to MAX_PACE_WAIT_MS (half the lease at most); a longer wait, or a stop,
   * throws PaceDeferral. A lease that a wait used is renewed before the send.
   */
  private async paced(
    row: ClaimedMessage,
    partsSent: number,
    limits: PaceLimit[],
    log: Logger,
  ): Promise<PacePermits | undefined> {
    if (limits.length === 0) return undefined;
    const { pace, store, channel, leaseMs } = this.options;
    const deadline = Date.now() + Math.min(MAX_PACE_WAIT_MS, leaseMs / 2);
    const holdMs = channel.sendTimeoutMs ?? leaseMs;
    let waited = false;
    for (;;) {
      const attempt = await pace.take(limits, holdMs);
      if ("permits" in attempt) {
        if (waited) {
          try {
            await this.assertLeaseHeld(log, store.renewLease(row, leaseMs));
          } catch (error) {
            await this.releasePermits(attempt.permits, 0, log);
            throw error;
          }
        }
        return attempt.permits;
      }
      if (this.stopping || Date.now() + attempt.waitMs > deadline) {
        throw new PaceDeferral(partsSent, attempt.waitMs);
      }
      waited = true;
      await this.pause(attempt.waitMs);
    }
  }

  private async releasePermits(permits: PacePermits, minGapMs: number, log: Logger): Promise<void> {
    try {
      await this.options.pace.release(permits, minGapMs);
    } catch (error) {
      // Left held, the permits free themselves after the send's timeout plus their gap.
      log.warn({ err: error }, "could not release send permits; they expire on their own");
    }
  }

  /** Resolves after `ms`, or at once on stop(). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.pauses.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.pauses.add(wake);
    });
  }

  /** A leased update that matched no row means another worker took the row over after our lease expired. */
  private async assertLeaseHeld(log: Logger, update: Promise<boolean>): Promise<void> {
    if (!(await update)) {
      log.warn("inbox lease lost to another worker; leaving the message to it");
      throw new LeaseLostError();
    }
  }
}

/**
 * `logger.child(bindings)`, made on the first record only: an answered message logs nothing, and pino's child (its
 * bindings serialised through redaction) was about 70 µs a message in the end-to-end profile (bench notes).
 */
function childOnUse(logger: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const made = () => {
    child ??= logger.child(bindings);
    return child;
  };
  const forward =
    (level: "debug" | "info" | "warn" | "error"): LogMethod =>
    (fields: object | string, message?: string) => {
      if (typeof fields === "string") made()[level](fields);
      else made()[level](fields, message);
    };
  return {
    debug: forward("debug"),
    info: forward("info"),
    warn: forward("warn"),
    error: forward("error"),
    child: (more) => made().child(more),
  };
}

/** A send permit is further away than a worker waits: the message goes back to `pending` until then. */
class PaceDeferral extends Error {
  readonly code = "PACE_DEFERRED";
  constructor(
    readonly partsSent: number,
    readonly waitMs: number,
  ) {
    super(`send paced: next permit in ${waitMs} ms`);
  }
}

class LeaseLostError extends Error {
  readonly code = "LEASE_LOST";
}
