-- Keyword ranking is BM25 over docshelf's own terms (stores/terms.py), as on SQLite, in place of
-- ts_rank over the english configuration (no inverse document frequency; `LEDGER-409` split).
-- - Each chunk keeps its distinct terms, each one's frequency weighted by column, and its length
--   in terms (the source of the lists below; filled by the store when it opens, since the terms
--   are made in Python: postgres_text.make_terms).
-- - docs_term_lists is the inverted index of each ref: per term, how many of the ref's chunks
--   hold it and, in the same order, their ids, frequencies and lengths. A query reads the lists
--   of its few terms through the primary key, and BM25 is summed over them alone.
-- - docs_ref_stats keeps each ref's chunk count and total length (BM25's N and mean length).
-- Both are written in the transaction that writes the ref's chunks and deleted with them.

DROP INDEX docs_chunks_tsv;
ALTER TABLE docs_chunks DROP COLUMN tsv;
ALTER TABLE docs_chunks
    ADD COLUMN terms text[],
    ADD COLUMN tfs real[],
    ADD COLUMN length integer;

CREATE TABLE docs_term_lists (
    workspace text NOT NULL,
    ref text NOT NULL,
    term text NOT NULL,
    chunks integer NOT NULL,
    ids bigint[] NOT NULL,
    tfs real[] NOT NULL,
    lengths integer[] NOT NULL,
    PRIMARY KEY (workspace, ref, term)
);

CREATE TABLE docs_ref_stats (
    workspace text NOT NULL,
    ref text NOT NULL,
    chunks integer NOT NULL,
    length bigint NOT NULL,
    PRIMARY KEY (workspace, ref)
);
