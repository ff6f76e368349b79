-- The embedded store: every workspace's chunks in one file.
-- AUTOINCREMENT so a row id is never reused: the largest id of a ref then names the ref's rows
-- exactly, and the in-memory vector matrix of a ref is reloaded whenever it changes.

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL,
    ref TEXT NOT NULL,
    path TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    heading TEXT NOT NULL,
    content TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    embedding BLOB
);

CREATE INDEX chunks_by_ref ON chunks (workspace, ref);
CREATE INDEX chunks_by_hash ON chunks (workspace, content_hash);

CREATE TABLE current_ref (
    workspace TEXT PRIMARY KEY,
    ref TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    heading,
    content,
    content = 'chunks',
    content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, heading, content) VALUES (new.id, new.heading, new.content);
END;

CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, heading, content)
    VALUES ('delete', old.id, old.heading, old.content);
END;

CREATE TRIGGER chunks_fts_update AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, heading, content)
    VALUES ('delete', old.id, old.heading, old.content);
    INSERT INTO chunks_fts (rowid, heading, content) VALUES (new.id, new.heading, new.content);
END;
