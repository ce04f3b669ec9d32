DROP INDEX knowledge_linked_to_name_key;
DROP INDEX knowledge_content_hash_idx;
ALTER TABLE knowledge DROP COLUMN content_hash;
