-- Weft checkpoint store for PostgreSQL, schema 5: who holds a lease, as a
-- process, and holds that are not runs.
-- holder identifies the holding process (host, boot id, pid namespace, pid,
-- start time), so that a worker on the holder's machine sees at once that
-- its process ended; holders elsewhere are waited out until the lease
-- lapses. '' when unknown.
-- hold is true on a lease held for work that is not a run (a prune); dead
-- is then the lapsed lease of the run that died there, which the hold took
-- over (JSON), '' when none. Releasing the hold puts dead back; a hold that
-- lapses (its holder was killed) shows dead, or nothing: it was no run.
ALTER TABLE weft_leases ADD COLUMN holder TEXT NOT NULL DEFAULT '';
ALTER TABLE weft_leases ADD COLUMN hold BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE weft_leases ADD COLUMN dead TEXT NOT NULL DEFAULT '';
