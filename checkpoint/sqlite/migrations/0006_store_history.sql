-- Weft checkpoint store, schema 6: the history of the long-term store's
-- items (longterm.History). Every Put and Delete adds a row to
-- store_history, in the transaction that makes the change; seq orders
-- them. value is the JSON put, in JSONB, and NULL for a delete; at is when
-- the change was made (Unix nanoseconds), ttl the put's (nanoseconds).
-- The writer columns say which run's task made a change: its thread,
-- checkpoint namespace, checkpoint, step, task id and node; '' and 0 for a
-- change made outside a run. Each item keeps its newest 50 changes (longterm.HistoryPerItem), trimmed at each put.
CREATE TABLE store_history (
    seq           INTEGER PRIMARY KEY,
    prefix        TEXT NOT NULL,
    key           TEXT NOT NULL,
    value         BLOB,
    at            INTEGER NOT NULL,
    ttl           INTEGER,
    thread_id     TEXT NOT NULL DEFAULT '',
    ns            TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL DEFAULT '',
    step          INTEGER NOT NULL DEFAULT 0,
    task_id       TEXT NOT NULL DEFAULT '',
    node          TEXT NOT NULL DEFAULT ''
);
-- An item's changes in order, and the newest change of each item under a
-- namespace prefix (a range of this index).
CREATE INDEX store_history_item ON store_history (prefix, key, seq);

-- Each item also says who last wrote it, so a Get need not read its history.
ALTER TABLE store_items ADD COLUMN thread_id TEXT NOT NULL DEFAULT '';
ALTER TABLE store_items ADD COLUMN ns TEXT NOT NULL DEFAULT '';
ALTER TABLE store_items ADD COLUMN checkpoint_id TEXT NOT NULL DEFAULT '';
ALTER TABLE store_items ADD COLUMN step INTEGER NOT NULL DEFAULT 0;
ALTER TABLE store_items ADD COLUMN task_id TEXT NOT NULL DEFAULT '';
ALTER TABLE store_items ADD COLUMN node TEXT NOT NULL DEFAULT '';

-- A store upgraded from schema 5 knows only its items' last puts: each
-- gets one change, at its last update, by nobody. (Open also records in
-- meta 'store_history_began' when it upgraded such a store: what was
-- deleted before then is not known.)
INSERT INTO store_history (prefix, key, value, at, ttl)
    SELECT prefix, key, value, updated_at, ttl FROM store_items ORDER BY updated_at, prefix, key;
