import type { AddressInfo } from "node:net";
import type { App } from "../src/app.js";

/** The app on a free loopback port, once its keys are loaded: its URL, and how to stop it. */
export async function listen(app: App): Promise<{ url: string; close: () => void }> {
  await app.ready;
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}
