import { configError } from "@agent-platform/common/internal";
import { portableBase64Url } from "./token/verify/base64url.js";
import { webCryptoVerifier } from "./token/verify/signature.js";
import type { Runtime } from "./token/verify/signature-types.js";

/**
 * The runtime-neutral build (jose over WebCrypto). The package's `node` export condition points at a
 * build where this module is replaced by `src/node/runtime.ts`.
 */
export const runtime: Runtime = {
  verifier: webCryptoVerifier,
  base64Url: portableBase64Url,
  readJwksFile(path: string): unknown {
    throw configError(
      "jwt-rbac",
      `jwksFile ("${path}") needs Node.js file access; on this runtime pass the JWKS inline with \`jwks\``,
    );
  },
  // WebCrypto, on every runtime with `crypto.subtle` (Node 20, Bun, Deno, workerd, browsers).
  async sha256Hex(text: string): Promise<string> {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
    let hex = "";
    for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
    return hex;
  },
};
