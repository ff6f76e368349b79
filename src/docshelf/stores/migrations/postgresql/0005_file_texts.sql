-- The text of every indexed file, per ref, so that a file can be read at an indexed commit from
-- the store alone (docs_read on a server without a clone of the repository).
-- docs_file_texts holds each distinct text once, by the sha256 of its UTF-8 bytes: refs and
-- workspaces that share a file share its row, and a commit that changes one file adds one text.
-- docs_ref_files lists each ref's files (lines as the hits count them; size in UTF-8 bytes).
-- Both are written in the transaction that replaces the ref's chunks; a prune deletes the rows of
-- the refs it deletes, then every text no ref references (found through
-- docs_ref_files_text_hash). There is no foreign key from docs_ref_files to docs_file_texts:
-- writers and the prune's sweep of unreferenced texts take turns under an advisory lock instead
-- (postgres.py, TEXTS_LOCK_KEY), so a prune never fails on a writer's reference, nor a writer on
-- a text that a prune deletes.
--
-- A search may be limited to a set of paths: the (workspace, ref) index gets the path as its
-- last column, so the exact search over such a subset reads only the subset's rows. It still
-- serves every lookup of a whole ref.

CREATE TABLE docs_file_texts (
    text_hash text PRIMARY KEY,
    text text NOT NULL
);

CREATE TABLE docs_ref_files (
    workspace text NOT NULL,
    ref text NOT NULL,
    path text NOT NULL,
    text_hash text NOT NULL,
    lines integer NOT NULL,
    size bigint NOT NULL,
    PRIMARY KEY (workspace, ref, path)
);

CREATE INDEX docs_ref_files_text_hash ON docs_ref_files (text_hash);

CREATE INDEX docs_chunks_workspace_ref_path ON docs_chunks (workspace, ref, path);
DROP INDEX docs_chunks_workspace_ref;
