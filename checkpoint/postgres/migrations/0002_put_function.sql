-- Weft checkpoint store for PostgreSQL, schema 2: Put in one statement.
--
-- weft_put stores a checkpoint the way Saver.Put documents, in one round
-- trip and one transaction: it locks the head row of (thread, namespace)
-- (creating it for a new one), checks the parent, inserts the values of the
-- new channel versions (kept if already stored), inserts or replaces the
-- checkpoint, and moves the head. It raises
--   WF001 (detail: the current head) when p_check is set, the parent is not
--         the head and the checkpoint is new: another writer advanced the
--         thread first;
--   WF002 (detail: the head) when the parent is the head but the new id
--         sorts before it (a clock that went backwards).
-- Nothing is stored when it raises.
CREATE FUNCTION weft_put(
    p_thread     TEXT,
    p_ns         TEXT,
    p_id         TEXT,
    p_parent     TEXT,     -- NULL for none
    p_check      BOOLEAN,  -- refuse a parent that is not the head
    p_ts         TIMESTAMPTZ,
    p_ts_ns      INTEGER,
    p_checkpoint JSONB,
    p_metadata   JSONB,
    p_channels   TEXT[],
    p_versions   BIGINT[],
    p_blobs      BYTEA[]
) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    head TEXT COLLATE "C";
BEGIN
    INSERT INTO weft_threads AS t (thread_id, checkpoint_ns, head_id) VALUES (p_thread, p_ns, '')
    ON CONFLICT (thread_id, checkpoint_ns) DO UPDATE SET head_id = t.head_id
    RETURNING t.head_id INTO head;

    IF p_check AND p_parent IS NOT NULL AND head <> '' AND p_parent <> head AND p_id <> head
       AND NOT EXISTS (SELECT 1 FROM weft_checkpoints
                       WHERE thread_id = p_thread AND checkpoint_ns = p_ns AND checkpoint_id = p_id) THEN
        RAISE EXCEPTION 'checkpoint conflict in thread % ns %: parent % is not the head %', p_thread, p_ns, p_parent, head
            USING ERRCODE = 'WF001', DETAIL = head;
    END IF;
    IF p_parent = head AND p_id < head THEN
        RAISE EXCEPTION 'checkpoint % sorts before its parent %', p_id, head
            USING ERRCODE = 'WF002', DETAIL = head;
    END IF;

    IF cardinality(p_channels) > 0 THEN
        INSERT INTO weft_blobs (thread_id, checkpoint_ns, channel, version, blob)
        SELECT p_thread, p_ns, u.channel, u.version, u.blob
        FROM unnest(p_channels, p_versions, p_blobs) AS u(channel, version, blob)
        ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING;
    END IF;

    INSERT INTO weft_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, ts, ts_ns, checkpoint, metadata)
    VALUES (p_thread, p_ns, p_id, p_parent, p_ts, p_ts_ns, p_checkpoint, p_metadata)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, ts = EXCLUDED.ts, ts_ns = EXCLUDED.ts_ns,
        checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata;

    IF p_id > head THEN
        UPDATE weft_threads SET head_id = p_id, updated_at = now()
        WHERE thread_id = p_thread AND checkpoint_ns = p_ns;
    END IF;
END
$$;
