import type { IncomingMessage } from "node:http";
import { readStreamWithin } from "@agent-platform/common/internal";
import { PayloadTooLargeError, RequestAbortedError } from "./errors.js";

/**
 * The request body as bytes, at most `limitBytes` of them. A declared Content-Length over the limit is
 * refused before reading; otherwise the body is read and reading stops as soon as it passes the limit, so an
 * oversized body is never buffered.
 *
 * On @hono/node-server, pass the Node request (`c.env.incoming`): touching `request.body` there makes the
 * adapter build a full WHATWG `Request` and a web stream over the socket (bench/notes/profiles.md). Elsewhere
 * the web stream of `request` is read.
 */
export function readRawBody(
  request: Request,
  limitBytes: number,
  incoming?: IncomingMessage,
): Promise<Uint8Array> {
  // Read from Node only while nothing else has started to (the adapter's web stream reads the same socket).
  if (incoming !== undefined && !incoming.readableDidRead) return readIncomingBody(incoming, limitBytes);
  return readWebBody(request, limitBytes);
}

function readIncomingBody(incoming: IncomingMessage, limitBytes: number): Promise<Uint8Array> {
  const declared = incoming.headers["content-length"];
  if (declared !== undefined && Number(declared) > limitBytes) {
    return Promise.reject(new PayloadTooLargeError(limitBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const detach = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limitBytes) {
        // Stop pulling from the socket but keep it open for the 413; the adapter drains (discards) the rest
        // of the body once the response is written.
        detach();
        incoming.pause();
        reject(new PayloadTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      detach();
      resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, total));
    };
    const onError = (error: Error) => {
      detach();
      reject(new RequestAbortedError({ cause: error }));
    };
    // An aborted request may close without an error; 'end' comes before 'close' for a complete body.
    const onClose = () => {
      detach();
      reject(new RequestAbortedError());
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("close", onClose);
  });
}

/** A request's body as bytes, at most `limitBytes` (PayloadTooLargeError past them). */
async function readWebBody(message: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = message.headers.get("content-length");
  if (declared !== null && Number(declared) > limitBytes) throw new PayloadTooLargeError(limitBytes);
  if (message.body === null) return new Uint8Array(0);
  const body = await readStreamWithin(message.body, limitBytes);
  if (body === null) throw new PayloadTooLargeError(limitBytes);
  return body;
}
