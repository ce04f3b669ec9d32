/** Why the server refused to start, with a stable `code`; its message is the one line an operator reads. */
export class StartupError extends Error {
  constructor(
    readonly code:
      | "NO_JWT_KEY_IN_PRODUCTION"
      | "PORT_IN_USE"
      | "DATA_DIR_LOCKED"
      | "DATA_DIR_FULL"
      | "DATABASE_UNREACHABLE",
    message: string,
  ) {
    super(message);
    this.name = "StartupError";
  }
}
