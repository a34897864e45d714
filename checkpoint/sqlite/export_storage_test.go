package sqlite

// SetPruneChunk sets how many rows one transaction of a prune deletes; it
// returns a function restoring the default.
func SetPruneChunk(n int) (restore func()) {
	old := pruneChunk
	pruneChunk = n
	return func() { pruneChunk = old }
}
