-- What the status of a workspace shows of each indexed ref: when it was indexed (UTC, ISO 8601)
-- and the files its read skipped, each with its reason (a JSON array of {path, reason}). A ref
-- indexed before this migration has neither (NULL): it was indexed before docshelf kept them.

ALTER TABLE selections ADD COLUMN indexed_at TEXT;
ALTER TABLE selections ADD COLUMN skipped TEXT;
