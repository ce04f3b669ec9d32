import { createApp } from "./app.js";

const port = Number(process.env.PORT ?? 3000);
const app = createApp();
await app.ready;
const server = app.listen(port, () => {
  console.log(`express-app listening on http://localhost:${port}`);
});

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
