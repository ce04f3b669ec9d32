// The lock that catches an inbox commit in flight lives with the package it tests.
export * from "../../../../../packages/messaging/test/support/block-writes.js";
