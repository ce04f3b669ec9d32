import { SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { publicKeyPem, request, signToken, startTestServer, type TestServer } from "./helpers.js";

// `JWT_VERIFICATION_KEY` reaches jwt-rbac as given; jwt-rbac unescapes `\n` in PEM text only.
describe("JWT_VERIFICATION_KEY escapes", () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.cleanup();
    server = undefined;
  });

  const hs256 = (secret: string) =>
    new SignJWT({ scopes: ["config:read"] })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(secret));

  it("an HS256 secret containing the two characters \\n is used unchanged", async () => {
    const secret = String.raw`hs-secret\nthat-is-long-enough-0123456789`;
    server = await startTestServer({ env: { JWT_VERIFICATION_KEY: secret, JWT_ALGORITHM: "HS256" } });
    const path = "/databases/default/migrations";
    expect((await request(server, "GET", path, await hs256(secret))).status).toBe(200);
    // The secret with a real newline in place of the escape is another key.
    expect((await request(server, "GET", path, await hs256(secret.replace("\\n", "\n")))).status).toBe(401);
  });

  it("a PEM key written on one line with \\n escapes still works", async () => {
    const oneLine = (await publicKeyPem()).trim().replaceAll("\n", "\\n");
    server = await startTestServer({ env: { JWT_VERIFICATION_KEY: oneLine } });
    const token = await signToken(["config:read"]);
    expect((await request(server, "GET", "/databases/default/migrations", token)).status).toBe(200);
  });
});
