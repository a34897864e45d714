package sqlite

// SetQuickCheckLimit lets tests open files as if they were larger than the
// quick_check limit; it returns a function restoring the limit.
func SetQuickCheckLimit(n int64) (restore func()) {
	old := quickCheckLimit
	quickCheckLimit = n
	return func() { quickCheckLimit = old }
}
