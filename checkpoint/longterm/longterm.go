// Package longterm is Weft's long-term store: JSON documents kept across
// threads and runs, in hierarchical namespaces, with LangGraph's BaseStore
// semantics (put, get, delete, search by namespace prefix with a filter on
// values and an optional semantic query, list namespaces, time-to-live with
// refresh on read).
//
// A graph gets a Store at compile time (engine.WithStore) and its nodes
// reach it through engine.RuntimeOf(ctx).Store. Implementations: NewMemory
// here, the SQLite checkpoint store's (*sqlite.Saver).LongTerm, which keeps
// the items in the checkpoint file itself, and the conformance suite
// longtermtest that each passes.
//
// # Items
//
// An Item is a JSON object (Value) under a Namespace and a Key. Values go
// through their JSON encoding on Put: what comes back is what
// encoding/json decodes (numbers as float64, objects as map[string]any),
// and later changes to the map given to Put do not reach the store.
// Putting an existing key replaces its value and keeps CreatedAt.
//
// # Namespaces
//
// A Namespace is a non-empty list of labels, like LangGraph's tuples. A
// label is not empty and contains no "." (implementations join labels with
// "."); the first label is not "langgraph", which LangGraph reserves.
//
// # Search
//
// Search returns the items under a namespace prefix that match a Filter,
// newest update first (ties by namespace, then key). With a Query and an
// Embedder the items are ranked by cosine similarity instead, best first;
// only items that have embeddings take part, and each item's score is the
// best of its fields' (max pooling, as LangGraph). The similarity is an
// exact scan of the candidates' vectors.
//
// # Time to live
//
// An item put with a TTL expires that long after its last write, or its
// last read: Get and Search push the expiry back by the item's TTL unless
// asked not to (LangGraph's refresh_on_read). An expired item is gone for
// every read at once; Sweeper removes its row.
package longterm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Namespace is the path of labels an item lives under, such as
// {"users", "u1", "memories"}.
type Namespace []string

// String joins the labels with ".", as implementations store them.
func (ns Namespace) String() string { return strings.Join(ns, ".") }

