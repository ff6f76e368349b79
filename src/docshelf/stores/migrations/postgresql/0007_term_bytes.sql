-- A ref's inverted lists are scored in Python with numpy (stores/bm25.py), as on SQLite, in place
-- of a SUM over the unnested arrays in SQL (18 ms a query on the 19,347 chunks of the AWS
-- guides, most of it unnesting the long lists of common words). The lists are kept as bytes
-- that numpy reads as they are: each id, frequency and length as PostgreSQL's int8send,
-- float4send and int4send write it (big-endian), one after the other in the order of the ids.
-- They are made again here from the chunk rows (those of a store whose rows have no terms yet
-- are made when the store opens: postgres_text.make_terms).

DROP TABLE docs_term_lists;

CREATE TABLE docs_term_lists (
    workspace text NOT NULL,
    ref text NOT NULL,
    term text NOT NULL,
    chunks integer NOT NULL,
    ids bytea NOT NULL,
    tfs bytea NOT NULL,
    lengths bytea NOT NULL,
    PRIMARY KEY (workspace, ref, term)
);

INSERT INTO docs_term_lists (workspace, ref, term, chunks, ids, tfs, lengths)
SELECT c.workspace, c.ref, t.term, count(*),
    string_agg(int8send(c.id), ''::bytea ORDER BY c.id),
    string_agg(float4send(t.tf), ''::bytea ORDER BY c.id),
    string_agg(int4send(c.length), ''::bytea ORDER BY c.id)
FROM docs_chunks AS c CROSS JOIN LATERAL unnest(c.terms, c.tfs) AS t(term, tf)
WHERE c.terms IS NOT NULL
GROUP BY c.workspace, c.ref, t.term;
