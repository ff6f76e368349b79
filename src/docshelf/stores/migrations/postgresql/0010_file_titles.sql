-- Each file's title, embedded: its first heading and the words of its path (chunking
-- title_input), by the hash of the model and that input (title_hash, as a chunk's content_hash),
-- as little-endian float32 bytes (title_embedding). A search adds how near a candidate's file
-- title is to the query (search.title_prior). A ref indexed before this migration, or with no
-- embedder, has neither (NULL): its files get no title score. A title is reused by hash, from any
-- ref of any workspace (docs_ref_files_title_hash), as a chunk's vector is.

ALTER TABLE docs_ref_files ADD COLUMN title_hash text;
ALTER TABLE docs_ref_files ADD COLUMN title_embedding bytea;
CREATE INDEX docs_ref_files_title_hash ON docs_ref_files (title_hash);
