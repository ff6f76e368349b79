-- What the status of a workspace shows of each indexed ref: when it was indexed and the files its
-- read skipped, each with its reason (a JSON array of {path, reason}). A ref indexed before this
-- migration has neither (NULL): it was indexed before docshelf kept them.

ALTER TABLE docs_selections ADD COLUMN indexed_at timestamptz;
ALTER TABLE docs_selections ADD COLUMN skipped text;
