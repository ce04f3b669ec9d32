import { describe } from "vitest";
import { dpopBindingSuite } from "./fixtures/dpop-binding.js";

describe("the URL a DPoP proof is bound to, node:crypto build", () => dpopBindingSuite("node:crypto"));
