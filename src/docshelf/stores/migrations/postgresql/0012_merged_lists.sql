-- A search over the current refs of many workspaces read each asked term's list in every ref: at
-- 1,000 workspaces 16,612 rows of docs_term_lists for a question of 19 terms, each on a page of
-- its own (the rows are laid out by ref, as they were written), 98 to 203 ms to fetch.
-- docs_merged_lists holds, per term, the lists of the current refs of every workspace one after
-- the other, in one row (postgres_merged.py): BM25 over all took 30.8 ms on average against
-- 102.6, with the same rankings (BENCHMARKS.md, "third step").
-- - Each write of a ref's lists gets a new `key` (docs_ref_stats): a part of a merged list names
--   the write it was copied from, so a ref written again, or pruned, is never read from there.
-- - docs_merged_refs lists the keys merged, with their chunk counts; docs_merged_lists holds
--   each term's parts in the order of their keys: the keys, the number of entries of each part,
--   then the entries as in docs_term_lists.
-- - The lists are merged again, in one transaction, when the current refs have moved on enough
--   (postgres_merged.merge); until then a search reads the refs merged from here and the others
--   from docs_term_lists.
-- The lists are kept uncompressed (STORAGE EXTERNAL): each is read whole, and the question above
-- read its merged lists in 27 to 30 ms uncompressed against 42 to 47 compressed.

ALTER TABLE docs_ref_stats ADD COLUMN key bigserial NOT NULL;

CREATE TABLE docs_merged_refs (
    key bigint PRIMARY KEY,
    chunks integer NOT NULL
);

CREATE TABLE docs_merged_lists (
    term text PRIMARY KEY,
    keys bytea NOT NULL,
    counts bytea NOT NULL,
    ids bytea NOT NULL,
    tfs bytea NOT NULL,
    lengths bytea NOT NULL
);

ALTER TABLE docs_merged_lists
    ALTER COLUMN keys SET STORAGE EXTERNAL,
    ALTER COLUMN counts SET STORAGE EXTERNAL,
    ALTER COLUMN ids SET STORAGE EXTERNAL,
    ALTER COLUMN tfs SET STORAGE EXTERNAL,
    ALTER COLUMN lengths SET STORAGE EXTERNAL;
