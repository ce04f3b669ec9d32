import { tooLongIdentifiers } from "../names.js";
import { defineRule } from "../rule.js";

export default defineRule({
  id: "identifier-too-long",
  severity: "error",
  why: "PostgreSQL silently truncates identifiers to 63 bytes, so two long names can collide and code using the full name does not find the object.",
  instead: "Names of at most 63 bytes (UTF-8).",
  squawk: "identifier-too-long",
  silenceable: true,
  check(kind, body, { at, text, report }) {
    for (const found of tooLongIdentifiers({ [kind]: body }, at, text)) report(found.message, found.at);
  },
});
