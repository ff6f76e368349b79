-- A stored vector is reused by any workspace of the store, not only the one that embedded it (a
-- fork, a second clone URL or a vendored copy of the same docs embeds nothing twice): its key,
-- content_hash, is the hash of the model and the embedding input alone. So the lookup index is on
-- content_hash, without the workspace.

DROP INDEX docs_chunks_workspace_content_hash;
CREATE INDEX docs_chunks_content_hash ON docs_chunks (content_hash);
