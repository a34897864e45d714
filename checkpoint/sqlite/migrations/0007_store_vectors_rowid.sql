-- Weft checkpoint store, schema 7: the long-term store's vectors in a
-- table with rowids. A 1 KiB vector (256 float32s) overflowed its cell in
-- the WITHOUT ROWID table of schema 4, so a semantic search read each one
-- through an overflow page, mostly past the page cache; in a rowid table's
-- leaf it fits inline (a search over 10,000 items went from 105 ms to
-- the figure in the README). The unique index finds an item's vectors.
CREATE TABLE store_vectors_7 (
    id     INTEGER PRIMARY KEY,
    prefix TEXT NOT NULL,
    key    TEXT NOT NULL,
    idx    INTEGER NOT NULL,
    vector BLOB NOT NULL
);
INSERT INTO store_vectors_7 (prefix, key, idx, vector)
    SELECT prefix, key, idx, vector FROM store_vectors ORDER BY prefix, key, idx;
DROP TABLE store_vectors;
ALTER TABLE store_vectors_7 RENAME TO store_vectors;
CREATE UNIQUE INDEX store_vectors_item ON store_vectors (prefix, key, idx);