// ParseNamespace splits s at "." into a Namespace; "" is the empty
// namespace (every namespace, as a search prefix).
func ParseNamespace(s string) Namespace {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// Item is a stored document.
type Item struct {
	Namespace Namespace
	Key       string
	// Value is the document, as its JSON encoding decodes.
	Value map[string]any
	// CreatedAt is when the key was first put (since its last delete);
	// UpdatedAt when its value was last put. Both are in UTC.
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is when the item expires unless read or put again; zero
	// for an item without a TTL.
	ExpiresAt time.Time
	// TTL is the item's time to live; 0 for none.
	TTL time.Duration
	// Score is the item's similarity to a search's Query; nil when the
	// search had none (and for Get).
	Score *float64
	// Writer is who put the value: the zero Writer for a put made outside
	// a run, and in a store that does not record writers.
	Writer Writer
}

// Decode decodes the item's value into v (a pointer to a struct or map),
// through its JSON encoding.
func (it Item) Decode(v any) error {
	b, err := json.Marshal(it.Value)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Store is a long-term store. Implementations are safe for concurrent use.
type Store interface {
	// Get returns the item at ns and key, or nil when there is none (or it
	// expired). It refreshes the item's TTL unless NoRefresh is given.
	Get(ctx context.Context, ns Namespace, key string, opts ...ReadOption) (*Item, error)
	// Put stores value at ns and key, replacing any value there. Without
	// WithTTL the item never expires; with an Embedder, the value's fields
	// are embedded unless NoIndex is given.
	Put(ctx context.Context, ns Namespace, key string, value map[string]any, opts ...PutOption) error
	// Delete removes the item at ns and key; deleting a missing item is no
	// error.
	Delete(ctx context.Context, ns Namespace, key string) error
	// Search returns items under q.Prefix matching q.Filter (see the
	// package documentation for the order).
	Search(ctx context.Context, q SearchQuery) ([]Item, error)
	// ListNamespaces returns the namespaces that hold items, sorted label
	// by label.
	ListNamespaces(ctx context.Context, q NamespaceQuery) ([]Namespace, error)
}

// Sweeper is implemented by stores whose expired items keep their storage
// until swept: Sweep deletes every expired item and says how many.
type Sweeper interface {
	Sweep(ctx context.Context) (int, error)
}

// ReadOption configures Get.
type ReadOption func(*readOptions)

type readOptions struct{ noRefresh bool }

// NoRefresh reads without pushing back the item's expiry.
func NoRefresh() ReadOption { return func(o *readOptions) { o.noRefresh = true } }

// Refresh reports whether opts ask for the TTL refresh (for
// implementations).
func Refresh(opts []ReadOption) bool {
	var o readOptions
	for _, f := range opts {
		f(&o)
	}
	return !o.noRefresh
}

// PutOption configures Put.
type PutOption func(*PutOptions)

// PutOptions is what a Put was asked, for implementations (ApplyPut).
type PutOptions struct {
	// TTL is the item's time to live; 0 for none.
	TTL time.Duration
	// NoIndex: store no embeddings for the item.
	NoIndex bool
	// Fields replaces the store's Config.Fields for this item; nil keeps
	// them.
	Fields []string
}

// WithTTL makes the item expire d after its last write or read. d must be
// positive.
func WithTTL(d time.Duration) PutOption {
	return func(o *PutOptions) {
		o.TTL = d
		if d <= 0 {
			o.TTL = -1 // refused by ApplyPut: a zero or negative TTL is a mistake
		}
	}
}

// NoIndex stores the item without embeddings: a search with a Query does
// not find it (LangGraph's index=False).
func NoIndex() PutOption { return func(o *PutOptions) { o.NoIndex = true } }

// IndexFields embeds these fields of the value instead of the store's
// Config.Fields (LangGraph's index=[...]).
func IndexFields(fields ...string) PutOption {
	return func(o *PutOptions) { o.Fields = append([]string{}, fields...) }
}

// ApplyPut collects opts, refusing a TTL that is not positive.
func ApplyPut(opts []PutOption) (PutOptions, error) {
	var o PutOptions
	for _, f := range opts {
		f(&o)
	}
	if o.TTL < 0 {
		return o, errors.New("TTL must be positive (omit WithTTL for an item that never expires)")
	}
	for _, f := range o.Fields {
		if err := checkField(f); err != nil {
			return o, err
		}
	}
	return o, nil
}

// SearchQuery is what Search looks for.
type SearchQuery struct {
	// Prefix is the namespace prefix; empty searches every namespace.
	Prefix Namespace
	// Query, when not "", ranks the items by similarity to it (the store
	// needs an Embedder).
	Query string
	// Filter keeps only the items whose values match it.
	Filter Filter
	// Limit is the most items returned; 0 means 10, as in LangGraph.
	Limit int
	// Offset skips that many items first.
	Offset int
	// NoRefresh reads without pushing back the items' expiry.
	NoRefresh bool
}

// DefaultSearchLimit and DefaultNamespaceLimit are the limits a zero Limit
// means, LangGraph's defaults.
const (
	DefaultSearchLimit    = 10
	DefaultNamespaceLimit = 100
)

// NamespaceQuery is what ListNamespaces looks for. Prefix and Suffix may
// hold "*", which matches any one label.
type NamespaceQuery struct {
	Prefix Namespace
	Suffix Namespace
	// MaxDepth, when positive, cuts each namespace to its first MaxDepth
	// labels (duplicates then appear once).
	MaxDepth int
	// Limit is the most namespaces returned; 0 means 100, as in LangGraph.
	Limit int
	// Offset skips that many namespaces first.
	Offset int
}

// Config configures an implementation.
type Config struct {
	// Embedder turns text into vectors for semantic search; nil: a search
	// with a Query is an error.
	Embedder Embedder
	// Fields are the paths of the values embedded (see TextsAt); nil means
	// {"$"}, the whole value.
	Fields []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Clock returns c.Now, or time.Now.
func (c Config) Clock() func() time.Time {
	if c.Now != nil {
		return c.Now
	}
	return time.Now
}

// A PreparedPut is a put checked and made ready for a store to write: what
// every implementation does before it touches its tables.
type PreparedPut struct {
	// Options are the put's options, applied.
	Options PutOptions
	// Raw is the value's canonical JSON; Value the value it decodes to.
	Raw   []byte
	Value map[string]any
	// Vectors are the embeddings of the fields Config.EmbedFields names,
	// in that order; nil when nothing is embedded.
	Vectors [][]float32
}

// PreparePut checks a put of value at ns and key with opts (namespace,
// key, options, value), makes the value canonical and embeds it with c's
// embedder. An embedder's failure is returned as it is, for the store to
// say where it happened.
func (c Config) PreparePut(ctx context.Context, ns Namespace, key string, value map[string]any, opts []PutOption) (PreparedPut, error) {
	var p PreparedPut
	if err := CheckNamespace(ns); err != nil {
		return p, err
	}
	if err := CheckKey(ns, key); err != nil {
		return p, err
	}
	var err error
	if p.Options, err = ApplyPut(opts); err != nil {
		return p, err
	}
	if p.Raw, p.Value, err = Canonical(value); err != nil {
		return p, err
	}
	p.Vectors, err = Embed(ctx, c.Embedder, p.Value, c.EmbedFields(p.Options))
	return p, err
}

// EmbedFields returns the fields to embed for a put with o: nil when
// nothing is embedded.
func (c Config) EmbedFields(o PutOptions) []string {
	switch {
	case c.Embedder == nil || o.NoIndex:
		return nil
	case o.Fields != nil:
		return o.Fields
	case c.Fields != nil:
		return c.Fields
	}
	return []string{"$"}
}

// Errors, compared with errors.Is; messages say what was wrong.
var (
	// ErrInvalid: a namespace, key, value, filter or query is malformed.
	ErrInvalid = errors.New("invalid long-term store input")
	// ErrNoEmbedder: a search has a Query but the store has no Embedder.
	ErrNoEmbedder = errors.New("the long-term store has no embedder for a semantic query")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CheckNamespace checks a namespace an item is put at: not empty, no empty
// label, no "." in a label, not starting with "langgraph".
func CheckNamespace(ns Namespace) error {
	if len(ns) == 0 {
		return invalid("namespace is empty: give at least one label")
	}
	if err := checkLabels(ns, false); err != nil {
		return err
	}
	if ns[0] == "langgraph" {
		return invalid("namespace %q: the first label cannot be \"langgraph\" (reserved, as in LangGraph)", ns.String())
	}
	return nil
}

// CheckKey checks an item's namespace and key for Get and Delete (Put
// uses CheckNamespace too).
func CheckKey(ns Namespace, key string) error {
	if len(ns) == 0 {
		return invalid("namespace is empty: give at least one label")
	}
	if err := checkLabels(ns, false); err != nil {
		return err
	}
	if key == "" {
		return invalid("key is empty")
	}
	return nil
}

func checkLabels(ns Namespace, wildcards bool) error {
	for i, l := range ns {
		switch {
		case l == "":
			return invalid("namespace %q: label %d is empty", ns.String(), i+1)
		case strings.Contains(l, "."):
			return invalid("namespace label %q contains \".\", which separates labels", l)
		case !wildcards && l == "*":
			return invalid("namespace %q: label %d is \"*\", a wildcard only list-namespaces prefixes and suffixes take", ns.String(), i+1)
		}
	}
	return nil
}

// CheckSearch checks q and returns its limit (the default for 0).
func CheckSearch(q SearchQuery) (limit int, err error) {
	if err := checkLabels(q.Prefix, false); err != nil {
		return 0, fmt.Errorf("search prefix: %w", err)
	}
	if q.Limit < 0 || q.Offset < 0 {
		return 0, invalid("search limit %d and offset %d must not be negative", q.Limit, q.Offset)
	}
	if _, err := q.Filter.Conditions(); err != nil {
		return 0, err
	}
	if q.Limit == 0 {
		return DefaultSearchLimit, nil
	}
	return q.Limit, nil
}

// Literal returns the labels of q's prefix before its first "*": the part
// a store can look up by range, the rest matched by ListNamespaces.
func (q NamespaceQuery) Literal() Namespace {
	var lit Namespace
	for _, p := range q.Prefix {
		if p == "*" {
			break
		}
		lit = append(lit, p)
	}
	return lit
}

// CheckNamespaceQuery checks q and returns its limit (the default for 0).
func CheckNamespaceQuery(q NamespaceQuery) (limit int, err error) {
	if err := checkLabels(q.Prefix, true); err != nil {
		return 0, fmt.Errorf("namespace prefix: %w", err)
	}
	if err := checkLabels(q.Suffix, true); err != nil {
		return 0, fmt.Errorf("namespace suffix: %w", err)
	}
	if q.Limit < 0 || q.Offset < 0 || q.MaxDepth < 0 {
		return 0, invalid("limit %d, offset %d and max depth %d must not be negative", q.Limit, q.Offset, q.MaxDepth)
	}
	if q.Limit == 0 {
		return DefaultNamespaceLimit, nil
	}
	return q.Limit, nil
}

// MaxValueSize is the largest value Put stores, in bytes of its JSON:
// checkpoint.MaxValueSize, the largest channel value.
const MaxValueSize = checkpoint.MaxValueSize

// EncodeValue checks a value to put and returns its JSON encoding.
func EncodeValue(v map[string]any) ([]byte, error) {
	if v == nil {
		return nil, invalid("value is nil (use Delete to remove an item)")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, invalid("value is not JSON: %v", err)
	}
	if len(b) > MaxValueSize {
		return nil, invalid("value is %d bytes of JSON, more than the %d a store takes", len(b), MaxValueSize)
	}
	return b, nil
}

// Canonical checks a value to put and returns its canonical JSON (what a
// decode of the value encodes to: numbers as float64 print, keys sorted)
// and that decoded value. Storing the canonical text lets a store compare
// arrays and objects by text as Matches compares them by meaning.
func Canonical(v map[string]any) ([]byte, map[string]any, error) {
	raw, err := EncodeValue(v)
	if err != nil {
		return nil, nil, err
	}
	dec, err := DecodeValue(raw)
	if err != nil {
		return nil, nil, err
	}
	raw, err = json.Marshal(dec)
	return raw, dec, err
}

// DecodeValue decodes a stored value.
func DecodeValue(b []byte) (map[string]any, error) {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("stored value: %w", err)
	}
	if v == nil {
		return nil, errors.New("stored value is not a JSON object")
	}
	return v, nil
}

// HasPrefix reports whether ns starts with the labels of prefix.
func HasPrefix(ns, prefix Namespace) bool {
	return len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix)
}

// MatchNamespace reports whether ns matches a NamespaceQuery's prefix and
// suffix ("*" matching any label).
func MatchNamespace(ns Namespace, q NamespaceQuery) bool {
	match := func(labels, pattern []string) bool {
		for i, p := range pattern {
			if p != "*" && labels[i] != p {
				return false
			}
		}
		return true
	}
	if len(ns) < len(q.Prefix) || len(ns) < len(q.Suffix) {
		return false
	}
	return match(ns[:len(q.Prefix)], q.Prefix) && match(ns[len(ns)-len(q.Suffix):], q.Suffix)
}

// ListNamespaces answers q from every namespace that holds an item (for
// implementations): matched, cut to MaxDepth, sorted label by label,
// deduplicated, then offset and limited.
func ListNamespaces(all []Namespace, q NamespaceQuery) ([]Namespace, error) {
	limit, err := CheckNamespaceQuery(q)
	if err != nil {
		return nil, err
	}
	var out []Namespace
	for _, ns := range all {
		if !MatchNamespace(ns, q) {
			continue
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		out = append(out, slices.Clone(ns))
	}
	slices.SortFunc(out, func(a, b Namespace) int { return slices.Compare(a, b) })
	out = slices.CompactFunc(out, func(a, b Namespace) bool { return slices.Equal(a, b) })
	if q.Offset >= len(out) {
		return []Namespace{}, nil
	}
	out = out[q.Offset:]
	return out[:min(limit, len(out))], nil
}

// Cosine is the cosine similarity of a and b; 0 when either is zero or
// their lengths differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// SearchPlan is what a store needs of a checked search: its limit (the
// default for 0), its filter's conditions, and the query's vector (nil
// without a query).
type SearchPlan struct {
	Limit      int
	Conditions []Condition
	Vector     []float32
}

// PrepareSearch checks q and embeds its query with e, once for every store.
func PrepareSearch(ctx context.Context, e Embedder, q SearchQuery) (SearchPlan, error) {
	limit, err := CheckSearch(q)
	if err != nil {
		return SearchPlan{}, err
	}
	conds, _ := q.Filter.Conditions() // CheckSearch checked the filter
	p := SearchPlan{Limit: limit, Conditions: conds}
	if q.Query != "" {
		if p.Vector, err = EmbedQuery(ctx, e, q.Query); err != nil {
			return SearchPlan{}, err
		}
	}
	return p, nil
}
