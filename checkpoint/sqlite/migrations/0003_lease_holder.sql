-- Weft checkpoint store, schema 3: who holds a lease, as a process, and
-- holds that are not runs.
-- holder identifies the holding process (host, boot id, pid namespace, pid,
-- start time), so that a run of this machine whose process ended is seen
-- as dead at once, not after its lease lapses. '' when unknown (then the
-- lease is waited out).
-- hold is 1 on a lease held for work that is not a run (a prune); dead is
-- then the lapsed lease of the run that died there, which the hold took
-- over (JSON), '' when none. Releasing the hold puts dead back; a hold that
-- lapses (its holder was killed) shows dead, or nothing: it was no run.
ALTER TABLE leases ADD COLUMN holder TEXT NOT NULL DEFAULT '';
ALTER TABLE leases ADD COLUMN hold INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leases ADD COLUMN dead TEXT NOT NULL DEFAULT '';
