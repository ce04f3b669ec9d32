import { describe, vi } from "vitest";
import { auditSuite } from "./fixtures/audit.js";

// The WebCrypto platform (the build Bun, Deno and Workers get) in place of the Node one, as in
// hostile-requests.web.test.ts: the token digest is then asynchronous.
vi.mock("../src/node/runtime.js", async () => await import("../src/runtime.js"));

describe("onDecision, WebCrypto build", () => auditSuite("webcrypto"));
