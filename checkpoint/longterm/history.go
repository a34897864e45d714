package longterm

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Writer is the task of a graph's run that made a change: stores record it
// with every Put and Delete, so an item says which thread, checkpoint and
// task wrote it. The zero Writer is a change made outside any run (a
// command, an API call, a program's own code).
type Writer struct {
	// ThreadID is the run's thread.
	ThreadID string
	// NS is the checkpoint namespace of the graph the task ran in: "" at
	// the root, "node:<task id>" inside a subgraph (nested levels joined
	// by "|").
	NS string
	// CheckpointID is the checkpoint the task's step started from, the one
	// its pending writes are kept against; Step is that step's number.
	CheckpointID string
	Step         int
	// TaskID and Node are the task's id and its node's name.
	TaskID string
	Node   string
}

// IsZero reports whether w is the zero Writer: a change made outside a run.
func (w Writer) IsZero() bool { return w == Writer{} }

// WriterKey is the context key a Writer is found under. WithWriter sets
// it; a context that knows its Writer without storing one (the engine's
// node context, which answers for its task) answers Value(WriterKey{})
// with a Writer.
type WriterKey struct{}

// WithWriter returns a context under which a store records Puts and
// Deletes as w's. A node's context already carries its task's Writer.
func WithWriter(ctx context.Context, w Writer) context.Context {
	return context.WithValue(ctx, WriterKey{}, w)
}

// WriterOf returns the Writer ctx carries; the zero Writer when none.
func WriterOf(ctx context.Context) Writer {
	w, _ := ctx.Value(WriterKey{}).(Writer)
	return w
}

// Change is one Put or Delete of an item, as a History keeps it.
type Change struct {
	// Seq orders a store's changes: a later change has a larger Seq.
	Seq       int64
	Namespace Namespace
	Key       string
	// Value is the value put; nil for a delete.
	Value map[string]any
	// At is when the store applied the change, by its clock, in UTC.
	At time.Time
	// TTL is the time to live the put gave; 0 for none (and deletes).
	TTL time.Duration
	// Writer is who made the change.
	Writer Writer
}

// Deleted reports whether c is a delete.
func (c Change) Deleted() bool { return c.Value == nil }

// History is implemented by stores that keep the changes of their items:
// every Put and Delete, with its Writer. Each item keeps its newest
// HistoryPerItem changes; older ones are dropped as newer ones come.
type History interface {
	// Changes returns the changes q asks for, newest first.
	Changes(ctx context.Context, q ChangeQuery) ([]Change, error)
	// HistoryBegan returns when the store began keeping changes: the
	// items of an earlier time cannot be known. It is zero for a store
	// that has kept every change since it was made; a store made by an
	// older Weft began when it was upgraded (each item it held then has
	// one change, at its last update, from the zero Writer; what it had
	// deleted is not known).
	HistoryBegan(ctx context.Context) (time.Time, error)
}

// ChangeQuery is what History.Changes looks for.
type ChangeQuery struct {
	// Prefix is the namespace prefix; empty means every namespace.
	Prefix Namespace
	// Key, when not "", keeps only the item of that key (Prefix is then
	// its namespace exactly).
	Key string
	// Until, when not zero, keeps only the changes at or before it.
	Until time.Time
	// Latest keeps only each item's newest change (of those Until
	// keeps): the items as they were at Until, a delete for an item that
	// had been deleted.
	Latest bool
	// Limit is the most changes returned; 0 means 100.
	Limit int
}

// DefaultChangeLimit is the limit a zero ChangeQuery.Limit means.
const DefaultChangeLimit = 100

// HistoryPerItem is how many changes of each item a History keeps: the
// newest ones. Older changes are dropped at the next change, so a store
// written to for years keeps its history bounded by its items.
const HistoryPerItem = 50

// CheckChanges checks q and returns its limit (the default for 0).
func CheckChanges(q ChangeQuery) (int, error) {
	if err := checkLabels(q.Prefix, false); err != nil {
		return 0, err
	}
	if q.Key != "" && len(q.Prefix) == 0 {
		return 0, invalid("changes of key %q: give its namespace", q.Key)
	}
	if q.Limit < 0 {
		return 0, invalid("changes limit %d must not be negative", q.Limit)
	}
	if q.Limit == 0 {
		return DefaultChangeLimit, nil
	}
	return q.Limit, nil
}

// Match reports whether c is one of the changes q keeps, Latest and Limit
// aside (for implementations that scan).
func (q ChangeQuery) Match(c Change) bool {
	if q.Key != "" && (c.Key != q.Key || !slices.Equal(c.Namespace, q.Prefix)) {
		return false
	}
	if !HasPrefix(c.Namespace, q.Prefix) {
		return false
	}
	return q.Until.IsZero() || !c.At.After(q.Until)
}

// BeforeHistoryError is SearchAt's answer for a time before the store's
// history began (a store made by an older Weft keeps it from its upgrade
// on): the items then cannot be known.
type BeforeHistoryError struct {
	At, Began time.Time
}

// Error says which time cannot be known, and from when it could be.
func (e *BeforeHistoryError) Error() string {
	return fmt.Sprintf("the items at %s cannot be known: the store was made by an older Weft and keeps their history since %s",
		e.At.Format(time.RFC3339), e.Began.Format(time.RFC3339))
}

// SearchAt returns the items q matches as they were at t, from h: each
// item's newest change at or before t that is not a delete, newest first,
// filtered by q.Filter, paged by q.Limit (0: 10) and q.Offset. q.Query is
// refused (the embeddings of past values are not kept) and q.NoRefresh
// is implied: reading the past refreshes nothing. Their CreatedAt is zero:
// a change does not say it. What it cannot know it does not guess: a read
// that refreshed a TTL is not a change, so an item is shown as live at t
// unless its last put's TTL had run out by then counting from that put.
// Before h's HistoryBegan the answer is not known: SearchAt then returns
// a *BeforeHistoryError.
func SearchAt(ctx context.Context, h History, q SearchQuery, t time.Time) ([]Item, error) {
	limit, err := CheckSearch(q)
	if err != nil {
		return nil, err
	}
	if q.Query != "" {
		return nil, invalid("a search as at a past time takes no query: the embeddings of past values are not kept")
	}
	began, err := h.HistoryBegan(ctx)
	if err != nil {
		return nil, err
	}
	if !began.IsZero() && t.Before(began) {
		return nil, &BeforeHistoryError{At: t, Began: began}
	}
	conds, _ := q.Filter.Conditions() // checked above
	want := q.Offset + limit
	out := []Item{}
	// Deletes and filtered items take places in a page of changes: read
	// larger pages until the page is full or the changes end.
	for page := max(want, DefaultChangeLimit); ; page *= 4 {
		cs, err := h.Changes(ctx, ChangeQuery{Prefix: q.Prefix, Until: t, Latest: true, Limit: page})
		if err != nil {
			return nil, err
		}
		out = out[:0]
		for _, c := range cs {
			if c.Deleted() || (c.TTL > 0 && !c.At.Add(c.TTL).After(t)) || !Matches(conds, c.Value) {
				continue
			}
			it := Item{Namespace: c.Namespace, Key: c.Key, Value: c.Value, UpdatedAt: c.At, TTL: c.TTL, Writer: c.Writer}
			if c.TTL > 0 {
				it.ExpiresAt = c.At.Add(c.TTL)
			}
			out = append(out, it)
			if len(out) == want {
				return out[q.Offset:], nil
			}
		}
		if len(cs) < page {
			return out[min(q.Offset, len(out)):], nil
		}
	}
}
