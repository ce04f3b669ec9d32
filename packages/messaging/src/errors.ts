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
