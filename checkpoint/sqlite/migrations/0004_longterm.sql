-- Weft checkpoint store, schema 4: the long-term store (package longterm),
-- documents kept across threads beside the checkpoints.
-- prefix is the namespace's labels joined by '.' (labels hold no '.'), so
-- a namespace prefix is a range of the primary key. value is the JSON
-- object as TEXT (json_extract filters it). Times are Unix nanoseconds;
-- expires_at is NULL for an item without a TTL, and ttl (nanoseconds) is
-- what a read refreshes it by.
CREATE TABLE store_items (
    prefix     TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    ttl        INTEGER,
    PRIMARY KEY (prefix, key)
) WITHOUT ROWID;

-- Searches without a query return the newest updates first.
CREATE INDEX store_items_updated ON store_items (updated_at);
CREATE INDEX store_items_expires ON store_items (expires_at) WHERE expires_at IS NOT NULL;

-- An item's embeddings for semantic search, one per embedded text (idx in
-- the order of its fields): little-endian float32s.
CREATE TABLE store_vectors (
    prefix TEXT NOT NULL,
    key    TEXT NOT NULL,
    idx    INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (prefix, key, idx)
) WITHOUT ROWID;
