-- Weft checkpoint store, schema 1.
-- The tables are WITHOUT ROWID: every lookup is by primary key, and a write
-- then touches one b-tree per table instead of a table and its key index.
-- Every value column (blobs.value, writes.value) may be AES-GCM sealed; the
-- meta row 'key_check' then holds a sealed known text (see package crypt).

PRAGMA application_id = 1466263156; -- 0x57656674, "Weft"

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

-- One row per checkpoint. "checkpoint" is the header JSON:
-- {"v", "channel_versions", "versions_seen", "updated_channels"};
-- channel values live in blobs, one row per (channel, version).
CREATE TABLE checkpoints (
    thread_id            TEXT NOT NULL,
    checkpoint_ns        TEXT NOT NULL DEFAULT '',
    checkpoint_id        TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    ts                   TEXT NOT NULL,
    checkpoint           TEXT NOT NULL,
    metadata             TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) WITHOUT ROWID;

-- A channel's value at one version; NULL when the channel was empty.
-- The key puts version before channel: one Put writes every changed channel
-- at the same (new) version, so its rows share one b-tree page.
CREATE TABLE blobs (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel       TEXT NOT NULL,
    version       INTEGER NOT NULL,
    value         BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, version, channel)
) WITHOUT ROWID;

-- Pending writes of the tasks of the step that started from a checkpoint.
-- idx is the write's position in its batch, or a fixed negative index for
-- special writes (__error__ -1, __scheduled__ -2, __interrupt__ -3,
-- __resume__ -4).
CREATE TABLE writes (
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT NOT NULL,
    value         BLOB,
    task_path     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
