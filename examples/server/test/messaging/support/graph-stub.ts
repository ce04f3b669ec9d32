// The stand-ins for the chat products' APIs live with the package they test; the server's tests use the same.
export * from "../../../../../packages/messaging/test/support/api-stubs.js";
