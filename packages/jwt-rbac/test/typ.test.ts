import { beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import { ConfigError, type JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { ADAPTERS, startServer } from "./fixtures/servers.js";

// RFC 9068 / RFC 8725 §3.11: with `requireTyp: "at+jwt"` an ID token (typ JWT, or none) presented as an
// access token is refused; `at+jwt` is compared case-insensitively, with or without `application/`.

let keys: TestKeys;
beforeAll(async () => {
  keys = await testKeys();
});

const options = (): JwtRbacOptions => ({
  algorithm: "ES256",
  verificationKeys: [keys.es256.publicPem],
  requireTyp: "at+jwt",
});
/** Signed with and without a `kid` (the key is a PEM: any kid falls back to it), so neither path skips the check. */
const KIDS = [undefined, "key-1"] as const;
const token = (typ: string | undefined, kid?: string) =>
  sign({ sub: "u1" }, "ES256", keys.es256.privateKey, {
    ...(typ === undefined ? {} : { typ }),
    ...(kid === undefined ? {} : { kid }),
  });

const ACCEPTED = ["at+jwt", "AT+JWT", "application/at+jwt", "Application/At+Jwt"];
const REFUSED = [
  undefined,
  "JWT",
  "jwt",
  "",
  "at+jwt ",
  " at+jwt",
  "at+jwt\u0000",
  "application/at+jwt; charset=utf-8",
  "text/at+jwt",
  "application/application/at+jwt",
  "dpop+jwt",
  "at%2Bjwt",
  "at+jwt\u00a0",
];

describe.each([
  ["webcrypto", webRuntime],
  ["node:crypto", nodeRuntime],
])("requireTyp, %s build", (_name, runtime) => {
  it.each(KIDS)(
    "accepts at+jwt in every spelling RFC 8725 allows and refuses every other typ (kid %s)",
    async (kid) => {
      const auth = createJwtAuthOn(runtime, options());
      for (const typ of ACCEPTED) {
        const result = await auth.authenticate({
          method: "GET",
          path: "/x",
          headers: { authorization: `Bearer ${await token(typ, kid)}` },
        });
        expect(result.ok, typ).toBe(true);
      }
      for (const typ of [...REFUSED, ["at+jwt"], 1, null]) {
        const t = await sign({ sub: "u1" }, "ES256", keys.es256.privateKey, {
          typ,
          ...(kid === undefined ? {} : { kid }),
        });
        const result = await auth.authenticate({
          method: "GET",
          path: "/x",
          headers: { authorization: `Bearer ${t}` },
        });
        expect(result.ok ? "ok" : result.error.reason, JSON.stringify(typ)).toBe("invalid_typ");
      }
    },
  );

  it("reads no typ without the option", async () => {
    const { requireTyp: _, ...untyped } = options();
    const auth = createJwtAuthOn(runtime, untyped);
    const result = await auth.authenticate({
      method: "GET",
      path: "/x",
      headers: { authorization: `Bearer ${await token("JWT")}` },
    });
    expect(result.ok).toBe(true);
  });
});

it("refuses a requireTyp that is not a media type", () => {
  for (const typ of ["", "at jwt", "at+jwt\n", "/at+jwt", 5]) {
    expect(() => createJwtAuthOn(nodeRuntime, { ...options(), requireTyp: typ as string })).toThrow(
      ConfigError,
    );
  }
});

describe.each(ADAPTERS)("requireTyp over HTTP, %s", (adapter) => {
  it.each(KIDS)(
    "answers 401 invalid_token for an ID token and 200 for an access token (kid %s)",
    async (kid) => {
      const server = await startServer(adapter, options());
      try {
        const idToken = await fetch(`${server.url}/agents`, {
          headers: { authorization: `Bearer ${await token("JWT", kid)}` },
        });
        expect(idToken.status).toBe(401);
        expect(idToken.headers.get("www-authenticate")).toBe(
          'Bearer realm="platform", error="invalid_token", error_description="Invalid token: wrong token type (typ), an access token is required"',
        );
        expect(await idToken.json()).toEqual({
          detail: "Invalid token: wrong token type (typ), an access token is required",
          error_code: "UNAUTHENTICATED",
        });
        const access = await fetch(`${server.url}/agents`, {
          headers: { authorization: `Bearer ${await token("at+jwt", kid)}` },
        });
        expect(access.status).toBe(200);
      } finally {
        await server.close();
      }
    },
  );
});
