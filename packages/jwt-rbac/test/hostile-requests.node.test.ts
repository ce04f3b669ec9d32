import { describe } from "vitest";
import { hostileRequestSuite } from "./fixtures/hostile-requests.js";

describe("hostile requests, node:crypto build", () => hostileRequestSuite("node:crypto"));
