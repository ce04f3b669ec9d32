-- 2.3.0: sessions keep a running summary, and user-scoped listings are sorted by recency.
ALTER TABLE sessions ADD COLUMN summary jsonb;
CREATE INDEX sessions_user_id_updated_at_idx ON sessions (user_id, updated_at DESC);
ALTER TABLE memories ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX memories_user_id_updated_at_idx ON memories (user_id, updated_at DESC);
