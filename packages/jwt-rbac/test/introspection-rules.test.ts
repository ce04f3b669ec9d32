import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JwtRbacOptions } from "../src/index.js";
import { type AuthorizationServer, startAuthorizationServer } from "./fixtures/authorization-server.js";
import { introspectedOptions } from "./fixtures/introspected-options.js";
import { MOUNTED_ADAPTERS, startMounted } from "./fixtures/mounted.js";

// What an introspection answer is trusted for, and which tokens may be sent, through every adapter (and
// the WebCrypto build through fetch-webcrypto): only the token's whole text finds its answer, only the
// boolean `true` is active, and a JWT sent to introspection is held to `requireTyp` like one verified here.

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(async () => {
  await as.close();
});

const NOW = () => Math.floor(Date.now() / 1000);
const claims = () => ({
  active: true,
  sub: "svc-1",
  scope: "agents:read",
  aud: "api://platform",
  exp: NOW() + 600,
});

const options = (extra: Partial<JwtRbacOptions> = {}) =>
  introspectedOptions(as, { tokenTypes: ["opaque", "jwt"] }, extra);

let serial = 0;
/** A JWT signed with the authorization server's key, with this header (typ and kid as given). */
const jwt = (header: Record<string, unknown>, payload: Record<string, unknown> = {}) =>
  new SignJWT({ sub: "svc-1", n: serial++, ...payload })
    .setProtectedHeader({ alg: "ES256", ...header })
    .setIssuer(as.issuer)
    .setAudience("api://platform")
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(as.key.privateKey);

async function status(url: string, token: string) {
  const response = await fetch(`${url}/agents`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { detail?: string };
  return response.status === 200 ? "ok" : `${response.status} ${body.detail}`;
}

const INACTIVE = "401 Invalid token: the token is not active";
const WRONG_TYP = "401 Invalid token: wrong token type (typ), an access token is required";

describe.each(MOUNTED_ADAPTERS)("introspection answers and rules, %s", (adapter) => {
  it("finds an answer by the token's whole text: tokens sharing a prefix or a suffix never share one", async () => {
    const server = await startMounted(adapter, options());
    try {
      const unique = `${Date.now()}${serial++}`;
      const prefix = `p${unique}-${"x".repeat(64)}`;
      const suffix = `${"y".repeat(64)}-${unique}`;
      const known = as.opaque(claims(), `${prefix}${suffix}`);
      // Asked twice each: the second answer comes from the caches (verified-token cache, answer cache).
      for (let i = 0; i < 2; i++) expect(await status(server.url, known)).toBe("ok");
      for (const stranger of [
        `${prefix}z${suffix}`,
        `${prefix}`,
        `${prefix}${suffix}z`,
        `z${prefix}${suffix}`,
        suffix,
      ]) {
        for (let i = 0; i < 2; i++) expect(await status(server.url, stranger), stranger).toBe(INACTIVE);
      }
      // JWTs sent to introspection share their header's 30-odd characters and more.
      const header = { typ: "at+jwt", kid: as.key.kid };
      const activeJwt = await jwt(header);
      as.answer(activeJwt, claims());
      const otherJwt = await jwt(header);
      expect(otherJwt.slice(0, 40)).toBe(activeJwt.slice(0, 40));
      for (let i = 0; i < 2; i++) {
        expect(await status(server.url, activeJwt)).toBe("ok");
        expect(await status(server.url, otherJwt)).toBe(INACTIVE);
      }
    } finally {
      await server.close();
    }
  });

  it('takes only the boolean true as active: not "true", 1, null, or a missing member', async () => {
    const server = await startMounted(adapter, options());
    try {
      const { active: _, ...rest } = claims();
      const answers: [unknown, string][] = [
        [true, "ok"],
        ["true", INACTIVE],
        ["TRUE", INACTIVE],
        [1, INACTIVE],
        ["1", INACTIVE],
        [null, INACTIVE],
        [undefined, INACTIVE],
        [[true], INACTIVE],
        [{}, INACTIVE],
        [false, INACTIVE],
      ];
      for (const [active, expected] of answers) {
        const token = `answer-${Date.now()}-${serial++}`;
        as.answer(token, active === undefined ? rest : { ...rest, active });
        expect(await status(server.url, token), JSON.stringify(active)).toBe(expected);
      }
    } finally {
      await server.close();
    }
  });

  it("holds a JWT sent to introspection to requireTyp, with or without a kid, before asking", async () => {
    const server = await startMounted(adapter, options({ requireTyp: "at+jwt" }));
    try {
      for (const kid of [undefined, as.key.kid]) {
        const withKid = kid === undefined ? {} : { kid };
        // An ID token (typ JWT) the authorization server answers active for: refused, and never sent.
        const refused = [
          await jwt({ typ: "JWT", ...withKid }),
          await jwt({ ...withKid }),
          await jwt({ typ: "dpop+jwt", ...withKid }),
          await jwt({ typ: "at+jwt", crit: ["b64"], b64: true, ...withKid }),
        ];
        const before = as.count("introspect");
        for (const token of refused) {
          as.answer(token, claims());
          const answer = await status(server.url, token);
          expect(answer, `${kid} ${token.split(".")[0]}`).toMatch(
            /^401 Invalid token: (wrong token type|unsupported critical)/,
          );
        }
        expect(await status(server.url, refused[0] as string)).toBe(WRONG_TYP);
        expect(as.count("introspect")).toBe(before);
        // An access token goes on to introspection, which decides.
        const accessToken = await jwt({ typ: "at+jwt", ...withKid });
        as.answer(accessToken, claims());
        expect(await status(server.url, accessToken)).toBe("ok");
        expect(await status(server.url, await jwt({ typ: "application/AT+JWT", ...withKid }))).toBe(INACTIVE);
        expect(as.count("introspect")).toBe(before + 2);
      }
      // An opaque token has no header: introspection alone decides.
      expect(await status(server.url, as.opaque(claims()))).toBe("ok");
    } finally {
      await server.close();
    }
  });
});
