-- Weft checkpoint store, schema 2: thread leases (checkpoint.Leaser).
-- One row per thread a run holds or held: a run inserts it before it loads
-- the thread, renews expires_at while it lives and deletes the row when it
-- ends. A row whose expires_at has passed belongs to a run that died; the
-- next run takes it over. Times are Unix milliseconds of the writing
-- process's clock (every process sharing the file runs on one machine).
-- stop_by names who asked the holder to stop; '' when nobody did.
CREATE TABLE leases (
    thread_id   TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    token       TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    stop_by     TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
