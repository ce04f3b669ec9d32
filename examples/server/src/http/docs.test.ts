import { describe, expect, it } from "vitest";
import { renderApiReference } from "./docs.js";

const document = {
  openapi: "3.1.0",
  info: { title: "T <b>", version: "1.2.3" },
  paths: {
    "/items/{id}": {
      get: {
        summary: "Read <script>alert(1)</script>",
        security: [{ HTTPBearer: [] }],
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[a-z]+$" } },
          { name: "q", in: "query", schema: { type: ["string", "null"], example: 'x"y' } },
        ],
        responses: {
          "200": {
            description: "ok",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Item" } } },
          },
          "404": { description: "missing" },
        },
      },
    },
  },
  components: {
    schemas: {
      Item: {
        type: "object",
        required: ["id"],
        properties: { id: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
      },
    },
    securitySchemes: { HTTPBearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
  },
};

describe("renderApiReference", () => {
  const html = renderApiReference(document);

  it("escapes every text taken from the document", () => {
    expect(html).not.toContain("<script>");
    expect(html).toContain("Read &#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).toContain("<title>T &#60;b&#62;</title>");
    expect(html).toContain("&#34;x\\&#34;y&#34;");
  });

  it("renders operations, parameters, responses, schemas and security", () => {
    expect(html).toContain('<span class="method get">GET</span> <code>/items/{id}</code>');
    expect(html).toContain("<td><code>id</code></td><td>path</td><td>yes</td><td>string</td>");
    expect(html).toContain("pattern <code>^[a-z]+$</code>");
    expect(html).toContain("<td>string | null</td>");
    expect(html).toContain('<a href="#schema-item">Item</a>');
    expect(html).toContain('<section class="schema" id="schema-item">');
    expect(html).toContain("<td><code>tags</code></td><td>array of string</td><td>no</td>");
    expect(html).toContain("Authentication: <code>HTTPBearer</code>");
    expect(html).toContain("<td>http bearer JWT</td>");
  });

  it("loads nothing from elsewhere", () => {
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/i);
  });
});
