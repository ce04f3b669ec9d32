import { describe, vi } from "vitest";
import { hostileRequestSuite } from "./fixtures/hostile-requests.js";

// The package's core resolves its platform to the Node one in tests (vitest.config.ts), as the `node` export
// condition does; here the WebCrypto platform (the build Bun, Deno and Workers get) takes its place.
vi.mock("../src/node/runtime.js", async () => await import("../src/runtime.js"));

describe("hostile requests, WebCrypto build", () => hostileRequestSuite("webcrypto"));
