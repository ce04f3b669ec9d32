import { describe } from "vitest";
import { auditSuite } from "./fixtures/audit.js";

describe("onDecision, Node build", () => auditSuite("node:crypto"));
