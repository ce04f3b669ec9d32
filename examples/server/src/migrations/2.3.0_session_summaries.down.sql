DROP INDEX memories_user_id_updated_at_idx;
ALTER TABLE memories DROP COLUMN created_at;
DROP INDEX sessions_user_id_updated_at_idx;
ALTER TABLE sessions DROP COLUMN summary;
