-- Weft checkpoint store for PostgreSQL, schema 4: thread leases, and task
-- writes checked against the head.
--
-- weft_leases holds one row per thread a run holds or held
-- (checkpoint.Leaser): a run inserts it before it loads the thread, renews
-- expires_at while it lives and deletes the row when it ends. A row whose
-- expires_at has passed belongs to a run that died; the next run takes it
-- over. Times are the server's clock (clock_timestamp()), so machines with
-- different clocks agree. stop_by names who asked the holder to stop; ''
-- when nobody did.
CREATE TABLE weft_leases (
    thread_id   TEXT COLLATE "C" PRIMARY KEY,
    owner       TEXT NOT NULL,
    token       TEXT COLLATE "C" NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    stop_by     TEXT NOT NULL DEFAULT ''
);

-- weft_put_writes stores a task's writes the way Saver.PutWrites documents,
-- in one round trip. With p_check (a task's writes, not those of a Command
-- given as input) it first takes a share lock on the head row of (thread,
-- namespace), which waits for a weft_put in progress there, and raises
--   WF003 (detail: the head) when the checkpoint written to is stored but
--         is no longer the head: another writer finished that step first.
-- Nothing is stored when it raises.
CREATE FUNCTION weft_put_writes(
    p_thread   TEXT,
    p_ns       TEXT,
    p_id       TEXT,
    p_task     TEXT,
    p_path     TEXT,
    p_check    BOOLEAN,
    p_idxs     INTEGER[],
    p_channels TEXT[],
    p_blobs    BYTEA[]
) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    head TEXT COLLATE "C";
BEGIN
    IF p_check THEN
        SELECT t.head_id INTO head FROM weft_threads AS t
        WHERE t.thread_id = p_thread AND t.checkpoint_ns = p_ns FOR SHARE;
        IF head IS NOT NULL AND head <> '' AND head <> p_id
           AND EXISTS (SELECT 1 FROM weft_checkpoints
                       WHERE thread_id = p_thread AND checkpoint_ns = p_ns AND checkpoint_id = p_id) THEN
            RAISE EXCEPTION 'writes of task % to checkpoint % in thread % ns %: the head is %', p_task, p_id, p_thread, p_ns, head
                USING ERRCODE = 'WF003', DETAIL = head;
        END IF;
    END IF;
    INSERT INTO weft_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, blob, task_path)
    SELECT p_thread, p_ns, p_id, p_task, u.idx, u.channel, u.blob, p_path
    FROM unnest(p_idxs, p_channels, p_blobs) AS u(idx, channel, blob)
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
        channel = EXCLUDED.channel, blob = EXCLUDED.blob, task_path = EXCLUDED.task_path
    WHERE EXCLUDED.idx < 0;
END
$$;
