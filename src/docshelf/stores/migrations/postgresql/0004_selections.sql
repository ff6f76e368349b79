-- Which files each indexed ref holds: the docs selection (roots, --include, --exclude) it was
-- read with, as JSON. The current ref's selection is the workspace's: the next sync reads the
-- same files without the user re-typing them, and a changed selection re-indexes the commit.

CREATE TABLE docs_selections (
    workspace text NOT NULL,
    ref text NOT NULL,
    selection text NOT NULL,
    PRIMARY KEY (workspace, ref)
);
