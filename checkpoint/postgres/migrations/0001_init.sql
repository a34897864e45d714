-- Weft checkpoint store for PostgreSQL, schema 1.
--
-- The layout of LangGraph's Postgres saver (semantics reference §7): one row
-- per checkpoint, one value per (thread, namespace, channel, version), pending
-- writes keyed by (checkpoint, task id, index), and a migrations table
-- (weft_migrations, created by the migration runner). Weft adds weft_threads,
-- the head of each (thread, namespace), which Put locks to detect two writers
-- advancing the same thread (see the package documentation).
--
-- Text keys use the "C" collation so that ordering and comparisons are by
-- bytes, as in the Go savers: checkpoint ids are UUIDv7 strings whose byte
-- order is creation order.

-- One row per checkpoint. "checkpoint" is the header:
-- {"v", "channel_versions", "versions_seen", "updated_channels"}; channel
-- values live in weft_blobs. ts holds the timestamp to the microsecond and
-- ts_ns the nanoseconds beyond it (0-999), so timestamps come back exactly.
CREATE TABLE weft_checkpoints (
    thread_id            TEXT COLLATE "C" NOT NULL,
    checkpoint_ns        TEXT COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id        TEXT COLLATE "C" NOT NULL,
    parent_checkpoint_id TEXT COLLATE "C",
    ts                   TIMESTAMPTZ NOT NULL,
    ts_ns                INTEGER NOT NULL DEFAULT 0,
    checkpoint           JSONB NOT NULL,
    metadata             JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);

-- Listing every thread newest first, and "before" across threads.
CREATE INDEX weft_checkpoints_id_idx ON weft_checkpoints (checkpoint_id);
-- Metadata filters (metadata @> '{...}').
CREATE INDEX weft_checkpoints_metadata_idx ON weft_checkpoints USING GIN (metadata jsonb_path_ops);

-- A channel's value at one version; NULL when the channel was empty.
CREATE TABLE weft_blobs (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    channel       TEXT COLLATE "C" NOT NULL,
    version       BIGINT NOT NULL,
    blob          BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);

-- Pending writes of the tasks of the step that started from a checkpoint.
-- idx is the write's position in its batch, or a fixed negative index for
-- special writes (__error__ -1, __scheduled__ -2, __interrupt__ -3,
-- __resume__ -4). blob is NULL for a write of no value.
CREATE TABLE weft_writes (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    task_id       TEXT COLLATE "C" NOT NULL,
    idx           INTEGER NOT NULL,
    channel       TEXT COLLATE "C" NOT NULL,
    blob          BYTEA,
    task_path     TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);

-- The head (highest checkpoint id) of each thread and namespace. Every Put
-- locks its row for the length of its transaction.
CREATE TABLE weft_threads (
    thread_id     TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
    head_id       TEXT COLLATE "C" NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (thread_id, checkpoint_ns)
);
