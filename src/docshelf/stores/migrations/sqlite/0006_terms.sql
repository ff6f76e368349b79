-- The full-text index ranks docshelf's own terms (stores/terms.py), the same terms PostgreSQL
-- ranks, so that both stores answer a text search alike and a code such as LEDGER-409 is one term.
-- chunk_terms holds each chunk's terms per column, one space between two, and is the index's
-- content; the ascii tokenizer keeps the code joiners inside a token, so FTS5's tokens are those
-- terms exactly. Deleting a chunk deletes its terms, and they leave the index.
-- The rows are filled by the store when it opens (SQLiteStore._make_terms): the terms are made
-- in Python, which no SQL can do.

DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TRIGGER chunks_fts_update;
DROP TABLE chunks_fts;

CREATE TABLE chunk_terms (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    heading TEXT NOT NULL,
    content TEXT NOT NULL
);

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    path,
    heading,
    content,
    content = 'chunk_terms',
    content_rowid = 'id',
    tokenize = "ascii tokenchars '-_:.@'"
);

-- How many chunks hold each term (the query leaves out terms that half the chunks hold).
CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab (chunks_fts, 'row');

CREATE TRIGGER chunk_terms_insert AFTER INSERT ON chunk_terms BEGIN
    INSERT INTO chunks_fts (rowid, path, heading, content)
    VALUES (new.id, new.path, new.heading, new.content);
END;

CREATE TRIGGER chunk_terms_delete AFTER DELETE ON chunk_terms BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, path, heading, content)
    VALUES ('delete', old.id, old.path, old.heading, old.content);
END;

CREATE TRIGGER chunks_terms_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_terms WHERE id = old.id;
END;
