#!/usr/bin/env node
// `pnpm dev-token` at the repository root (pnpm runs a root bin without its script banner, so stdout carries
// the token alone). Runs src/dev-token.ts from the server's directory, as `pnpm start` runs the server, so a
// relative PLATFORM_DATA_DIR names the same data directory.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

process.chdir(dirname(dirname(fileURLToPath(import.meta.url))));
const { register } = await import("tsx/esm/api");
register();
await import("../src/dev-token.ts");
