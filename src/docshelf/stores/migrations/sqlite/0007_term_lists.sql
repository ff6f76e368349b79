-- Keyword ranking reads each ref's own inverted lists (stores/bm25.py), as PostgreSQL does, in
-- place of FTS5: FTS5 scored every chunk holding any asked term, across every ref of the store
-- (15 to 25 ms a query on the 19,347 chunks of the AWS guides), and its statistics were the
-- whole store's.
-- - term_lists: per ref and term, how many of the ref's chunks hold it and, in the same order,
--   their ids (ascending), the term's column-weighted frequency in each and each one's length,
--   as arrays of big-endian int64, float32 and int32 (stores/bm25.py, the same bytes as on
--   PostgreSQL). A query reads the lists of its few terms through the unique index.
-- - ref_stats: each ref's chunk count and total length (BM25's N and mean length).
-- Both are written in the transaction that writes the ref's chunks, and deleted with them. They
-- are made by the store when it opens (sqlite_schema.make_terms): the terms are made in Python,
-- which no SQL can do; the 'terms' mark is removed so that it does.

DROP TRIGGER chunks_terms_delete;
DROP TRIGGER chunk_terms_insert;
DROP TRIGGER chunk_terms_delete;
DROP TABLE chunks_vocab;
DROP TABLE chunks_fts;
DROP TABLE chunk_terms;

CREATE TABLE term_lists (
    workspace TEXT NOT NULL,
    ref TEXT NOT NULL,
    term TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    ids BLOB NOT NULL,
    tfs BLOB NOT NULL,
    lengths BLOB NOT NULL
);

CREATE UNIQUE INDEX term_lists_by_term ON term_lists (workspace, ref, term);

CREATE TABLE ref_stats (
    workspace TEXT NOT NULL,
    ref TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (workspace, ref)
);

DELETE FROM meta WHERE key = 'terms';
