-- 2.5.6: re-uploading a document is detected by its content hash, and a name is unique per knowledge base.
-- The unique index fails on existing duplicates; the whole run then rolls back (deduplicate, then migrate).
ALTER TABLE knowledge ADD COLUMN content_hash text;
CREATE INDEX knowledge_content_hash_idx ON knowledge (content_hash);
CREATE UNIQUE INDEX knowledge_linked_to_name_key ON knowledge (coalesce(linked_to, ''), name);
