/**
 * Renders an OpenAPI 3.1 document as one self-contained HTML page: no script, no stylesheet or font from
 * a CDN, so the reference works on offline machines and under a strict Content-Security-Policy.
 */

type Json = unknown;
type JsonObject = Record<string, Json>;

const METHODS = ["get", "put", "post", "patch", "delete", "options", "head"] as const;

function isObject(value: Json): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: Json): string {
  return typeof value === "string" ? value : "";
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function anchor(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1);
}

/** A short, readable type: `string`, `string | null`, `array of string`, or a link to a named schema. */
function typeOf(schema: Json): string {
  if (!isObject(schema)) return "any";
  if (typeof schema.$ref === "string") {
    const name = refName(schema.$ref);
    return `<a href="#schema-${anchor(name)}">${escapeHtml(name)}</a>`;
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options)) return options.map(typeOf).join(" | ");
  }
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => escapeHtml(String(t))).join(" | ");
  if (type === "array") return `array of ${typeOf(schema.items)}`;
  if (type === "object" && isObject(schema.additionalProperties)) {
    return `map of ${typeOf(schema.additionalProperties)}`;
  }
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => escapeHtml(JSON.stringify(v))).join(" | ");
  if (schema.const !== undefined) return escapeHtml(JSON.stringify(schema.const));
  const base = typeof type === "string" ? escapeHtml(type) : "any";
  return schema.nullable === true ? `${base} | null` : base;
}

function constraints(schema: Json): string {
  if (!isObject(schema)) return "";
  const parts: string[] = [];
  if (typeof schema.pattern === "string") parts.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if (schema.example !== undefined)
    parts.push(`example <code>${escapeHtml(JSON.stringify(schema.example))}</code>`);
  return parts.join(", ");
}

function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return "";
  const head = headers.map((h) => `<th>${h}</th>`).join("");
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${cell}</td>`).join("")}</tr>`).join("\n");
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function renderParameters(parameters: Json): string {
  if (!Array.isArray(parameters)) return "";
  const rows = parameters
    .filter(isObject)
    .map((p) => [
      `<code>${escapeHtml(text(p.name))}</code>`,
      escapeHtml(text(p.in)),
      p.required === true ? "yes" : "no",
      typeOf(p.schema),
      [
        escapeHtml(text(p.description) || text(isObject(p.schema) ? p.schema.description : "")),
        constraints(p.schema),
      ]
        .filter((s) => s !== "")
        .join("; "),
    ]);
  return rows.length === 0
    ? ""
    : `<h4>Parameters</h4>${table(["name", "in", "required", "type", "description"], rows)}`;
}

function renderResponses(responses: Json): string {
  if (!isObject(responses)) return "";
  const rows = Object.entries(responses).map(([status, response]) => {
    const r = isObject(response) ? response : {};
    const content = isObject(r.content) ? r.content : {};
    const bodies = Object.entries(content).map(
      ([mediaType, media]) =>
        `${typeOf(isObject(media) ? media.schema : undefined)} <small>(${escapeHtml(mediaType)})</small>`,
    );
    return [`<code>${escapeHtml(status)}</code>`, escapeHtml(text(r.description)), bodies.join("<br>")];
  });
  return `<h4>Responses</h4>${table(["status", "meaning", "body"], rows)}`;
}

function renderSecurity(operation: JsonObject, document: JsonObject): string {
  const security = operation.security ?? document.security;
  if (!Array.isArray(security) || security.length === 0) {
    return `<p class="auth">No authentication.</p>`;
  }
  const names = security.filter(isObject).flatMap((requirement) => Object.keys(requirement));
  return `<p class="auth">Authentication: ${names.map((n) => `<code>${escapeHtml(n)}</code>`).join(" or ")}</p>`;
}

function renderOperation(path: string, method: string, operation: JsonObject, document: JsonObject): string {
  const id = `op-${anchor(`${method} ${path}`)}`;
  const summary = text(operation.summary);
  const description = text(operation.description);
  return `<section class="operation" id="${id}">
<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
${summary ? `<p><strong>${escapeHtml(summary)}</strong></p>` : ""}
${description ? `<p>${escapeHtml(description)}</p>` : ""}
${renderSecurity(operation, document)}
${renderParameters(operation.parameters)}
${renderResponses(operation.responses)}
</section>`;
}

function renderSchema(name: string, schema: Json): string {
  const s = isObject(schema) ? schema : {};
  const properties = isObject(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  const rows = Object.entries(properties).map(([property, propertySchema]) => [
    `<code>${escapeHtml(property)}</code>`,
    typeOf(propertySchema),
    required.has(property) ? "yes" : "no",
    [
      escapeHtml(text(isObject(propertySchema) ? propertySchema.description : "")),
      constraints(propertySchema),
    ]
      .filter((part) => part !== "")
      .join("; "),
  ]);
  return `<section class="schema" id="schema-${anchor(name)}"><h3>${escapeHtml(name)}</h3>
${rows.length > 0 ? table(["field", "type", "required", "description"], rows) : `<p>${typeOf(schema)}</p>`}
</section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{margin-bottom:0}code{font:13px ui-monospace,monospace;background:#f1f3f6;padding:0 .25em;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d8dde5;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}.operation,.schema{border-top:1px solid #d8dde5;padding-top:.5rem}
.method{display:inline-block;min-width:4.5em;text-align:center;color:#fff;border-radius:3px;padding:0 .4em;font-size:13px}
.get{background:#2f7d32}.post{background:#1f5fa8}.put,.patch{background:#9a6700}.delete{background:#b42318}
.auth{color:#555}nav ul{columns:2}`;

/** The document's operations and schemas as plain HTML, rendered once on the server. */
export function renderApiReference(openApiDocument: object): string {
  const document = openApiDocument as JsonObject;
  const info = isObject(document.info) ? document.info : {};
  const title = text(info.title) || "API reference";
  const paths = isObject(document.paths) ? document.paths : {};
  const operations: string[] = [];
  const index: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      operations.push(renderOperation(path, method, operation, document));
      index.push(
        `<li><a href="#op-${anchor(`${method} ${path}`)}">${method.toUpperCase()} <code>${escapeHtml(path)}</code></a></li>`,
      );
    }
  }
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const schemaSections = Object.entries(schemas).map(([name, schema]) => renderSchema(name, schema));
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  const schemeRows = Object.entries(schemes).map(([name, scheme]) => {
    const s = isObject(scheme) ? scheme : {};
    return [
      `<code>${escapeHtml(name)}</code>`,
      escapeHtml([text(s.type), text(s.scheme), text(s.bearerFormat)].filter(Boolean).join(" ")),
      escapeHtml(text(s.description)),
    ];
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>Version <code>${escapeHtml(text(info.version))}</code> · OpenAPI ${escapeHtml(text(document.openapi))} · <a href="/openapi.json">openapi.json</a></p>
${text(info.description) ? `<p>${escapeHtml(text(info.description))}</p>` : ""}
<nav><h2>Operations</h2><ul>${index.join("\n")}</ul></nav>
${schemeRows.length > 0 ? `<h2>Authentication</h2>${table(["scheme", "type", "description"], schemeRows)}` : ""}
<h2>Operations</h2>
${operations.join("\n")}
<h2>Schemas</h2>
${schemaSections.join("\n")}
</body></html>
`;
}
