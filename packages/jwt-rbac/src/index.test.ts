import { expect, it } from "vitest";
import { createJwtAuth } from "./index.js";

it("binds the Node verifier when running on Node (as the `node` export condition does)", () => {
  const auth = createJwtAuth({
    algorithm: "HS256",
    verificationKeys: ["a-secret-long-enough-for-this-test-0123"],
  });
  expect(auth.verifier).toBe("node:crypto");
});
