-- Weft checkpoint store for PostgreSQL, schema 8: the history of the
-- long-term store's items (longterm.History). Every put and delete adds a
-- row to weft_store_history in the transaction that makes the change; seq
-- orders them. value is the JSON put, NULL for a delete; at is when the
-- change was made (Unix nanoseconds), ttl the put's (nanoseconds). The
-- writer columns say which run's task made a change: its thread,
-- checkpoint namespace, checkpoint, step, task id and node; '' and 0 for a
-- change made outside a run. Each item keeps its newest 50 changes (longterm.HistoryPerItem), trimmed at each put.
CREATE TABLE weft_store_history (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    prefix        TEXT COLLATE "C" NOT NULL,
    key           TEXT COLLATE "C" NOT NULL,
    value         JSONB,
    at            BIGINT NOT NULL,
    ttl           BIGINT,
    thread_id     TEXT NOT NULL DEFAULT '',
    ns            TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL DEFAULT '',
    step          INTEGER NOT NULL DEFAULT 0,
    task_id       TEXT NOT NULL DEFAULT '',
    node          TEXT NOT NULL DEFAULT ''
);
-- An item's changes in order, and the newest change of each item under a
-- namespace prefix (a range of this index).
CREATE INDEX weft_store_history_item ON weft_store_history (prefix, key, seq);

-- Each item also says who last wrote it, so a get need not read its history.
ALTER TABLE weft_store
    ADD COLUMN thread_id TEXT NOT NULL DEFAULT '',
    ADD COLUMN ns TEXT NOT NULL DEFAULT '',
    ADD COLUMN checkpoint_id TEXT NOT NULL DEFAULT '',
    ADD COLUMN step INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN task_id TEXT NOT NULL DEFAULT '',
    ADD COLUMN node TEXT NOT NULL DEFAULT '';

-- A store that held items before this schema knows only their last puts:
-- each gets one change, at its last update, by nobody; and weft_meta says
-- when its history began (Unix nanoseconds, as text), since what it had
-- deleted is not known. A store made with this schema has no such row.
-- (Schema 6, the long-term store, was applied before this transaction
-- began when its applied_at is earlier than now().)
INSERT INTO weft_store_history (prefix, key, value, at, ttl)
    SELECT prefix, key, value, updated_at, ttl FROM weft_store ORDER BY updated_at, prefix, key;
INSERT INTO weft_meta (key, value)
    SELECT 'store_history_began', convert_to(((extract(epoch FROM clock_timestamp()) * 1e9)::bigint)::text, 'UTF8')
    WHERE EXISTS (SELECT 1 FROM weft_migrations WHERE v = 6 AND applied_at < now());
