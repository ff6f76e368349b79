-- The file's path joins the full-text vector: its words ("Using_Tags.md", "runbooks/payments")
-- often name what a question asks about when the heading and the text do not. Path separators
-- become spaces first: PostgreSQL's parser would keep a whole path as one "file" token.

DROP INDEX docs_chunks_tsv;
ALTER TABLE docs_chunks DROP COLUMN tsv;
ALTER TABLE docs_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', regexp_replace(path, '[^[:alnum:]]+', ' ', 'g')), 'A')
    || setweight(to_tsvector('english', heading), 'A')
    || setweight(to_tsvector('english', content), 'B')
) STORED;
CREATE INDEX docs_chunks_tsv ON docs_chunks USING gin (tsv);
