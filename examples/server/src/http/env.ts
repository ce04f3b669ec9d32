import type { Logger } from "pino";

/** What every request carries through the middleware chain. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** The server's logger bound to this request's id. */
    logger: Logger;
  };
}
