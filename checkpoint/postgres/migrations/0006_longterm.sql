-- Weft checkpoint store for PostgreSQL, schema 6: the long-term store
-- (package longterm), documents kept across threads beside the checkpoints.
-- prefix is the namespace's labels joined by '.' (labels hold no '.'), in
-- the "C" collation so that a namespace prefix is a range of the primary
-- key and the order is byte order, as in every Weft store. Times are Unix
-- nanoseconds; expires_at is NULL for an item without a TTL, and ttl
-- (nanoseconds) is what a read refreshes it by.
CREATE TABLE weft_store (
    prefix     TEXT COLLATE "C" NOT NULL,
    key        TEXT COLLATE "C" NOT NULL,
    value      JSONB NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT,
    ttl        BIGINT,
    PRIMARY KEY (prefix, key)
);
-- Searches without a query return the newest updates first.
CREATE INDEX weft_store_updated ON weft_store (updated_at DESC, prefix, key);
-- Filters on scalar values are containment (value @> …).
CREATE INDEX weft_store_value ON weft_store USING GIN (value jsonb_path_ops);
CREATE INDEX weft_store_expires ON weft_store (expires_at) WHERE expires_at IS NOT NULL;

-- An item's embeddings for semantic search, one per embedded text:
-- little-endian float32s.
CREATE TABLE weft_store_vectors (
    prefix TEXT COLLATE "C" NOT NULL,
    key    TEXT COLLATE "C" NOT NULL,
    idx    INTEGER NOT NULL,
    vector BYTEA NOT NULL,
    PRIMARY KEY (prefix, key, idx),
    FOREIGN KEY (prefix, key) REFERENCES weft_store ON DELETE CASCADE
);
