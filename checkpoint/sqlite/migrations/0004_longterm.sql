-- Weft checkpoint store, schema 4: the long-term store (package longterm),
-- documents kept across threads beside the checkpoints.
-- prefix is the namespace's labels joined by '.' (labels hold no '.'), so
-- a namespace prefix is a range of the primary key. value is the JSON
-- object in SQLite's binary JSONB form, which json_type and json_extract
-- read without parsing text (filters scan it 2.5 times faster). Times are Unix nanoseconds;
-- expires_at is NULL for an item without a TTL, and ttl (nanoseconds) is
-- what a read refreshes it by.
CREATE TABLE store_items (
    prefix     TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    ttl        INTEGER,
    PRIMARY KEY (prefix, key)
) WITHOUT ROWID;

-- Searches without a query return the newest updates first, ties by
-- namespace and key: walked in this order, a search over many items stops
-- at its page.
CREATE INDEX store_items_updated ON store_items (updated_at DESC, prefix, key);
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

-- The scalar fields of each item's value outside arrays (numbers, and
-- strings cut to their first 256 bytes), one row per field, path as in
-- json_extract ('$."a"."b"'): a filter that few items meet finds its
-- candidates here instead of scanning every item.
CREATE TABLE store_fields (
    path   TEXT NOT NULL,
    value  NOT NULL,
    prefix TEXT NOT NULL,
    key    TEXT NOT NULL,
    PRIMARY KEY (path, value, prefix, key)
) WITHOUT ROWID;
CREATE INDEX store_fields_item ON store_fields (prefix, key);
