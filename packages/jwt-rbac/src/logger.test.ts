import { describe, expect, it } from "vitest";
import { capturedConsole, levelsOnlyLogger } from "../../common/test/plain-loggers.js";
import { createJwtAuth } from "./index.js";

const SECRET = "0123456789abcdef0123456789abcdef";

describe("the logger option takes loggers without child", () => {
  it("writes its warnings and refusals to console", async () => {
    const { console, output } = capturedConsole();
    createJwtAuth({ validate: false, logger: console });
    expect(output()).toMatch(/tokens are NOT verified/);
    const auth = createJwtAuth({ algorithm: "HS256", verificationKeys: [SECRET], logger: console });
    await auth.ready;
    const result = await auth.authenticate({
      method: "GET",
      path: "/agents",
      headers: { authorization: "Bearer not.a.token" },
    });
    expect(result.ok).toBe(false);
    expect(output()).toMatch(/jwt-rbac: .* refused/);
  });

  it("writes to a logger with the four levels only", async () => {
    const { logger, calls } = levelsOnlyLogger();
    const auth = createJwtAuth({ algorithm: "HS256", verificationKeys: [SECRET], logger });
    await auth.ready;
    await auth.authenticate({ method: "GET", path: "/agents", headers: { authorization: "Bearer x.y.z" } });
    expect(calls).toContainEqual({ level: "debug", args: [expect.stringMatching(/refused/)] });
  });
});
