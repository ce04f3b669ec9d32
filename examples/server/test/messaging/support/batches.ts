// The overlapping-delivery plans live with the package they test.
export * from "../../../../../packages/messaging/test/support/batches.js";
