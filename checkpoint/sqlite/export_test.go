package sqlite

// SetQuickCheckLimit lets tests open files as if they were larger than the
// quick_check limit; it returns a function restoring the limit.
func SetQuickCheckLimit(n int64) (restore func()) {
	old := quickCheckLimit
	quickCheckLimit = n
	return func() { quickCheckLimit = old }
}

// PragmaOf reads an integer pragma on one of the store's connections: the
// read pool when reader is true, the writer otherwise.
func PragmaOf(s *Saver, name string, reader bool) (int64, error) {
	db := s.w
	if reader || db == nil {
		db = s.r
	}
	var v int64
	err := db.QueryRow("PRAGMA " + name).Scan(&v)
	return v, err
}

// SetSearchPlan sets the thresholds that choose a long-term search's plan
// (narrowPrefix, fewCandidates, walkBudget); it returns a function
// restoring them.
func SetSearchPlan(narrow, few, walk int) (restore func()) {
	a, b, c := narrowPrefix, fewCandidates, walkBudget
	narrowPrefix, fewCandidates, walkBudget = narrow, few, walk
	return func() { narrowPrefix, fewCandidates, walkBudget = a, b, c }
}
