-- The file's path joins the full-text index: its words ("Using_Tags.md", "runbooks/payments")
-- often name what a question asks about when the heading and the text do not (bench/retrieval.py:
-- aws-docs-qa file Hit@5 0.860 -> 0.880 with path words; BENCHMARKS.md).

DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TRIGGER chunks_fts_update;
DROP TABLE chunks_fts;

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    path,
    heading,
    content,
    content = 'chunks',
    content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, path, heading, content)
    VALUES (new.id, new.path, new.heading, new.content);
END;

CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, path, heading, content)
    VALUES ('delete', old.id, old.path, old.heading, old.content);
END;

CREATE TRIGGER chunks_fts_update AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, path, heading, content)
    VALUES ('delete', old.id, old.path, old.heading, old.content);
    INSERT INTO chunks_fts (rowid, path, heading, content)
    VALUES (new.id, new.path, new.heading, new.content);
END;

INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');
