import { delivery, postDelivery, textMessage } from "../messaging/support/whatsapp.js";

/**
 * The documented bound (server README): a delivery waits at most MESSAGING_COMMIT_MAX_WAIT_MS (2 s) for its commit
 * to start and MESSAGING_COMMIT_TIMEOUT_MS (3 s) for it to finish; one second more for the request itself on a
 * loaded machine.
 */
export const ANSWER_BOUND_MS = 6_000;
/** Storing resumes within about a second of the database answering (or the disk having room) again. */
export const RESUME_BOUND_MS = 1_500;

/** One delivery of a steady load: when it was sent, what answered it, and how long that took. */
export interface Sent {
  id: string;
  server: number;
  sentAt: number;
  /** HTTP status, or 0 when no answer came within the client's patience (or the connection failed). */
  status: number;
  ms: number;
}

/**
 * Posts one signed single-message delivery every `1000 / perSecond` ms, alternating between `urls`, until `until()`
 * says stop; each is given `patienceMs` to be answered. Resolves with every delivery once all are answered or
 * have given up. Bounded: at most `maxDeliveries`.
 */
export async function steadyLoad(options: {
  urls: readonly string[];
  perSecond: number;
  until: () => boolean;
  patienceMs: number;
  maxDeliveries: number;
  prefix: string;
}): Promise<Sent[]> {
  const { urls, perSecond, until, patienceMs, maxDeliveries, prefix } = options;
  const pending: Promise<Sent>[] = [];
  const started = performance.now();
  for (let n = 0; n < maxDeliveries && !until(); n++) {
    const due = started + (n * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = `wamid.${prefix}.${n}`;
    const server = n % urls.length;
    const sentAt = performance.now();
    pending.push(
      postDelivery(urls[server] as string, delivery([textMessage(id, "15551234567", `m${n}`)]), {
        signal: AbortSignal.timeout(patienceMs),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          return { id, server, sentAt, status: response.status, ms: performance.now() - sentAt };
        },
        () => ({ id, server, sentAt, status: 0, ms: performance.now() - sentAt }),
      ),
    );
  }
  return Promise.all(pending);
}
