-- Weft checkpoint store: the node cache (package checkpoint/nodecache).
-- One row per cached task result: ns names the graph and the node, key
-- hashes the node's input, writes holds the task's writes (JSON, sealed
-- when the store is encrypted). expires_at is Unix milliseconds; 0 never
-- expires. Written to be safe to run again (IF NOT EXISTS), so it can be
-- renumbered.
CREATE TABLE IF NOT EXISTS node_cache (
    ns         TEXT NOT NULL,
    key        TEXT NOT NULL,
    writes     BLOB NOT NULL,
    expires_at INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, key)
) WITHOUT ROWID;
