-- Baseline of the platform store: what interface version 2.0.0 shipped with.
CREATE TABLE sessions (
  session_id   text PRIMARY KEY,
  session_type text NOT NULL CHECK (session_type IN ('agent', 'team', 'workflow')),
  agent_id     text,
  team_id      text,
  workflow_id  text,
  user_id      text,
  session_data jsonb NOT NULL DEFAULT '{}'::jsonb,
  metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
  runs         jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_agent_id_idx ON sessions (agent_id);

CREATE TABLE memories (
  memory_id  text PRIMARY KEY,
  user_id    text,
  agent_id   text,
  team_id    text,
  memory     jsonb NOT NULL,
  topics     text[] NOT NULL DEFAULT '{}',
  input      text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memories_user_id_idx ON memories (user_id);

-- One row per day (or other period) of aggregated run metrics.
CREATE TABLE metrics (
  id                 text PRIMARY KEY,
  date               date NOT NULL,
  aggregation_period text NOT NULL CHECK (aggregation_period IN ('day', 'month')),
  agent_runs_count   integer NOT NULL DEFAULT 0,
  team_runs_count    integer NOT NULL DEFAULT 0,
  users_count        integer NOT NULL DEFAULT 0,
  token_metrics      jsonb NOT NULL DEFAULT '{}'::jsonb,
  model_metrics      jsonb NOT NULL DEFAULT '{}'::jsonb,
  completed          boolean NOT NULL DEFAULT false,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (date, aggregation_period)
);

CREATE TABLE evals (
  run_id         text PRIMARY KEY,
  eval_type      text NOT NULL CHECK (eval_type IN ('accuracy', 'performance', 'reliability')),
  name           text,
  agent_id       text,
  team_id        text,
  model_id       text,
  model_provider text,
  eval_input     jsonb NOT NULL DEFAULT '{}'::jsonb,
  eval_data      jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Documents loaded into knowledge bases; the content itself lives in the vector store.
CREATE TABLE knowledge (
  id             text PRIMARY KEY,
  name           text NOT NULL,
  description    text,
  type           text,
  size           bigint,
  linked_to      text,
  metadata       jsonb NOT NULL DEFAULT '{}'::jsonb,
  status         text NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'completed', 'failed')),
  status_message text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
