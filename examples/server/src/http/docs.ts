import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Env, Hono } from "hono";

/**
 * The API reference pages, rendered in the browser by maintained renderers whose files come from npm and
 * are served by this server (no CDN, works offline): Swagger UI at `/docs` (with "Try it out", authorised by
 * a pasted bearer token) and ReDoc at `/redoc`. Every file lives under `/docs/`, which is excluded from JWT
 * like the pages themselves.
 */

/** Excluded from JWT with the pages (jwt-rbac's defaults exclude `/docs`, `/redoc` and `/docs/oauth2-redirect`). */
export const DOCS_FILE_PATHS: readonly string[] = ["/docs/*"];

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = require.resolve("swagger-ui-dist/package.json").replace(/package\.json$/, "");

/** `/docs/<name>` -> the npm file it serves; nothing else under `/docs/` is served. */
const ASSETS: Readonly<Record<string, { readonly path: string; readonly type: string }>> = {
  "swagger-ui.css": { path: `${SWAGGER_UI_DIR}swagger-ui.css`, type: "text/css; charset=utf-8" },
  "swagger-ui-bundle.js": {
    path: `${SWAGGER_UI_DIR}swagger-ui-bundle.js`,
    type: "text/javascript; charset=utf-8",
  },
  // Loaded by Swagger UI's OAuth2 redirect page (`/docs/oauth2-redirect`) by a relative URL.
  "oauth2-redirect.js": {
    path: `${SWAGGER_UI_DIR}oauth2-redirect.js`,
    type: "text/javascript; charset=utf-8",
  },
  // Named by both pages, so the browser does not ask for /favicon.ico (which is behind JWT).
  "favicon-32x32.png": { path: `${SWAGGER_UI_DIR}favicon-32x32.png`, type: "image/png" },
  "redoc.standalone.js": {
    path: require.resolve("redoc/bundles/redoc.standalone.js"),
    type: "text/javascript; charset=utf-8",
  },
};

// Configuration as a file rather than an inline script, so the pages run under a CSP without 'unsafe-inline'
// scripts. The validator badge is off: it would send the document to validator.swagger.io.
const SWAGGER_INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  oauth2RedirectUrl: window.location.origin + "/docs/oauth2-redirect",
});
`;

// Only this server: no page can load a script, font or image from elsewhere or send a request elsewhere.
// Both renderers set inline styles; ReDoc runs its search in a worker from a blob, and its menu always
// shows Redocly's logo from cdn.redoc.ly, which this policy blocks (the page works without it).
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'self'; " +
  "frame-ancestors 'none'";

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<title>${title}</title>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

export function registerDocs<E extends Env>(app: Hono<E>, title: string): void {
  const swaggerPage = page(
    title,
    '<link rel="stylesheet" href="/docs/swagger-ui.css">',
    '<div id="swagger-ui"></div>\n<script src="/docs/swagger-ui-bundle.js"></script>\n<script src="/docs/swagger-init.js"></script>',
  );
  const redocPage = page(
    title,
    "",
    '<redoc spec-url="/openapi.json"></redoc>\n<script src="/docs/redoc.standalone.js"></script>',
  );
  const files = new Map<string, Promise<Buffer>>();

  app.get("/docs", (c) => c.html(swaggerPage, 200, { "content-security-policy": CSP }));
  app.get("/redoc", (c) => c.html(redocPage, 200, { "content-security-policy": CSP }));
  app.get("/docs/oauth2-redirect", async (c) =>
    c.html(await readFile(`${SWAGGER_UI_DIR}oauth2-redirect.html`, "utf8"), 200, {
      "content-security-policy": CSP,
    }),
  );
  app.get("/docs/swagger-init.js", (c) =>
    c.body(SWAGGER_INIT, 200, { "content-type": "text/javascript; charset=utf-8" }),
  );
  app.get("/docs/:file", async (c, next) => {
    const name = c.req.param("file");
    if (!Object.hasOwn(ASSETS, name)) return next();
    const asset = ASSETS[name] as (typeof ASSETS)[string];
    // Read once, on first use: about 2.5 MB in all, and most servers never serve them.
    let content = files.get(asset.path);
    if (content === undefined) {
      content = readFile(asset.path);
      files.set(asset.path, content);
    }
    return c.body(new Uint8Array(await content), 200, {
      "content-type": asset.type,
      "cache-control": "public, max-age=3600",
    });
  });
}
