import { type Request, Router } from "express";
import { HttpError } from "../errors.js";
import type { AgentStore } from "../store.js";

function requestedName(req: Request): string {
  const name = (req.body as { name?: unknown } | undefined)?.name;
  if (typeof name !== "string" || name.trim() === "")
    throw new HttpError(422, "VALIDATION_ERROR", "name is required");
  return name.trim();
}

/** The app's existing routes; authorization is done by the middleware in front of them. */
export function agentsRouter(store: AgentStore): Router {
  const router = Router();

  router.get("/agents", (req, res) => {
    // Listing routes get the ids the caller may see ({"*"} for all).
    res.json({ agents: store.list(req.auth?.accessibleResourceIds ?? new Set()) });
  });

  router.get("/agents/:id", (req, res) => {
    const agent = store.get(req.params.id);
    if (agent === undefined) throw new HttpError(404, "NOT_FOUND", `agent ${req.params.id} not found`);
    res.json(agent);
  });

  router.post("/agents", (req, res) => {
    res.status(201).json(store.create(requestedName(req), req.auth?.userId ?? null));
  });

  router.delete("/agents/:id", (req, res) => {
    if (!store.delete(req.params.id))
      throw new HttpError(404, "NOT_FOUND", `agent ${req.params.id} not found`);
    res.status(204).end();
  });

  router.post("/agents/:id/runs", (req, res) => {
    if (store.get(req.params.id) === undefined)
      throw new HttpError(404, "NOT_FOUND", `agent ${req.params.id} not found`);
    res.status(202).json({ agent: req.params.id, runBy: req.auth?.userId ?? null, status: "queued" });
  });

  return router;
}
