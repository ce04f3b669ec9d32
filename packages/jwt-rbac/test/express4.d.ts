// Express 4 is installed under the alias `express4` for the compatibility tests; its API surface used
// here is the same as Express 5's.
declare module "express4" {
  import express from "express";
  export default express;
}
