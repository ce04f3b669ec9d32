-- 2.5.0: human-in-the-loop approvals; a run pauses on a tool call until someone decides.
CREATE TABLE approvals (
  id           text PRIMARY KEY,
  run_id       text NOT NULL,
  session_id   text REFERENCES sessions (session_id) ON DELETE CASCADE,
  agent_id     text,
  tool_name    text NOT NULL,
  tool_args    jsonb NOT NULL DEFAULT '{}'::jsonb,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
  requested_at timestamptz NOT NULL DEFAULT now(),
  decided_at   timestamptz,
  decided_by   text,
  CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE INDEX approvals_pending_idx ON approvals (requested_at) WHERE status = 'pending';
CREATE INDEX approvals_run_id_idx ON approvals (run_id);
