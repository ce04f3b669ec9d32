import { parseArgs } from "node:util";
import { postJson } from "../channels/send.js";
import { TELEGRAM_DEFAULT_API_BASE_URL, telegram } from "../channels/telegram/index.js";
import { MessagingError } from "../errors.js";

export const TELEGRAM_WEBHOOK_USAGE = `Usage: platform-telegram-webhook set --url https://<your host>/telegram/webhook [--drop-pending-updates]
       platform-telegram-webhook info

Reads TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET_TOKEN (set) from the environment, and
TELEGRAM_API_BASE_URL (default ${TELEGRAM_DEFAULT_API_BASE_URL}). The token is never printed.`;

/** Telegram takes at most this much URL, and refuses a webhook that is not https. */
const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * `set`: registers the webhook with `setWebhook` (URL and `secret_token`, only `message` updates, as the
 * channel parses); `info`: prints `getWebhookInfo`. The bot token goes only into the request URL; what is
 * printed is Telegram's answer, which never carries it.
 */
export async function telegramWebhookCommand(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<CliResult> {
  const fail = (message: string): CliResult => ({ exitCode: 1, stdout: "", stderr: `${message}\n` });
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(args);
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${TELEGRAM_WEBHOOK_USAGE}`);
  }
  const { command, url, dropPendingUpdates } = parsed;
  const secretToken = env.TELEGRAM_WEBHOOK_SECRET_TOKEN || undefined;
  const apiBaseUrl = (env.TELEGRAM_API_BASE_URL || TELEGRAM_DEFAULT_API_BASE_URL).replace(/\/+$/, "");
  if (command === "set" && secretToken === undefined) {
    return fail("TELEGRAM_WEBHOOK_SECRET_TOKEN is required for set");
  }
  try {
    // The channel's own checks of the token's and the secret's form, so the CLI accepts what the webhook
    // will; the secret's presence is checked above.
    telegram({ botToken: env.TELEGRAM_BOT_TOKEN ?? "", secretToken, allowUnauthenticated: true });
  } catch (error) {
    return fail((error as Error).message);
  }
  const botUrl = `${apiBaseUrl}/bot${env.TELEGRAM_BOT_TOKEN}`;
  let body: Record<string, unknown> = {};
  if (command === "set") {
    const problem = webhookUrlProblem(url);
    if (problem !== undefined) return fail(problem);
    body = {
      url,
      secret_token: secretToken,
      allowed_updates: ["message"],
      ...(dropPendingUpdates ? { drop_pending_updates: true } : {}),
    };
  }
  const method = command === "set" ? "setWebhook" : "getWebhookInfo";
  try {
    const answer = await postJson("Telegram Bot API", `${botUrl}/${method}`, { body, timeoutMs: 10_000 });
    const result = answer.json as { ok?: unknown; description?: unknown } | undefined;
    if (answer.status === 200 && result?.ok === true) {
      return { exitCode: 0, stdout: `${JSON.stringify(result)}\n`, stderr: "" };
    }
    const description = typeof result?.description === "string" ? result.description.slice(0, 200) : "";
    return fail(
      `Telegram Bot API answered ${answer.status} to ${method}: ${description || "no description"}`,
    );
  } catch (error) {
    if (error instanceof MessagingError) return fail(error.message);
    throw error;
  }
}

function parseCommandLine(args: readonly string[]) {
  const { positionals, values } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { url: { type: "string" }, "drop-pending-updates": { type: "boolean" } },
  });
  const [command, ...rest] = positionals;
  if (command !== "set" && command !== "info") throw new Error(`Unknown command: ${command ?? "(none)"}`);
  if (rest.length > 0) throw new Error(`Unexpected argument: ${rest[0]}`);
  if (command === "info" && (values.url !== undefined || values["drop-pending-updates"])) {
    throw new Error("info takes no options");
  }
  return { command, url: values.url, dropPendingUpdates: values["drop-pending-updates"] === true };
}

function webhookUrlProblem(url: string | undefined): string | undefined {
  if (url === undefined) return "--url is required for set";
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `--url is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "--url is not a URL";
  }
  if (parsed.protocol !== "https:") return "--url must be https: Telegram delivers webhooks over https only";
  return undefined;
}
