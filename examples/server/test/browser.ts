import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export const CHROMIUM = "/usr/bin/chromium";

/** Flags for a quiet, offline, sandbox-less headless Chromium in CI containers. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Debian's `chromium`, installed with apt when missing (as root, where apt exists). Returns why it is not
 * available instead of throwing, so the browser tests can be skipped with that reason shown.
 */
export function ensureChromium(): { ok: true } | { ok: false; reason: string } {
  if (existsSync(CHROMIUM)) return { ok: true };
  if (process.platform !== "linux" || process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
    return {
      ok: false,
      reason: `${CHROMIUM} is missing and cannot be installed here (needs root and apt-get)`,
    };
  }
  try {
    const options = {
      stdio: "ignore",
      timeout: 600_000,
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    } as const;
    execFileSync("apt-get", ["update"], options);
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "chromium"], options);
  } catch (error) {
    return { ok: false, reason: `apt-get install chromium failed: ${(error as Error).message}` };
  }
  return existsSync(CHROMIUM)
    ? { ok: true }
    : { ok: false, reason: `apt-get ran but ${CHROMIUM} is still missing` };
}
