-- The HNSW index holds each distinct vector once. A passage stored by many workspaces (a vendored
-- copy of shared docs, a fork) or many refs was a node of the graph per row: at 1,000 workspaces
-- each text had about 20 copies, which crowded a walk's candidates (60 copies of one passage
-- were a question's 60 nearest rows) and left the graph poorly connected (0.45 of the exact 60
-- found). docs_vectors keeps one row per content_hash (the hash of the model and the embedding
-- input, so one vector per hash); a walk finds the nearest texts there and joins them to the
-- rows of the searched refs through docs_chunks_content_hash. The rows keep their vector for
-- exact search. A write adds the vectors its rows bring; a prune that deletes a ref deletes the
-- vectors no row holds. A docshelf of an older schema, still running, writes no vectors: stop
-- the processes that write to a store before a new version opens it.
--
-- BM25 over many refs sums each asked term's counts over the union of refs: the index by term
-- first reads those counts (INCLUDE chunks, from the index alone) for a few terms, where the
-- primary key read every term of every ref.

CREATE TABLE docs_vectors (
    content_hash text PRIMARY KEY,
    embedding vector
);

DO $$
BEGIN
    IF {{dim}} > 0 THEN
        ALTER TABLE docs_vectors
            ALTER COLUMN embedding TYPE vector({{dim}}),
            ALTER COLUMN embedding SET NOT NULL;
        INSERT INTO docs_vectors (content_hash, embedding)
        SELECT DISTINCT ON (content_hash) content_hash, embedding FROM docs_chunks
        WHERE embedding IS NOT NULL ORDER BY content_hash;
        -- As docs_chunks' index was (0001_initial.sql): ef_construction 200.
        CREATE INDEX docs_vectors_embedding_hnsw
            ON docs_vectors USING hnsw (embedding vector_cosine_ops)
            WITH (m = 16, ef_construction = 200);
    END IF;
END
$$;

CREATE INDEX docs_term_lists_term ON docs_term_lists (term, workspace, ref) INCLUDE (chunks);

-- Last: dropping the rows' own index locks docs_chunks against reads until the migration commits,
-- which should not include the build above.
DROP INDEX IF EXISTS docs_chunks_embedding_hnsw;
