-- Weft checkpoint store for PostgreSQL, schema 5: who holds a lease, as a
-- process. holder identifies the holding process (host, boot id, pid
-- namespace, pid, start time), so that a worker on the holder's machine
-- sees at once that its process ended; holders elsewhere are waited out
-- until the lease lapses. '' when unknown.
ALTER TABLE weft_leases ADD COLUMN holder TEXT NOT NULL DEFAULT '';
