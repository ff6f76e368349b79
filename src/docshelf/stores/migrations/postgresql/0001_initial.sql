-- The PostgreSQL store: every workspace's chunks in one database, vectors searched by pgvector's
-- HNSW index, words by a GIN index over a generated tsvector.
--
-- {{dim}} is the embedding width, an integer that postgres.py validates before it writes it here
-- (nothing else is ever formatted into SQL). The column's typmod is where the width is kept: the
-- store reads it back on every open. Width 0 is the `none` embedder: the column stays an untyped,
-- nullable `vector` with no HNSW index (one cannot be built on a column without dimensions).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE docs_meta (
    key text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE docs_chunks (
    id bigserial PRIMARY KEY,
    workspace text NOT NULL,
    ref text NOT NULL,
    path text NOT NULL,
    chunk integer NOT NULL,
    heading text NOT NULL,
    content text NOT NULL,
    start_line integer NOT NULL,
    end_line integer NOT NULL,
    content_hash text NOT NULL,
    embedding vector,
    -- A word of the heading (weight A) ranks above the same word in the content (weight B).
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', heading), 'A')
        || setweight(to_tsvector('english', content), 'B')
    ) STORED
);

CREATE INDEX docs_chunks_workspace_ref ON docs_chunks (workspace, ref);
CREATE INDEX docs_chunks_workspace_content_hash ON docs_chunks (workspace, content_hash);
CREATE INDEX docs_chunks_tsv ON docs_chunks USING gin (tsv);

-- PL/pgSQL analyses a statement only when it runs, so `vector(0)` below is never looked at for
-- the none embedder. The table is empty here: changing the column's type rewrites nothing.
DO $$
BEGIN
    IF {{dim}} > 0 THEN
        ALTER TABLE docs_chunks
            ALTER COLUMN embedding TYPE vector({{dim}}),
            ALTER COLUMN embedding SET NOT NULL;
        -- ef_construction 200, not pgvector's 64: the graph is built with more candidates per
        -- insert, and short questions, whose vectors lie away from the chunks', find their true
        -- nearest chunks far more often (bench/search.py, BENCHMARKS.md); same index size.
        CREATE INDEX docs_chunks_embedding_hnsw
            ON docs_chunks USING hnsw (embedding vector_cosine_ops)
            WITH (m = 16, ef_construction = 200);
    END IF;
END
$$;

CREATE TABLE docs_current (
    workspace text PRIMARY KEY,
    ref text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
