-- The text of every indexed file, per ref, so that a file can be read at an indexed commit from
-- the store alone (docs_read on a server without a clone of the repository).
-- file_texts holds each distinct text once, by the sha256 of its UTF-8 bytes: refs that share a
-- file share its row, and a commit that changes one file adds one text. ref_files lists each
-- ref's files (lines as the hits count them; size in UTF-8 bytes). Both are written in the
-- transaction that replaces the ref's chunks; a prune deletes the rows of the refs it deletes,
-- then every text no ref references (found through ref_files_by_hash).

CREATE TABLE file_texts (
    text_hash TEXT PRIMARY KEY,
    text TEXT NOT NULL
);

CREATE TABLE ref_files (
    workspace TEXT NOT NULL,
    ref TEXT NOT NULL,
    path TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    lines INTEGER NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (workspace, ref, path)
);

CREATE INDEX ref_files_by_hash ON ref_files (text_hash);

-- A search may be limited to a set of paths: the text search finds the subset's row ids through
-- this index (chunks_by_ref stays: the largest id of a ref, which names its vector matrix, is one
-- step down it).
CREATE INDEX chunks_by_path ON chunks (workspace, ref, path);
