package checkpoint

import "strings"

// PageThreads applies q to threads, which must be in ThreadLister's order
// (newest first, ties by thread id): the search, the filter, the cursor
// and the limit. match reports whether a thread's latest metadata matches
// q.Filter, comparing as the saver compares stored metadata; it is called
// only when q.Filter is not empty, and must then be non-nil. Savers that
// hold their threads in memory answer SearchThreads with it.
func PageThreads(threads []ThreadInfo, q ThreadQuery, match func(*Metadata) bool) ThreadPage {
	page := ThreadPage{Threads: []ThreadInfo{}}
	filter := len(q.Filter) > 0
	for _, t := range threads {
		if q.After != nil && !ThreadAfter(t, *q.After) {
			continue
		}
		if !MatchThread(t.ThreadID, q.Search) {
			continue
		}
		if filter && !match(&t.LatestMeta) {
			continue
		}
		if q.Limit > 0 && len(page.Threads) == q.Limit {
			page.More = true
			break
		}
		page.Threads = append(page.Threads, t)
	}
	return page
}

// ThreadAfter reports whether t comes after cursor in ThreadLister's order:
// its latest root checkpoint is older, or as old with a greater thread id.
func ThreadAfter(t, cursor ThreadInfo) bool {
	a, b := t.Latest.CheckpointID, cursor.Latest.CheckpointID
	return a < b || a == b && t.ThreadID > cursor.ThreadID
}

// MatchThread reports whether a thread id matches a ThreadQuery's Search:
// it contains search, ignoring ASCII case ("" matches every id).
func MatchThread(id, search string) bool {
	return search == "" || strings.Contains(asciiLower(id), asciiLower(search))
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
