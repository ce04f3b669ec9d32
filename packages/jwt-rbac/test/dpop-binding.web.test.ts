import { describe, vi } from "vitest";
import { dpopBindingSuite } from "./fixtures/dpop-binding.js";

// The WebCrypto platform (the build Bun, Deno and Workers get) in place of the Node one, as in hostile-requests.
vi.mock("../src/node/runtime.js", async () => await import("../src/runtime.js"));

describe("the URL a DPoP proof is bound to, WebCrypto build", () => dpopBindingSuite("webcrypto"));
