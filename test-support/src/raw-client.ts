import { connect, type Socket } from "node:net";

/**
 * An HTTP client on a raw socket, for the clients a library would not let a test be: one that stalls, dribbles a
 * byte a second, announces a chunk it never sends or sends its headers slowly. It records what the server
 * answers and when the server closed the connection.
 */
export interface RawClient {
  readonly socket: Socket;
  /** Everything the server has sent so far, as text. */
  received(): string;
  /** Resolves, with the milliseconds since the connection opened, once the connection is closed. */
  readonly closed: Promise<number>;
  /** Writes `data` unless the connection is gone (the server may close it at any time). */
  write(data: string | Uint8Array): void;
  /** Writes one byte of `data` every `everyMs` until it is all sent or the connection is gone. */
  dribble(data: string, everyMs: number): void;
  /** Closes the connection from this side (cleanup). */
  destroy(): void;
}

/** Connects to 127.0.0.1:`port`; resolves once connected. */
export function rawClient(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A reset when the server closes while this side still writes is how such a connection ends.
    socket.on("error", () => undefined);
    const closed = new Promise<number>((done) =>
      socket.once("close", () => {
        clearInterval(timer);
        done(performance.now() - started);
      }),
    );
    const open = () => !socket.destroyed && socket.writable;
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString("latin1"),
        closed,
        write: (data) => {
          if (open()) socket.write(data);
        },
        dribble: (data, everyMs) => {
          let index = 0;
          timer = setInterval(() => {
            if (!open() || index >= data.length) {
              clearInterval(timer);
              return;
            }
            socket.write(data[index] as string);
            index++;
          }, everyMs);
        },
        destroy: () => {
          clearInterval(timer);
          socket.destroy();
        },
      });
    });
    socket.once("error", reject);
  });
}

/** The status code of the first HTTP answer in `text`, or undefined when none has arrived. */
export function statusOf(text: string): number | undefined {
  const match = /^HTTP\/1\.[01] (\d{3}) /.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
