import { createHash } from "node:crypto";
import type { Runtime } from "../token/verify/signature-types.js";
import { nodeBase64Url } from "./base64url.js";
import { readJwksFile } from "./jwks-file.js";
import { nodeCryptoVerifier } from "./signature.js";

/** The Node runtime build: node:crypto one-shot verification and JWKS files. Swapped in by the `node` build. */
export const runtime: Runtime = {
  verifier: nodeCryptoVerifier,
  base64Url: nodeBase64Url,
  readJwksFile,
  sha256Hex: (text) => createHash("sha256").update(text).digest("hex"),
};
