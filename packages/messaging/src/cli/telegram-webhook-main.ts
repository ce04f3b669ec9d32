import { telegramWebhookCommand } from "./telegram-webhook.js";

// The bin's entry: the command's output as it is, its exit code as the process's.
telegramWebhookCommand(process.argv.slice(2), process.env).then(
  ({ exitCode, stdout, stderr }) => {
    process.stdout.write(stdout);
    process.stderr.write(stderr);
    process.exitCode = exitCode;
  },
  (error: unknown) => {
    process.stderr.write(`platform-telegram-webhook failed: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
