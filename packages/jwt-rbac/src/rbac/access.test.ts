import { describe, expect, it } from "vitest";
import { createJwtAuth } from "../index.js";

const key = { algorithm: "HS256", verificationKeys: ["a-secret-long-enough-for-this-test-0123"] } as const;

describe("routeAccess: what the tables in force require", () => {
  it("reads the default table, the extra mappings and the excluded paths", () => {
    const auth = createJwtAuth({
      ...key,
      authorization: true,
      scopeMappings: { "GET /whatsapp/inbox": ["config:read"] },
      excludedRoutePaths: ["/health", "/whatsapp/webhook"],
    });
    expect(auth.routeAccess("POST", "/databases/{db_id}/migrate")).toEqual({
      public: false,
      scopes: ["config:write"],
    });
    expect(auth.routeAccess("get", "/databases/{db_id}/migrations")).toEqual({
      public: false,
      scopes: ["config:read"],
    });
    expect(auth.routeAccess("GET", "/whatsapp/inbox").scopes).toEqual(["config:read"]);
    expect(auth.routeAccess("POST", "/whatsapp/webhook").public).toBe(true);
    expect(auth.routeAccess("GET", "/health").public).toBe(true);
    // Not excluded here, though it is by default; unmapped, so (unmappedRoutes "deny") admin only.
    expect(auth.routeAccess("GET", "/docs")).toEqual({ public: false, scopes: ["platform:admin"] });
  });

  it("an unmapped route needs any token under unmappedRoutes allow, the admin scope under deny", () => {
    const allow = createJwtAuth({ ...key, authorization: true, unmappedRoutes: "allow" });
    expect(allow.routeAccess("GET", "/unmapped").scopes).toEqual([]);
    const deny = createJwtAuth({
      ...key,
      authorization: true,
      unmappedRoutes: "deny",
      adminScope: "root:all",
    });
    expect(deny.routeAccess("GET", "/unmapped")).toEqual({ public: false, scopes: ["root:all"] });
  });

  it("OPTIONS needs what the tables say, as every method (only a CORS preflight is public, per request)", () => {
    const auth = createJwtAuth({
      ...key,
      authorization: true,
      scopeMappings: { "OPTIONS /reports": ["reports:read"] },
    });
    expect(auth.routeAccess("OPTIONS", "/reports")).toEqual({ public: false, scopes: ["reports:read"] });
    expect(auth.routeAccess("OPTIONS", "/agents")).toEqual({ public: false, scopes: ["platform:admin"] });
    expect(auth.routeAccess("OPTIONS", "/health").public).toBe(true);
  });

  it("with authorization off, every protected route needs just a valid token", () => {
    const auth = createJwtAuth({ ...key, authorization: false });
    expect(auth.routeAccess("POST", "/databases/{db_id}/migrate")).toEqual({ public: false, scopes: [] });
  });
});
