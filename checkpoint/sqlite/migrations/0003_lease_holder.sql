-- Weft checkpoint store, schema 3: who holds a lease, as a process.
-- holder identifies the holding process (host, boot id, pid namespace, pid,
-- start time), so that a run of this machine whose process ended is seen
-- as dead at once, not after its lease lapses. '' when unknown (then the
-- lease is waited out).
ALTER TABLE leases ADD COLUMN holder TEXT NOT NULL DEFAULT '';
