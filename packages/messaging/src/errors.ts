/**
 * Base of every error the messaging module raises on purpose but for bad options, which are the platform's
 * shared `ConfigError`; `code` is stable, messages are for people.
 */
export class MessagingError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The request body is larger than the webhook accepts. */
export class PayloadTooLargeError extends MessagingError {
  constructor(readonly limitBytes: number) {
    super("PAYLOAD_TOO_LARGE", `Request body exceeds ${limitBytes} bytes`);
  }
}

/** The client went away (or the connection failed) before the whole request body arrived. */
export class RequestAbortedError extends MessagingError {
  constructor(options?: ErrorOptions) {
    super("REQUEST_ABORTED", "The request body ended before it was complete", options);
  }
}

/**
 * The request body did not arrive in time: not all of it within the whole-body deadline, or no byte for the
 * idle limit (a stalled Content-Length, a byte-a-second dribble, a huge chunk announced and never sent).
 */
export class BodyTimeoutError extends MessagingError {
  constructor(
    readonly kind: "total" | "idle",
    readonly timeoutMs: number,
  ) {
    super(
      "REQUEST_TIMEOUT",
      kind === "total"
        ? `The request body did not arrive within ${timeoutMs} ms`
        : `No byte of the request body arrived for ${timeoutMs} ms`,
    );
  }
}

/**
 * The request bodies being received already hold all the memory the webhooks allow them; this one was refused
 * before (or while) it was read. The sender should retry later.
 */
export class BodiesBusyError extends MessagingError {
  constructor(readonly budgetBytes: number) {
    super("BODIES_BUSY", "Too many request bodies are being received at once; retry later");
  }
}

/** A delivery that parsed as JSON but does not have the shape the channel documents. */
export class InvalidPayloadError extends MessagingError {
  constructor(message: string) {
    super("INVALID_PAYLOAD", message);
  }
}

/**
 * Handing a message to the agent or a reply to the chat product failed. `retryable` says whether trying
 * again later can help (network errors, 5xx, rate limits) or not (the other side rejected the request).
 */
export class DeliveryError extends MessagingError {
  /** The other side's own hint (Retry-After, Telegram's retry_after): the next attempt waits at least this. */
  readonly retryAfterMs: number | undefined;
  constructor(
    code: "AGENT_FAILED" | "SEND_FAILED",
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions & { retryAfterMs?: number | undefined },
  ) {
    super(code, message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The inbox's commits are all busy and a delivery waited longer than allowed for its turn; nothing was stored. */
export class InboxBusyError extends MessagingError {
  constructor(readonly waitedMs: number) {
    super("INBOX_BUSY", `The inbox did not start storing the delivery within ${waitedMs} ms`);
  }
}

/**
 * The commit holding a delivery did not finish within its deadline (the database was killed, frozen, cut off or
 * overloaded). The delivery is refused; it may have been stored all the same, and its redelivery then counts it
 * as a duplicate.
 */
export class InboxCommitTimeoutError extends MessagingError {
  constructor(readonly deadlineMs: number) {
    super("INBOX_COMMIT_TIMEOUT", `The inbox's commit did not finish within ${deadlineMs} ms`);
  }
}

/** An inbox operation named a message the channel's inbox does not hold. */
export class InboxMessageNotFoundError extends MessagingError {
  constructor(
    readonly channel: string,
    readonly messageId: string,
  ) {
    super("INBOX_MESSAGE_NOT_FOUND", `No message '${messageId}' in the ${channel} inbox`);
  }
}

/** An inbox operation that needs a row in one status (a retry: `failed`) found it in another. */
export class InboxStatusConflictError extends MessagingError {
  constructor(
    readonly messageId: string,
    readonly status: string,
    readonly expected: string,
  ) {
    super("INBOX_STATUS_CONFLICT", `Message '${messageId}' is ${status}, not ${expected}`);
  }
}
