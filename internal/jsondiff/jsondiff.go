// Package jsondiff walks two JSON trees side by side and lists where they
// differ. It is the one walk behind replay's first difference between two
// runs, AG-UI's JSON Patch between two states and the studio's Diff tab;
// each keeps its own output (a path string, patch operations, rows) and
// states its own rules through Options.
//
// A JSON tree is what encoding/json decodes into an any: map[string]any,
// []any, string, json.Number or float64, bool and nil. Decode makes one
// with numbers kept as written.
package jsondiff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Decode decodes one JSON text into a tree, keeping numbers as written
// (json.Number), so that 1.0 and 1 stay apart unless an Options.Equal
// says otherwise.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Step is one step down a tree: into the member Key of an object, or when
// List is set into item Index of a list. The zero value is the member
// named "".
type Step struct {
	Key   string
	Index int
	List  bool
}

// Path locates a value from the root of a tree; nil is the root itself.
type Path []Step

// Key returns p followed by the object member k. p is not changed, so
// paths kept in Changes never share their steps.
func (p Path) Key(k string) Path { return append(p[:len(p):len(p)], Step{Key: k}) }

// Index returns p followed by list item i. p is not changed.
func (p Path) Index(i int) Path { return append(p[:len(p):len(p)], Step{Index: i, List: true}) }

// Suffix writes p as it follows a name: ".notes[2].text", "[0]"; "" for
// the root. Keys are written as they are, unescaped.
func (p Path) Suffix() string {
	var b strings.Builder
	for _, s := range p {
		if s.List {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		} else {
			b.WriteString("." + s.Key)
		}
	}
	return b.String()
}

// String writes p as a path of its own: "notes[2].text", "[0]"; "" for the
// root. It is Suffix without a leading dot.
func (p Path) String() string { return strings.TrimPrefix(p.Suffix(), ".") }

// Pointer writes p as an RFC 6901 JSON Pointer: "/notes/2/text", with "~"
// and "/" in keys escaped; "" for the root.
func (p Path) Pointer() string {
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		if s.List {
			b.WriteString(strconv.Itoa(s.Index))
		} else {
			b.WriteString(EscapePointer(s.Key))
		}
	}
	return b.String()
}

// EscapePointer escapes one JSON Pointer reference token (RFC 6901).
func EscapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Kind says what a Change did. The zero value is Changed.
type Kind int

// The kinds of change.
const (
	// Changed: a value is there on both sides and differs (a leaf, or an
	// object against a list).
	Changed Kind = iota
	// Added: an object member or list item only the new side has.
	Added
	// Removed: an object member or list item only the old side has.
	Removed
)

// String returns "changed", "added" or "removed".
func (k Kind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	}
	return "changed"
}

// Change is one difference: at Path the old value Old became New (Old is
// nil for Added, New for Removed).
type Change struct {
	Path     Path
	Kind     Kind
	Old, New any
}

// Options say how two trees are compared. The zero value compares leaves
// with reflect.DeepEqual, takes null as a value of its own and knows no
// member that needs a rule of its own.
type Options struct {
	// Equal reports whether two values that are not both objects or both
	// lists are the same; nil is reflect.DeepEqual.
	Equal func(a, b any) bool
	// NullIsEmpty makes a null against an object or list compare as an
	// empty one, so every member or item of the other shows as added or
	// removed rather than the whole value as changed.
	NullIsEmpty bool
	// Pair, when set, is called for every two objects compared, before
	// their members. It names a member it takes charge of ("" for none),
	// which the walk then passes over, and whether that member is the same
	// on both sides; when not, the walk reports it changed there.
	Pair func(a, b map[string]any) (key string, same bool)
	// List, when set, is called for every two lists compared, with the
	// changes found in them (in walk order), and returns what stands for
	// those changes: for reordering them or putting one change of the
	// whole list in their place.
	List func(path Path, a, b []any, changes []Change) []Change
}

// Diff returns every difference from a to b, in walk order: object members
// in key order, list items in index order, the items one side has beyond
// the other's last. Paths start with base.
func (o Options) Diff(base Path, a, b any) []Change {
	var out []Change
	o.Walk(base, a, b, func(c Change) bool {
		out = append(out, c)
		return true
	})
	return out
}

// First returns the first difference Diff would return; the walk stops
// there, so Pair is not asked about what follows it.
func (o Options) First(base Path, a, b any) (Change, bool) {
	var first Change
	found := false
	o.Walk(base, a, b, func(c Change) bool {
		first, found = c, true
		return false
	})
	return first, found
}

// Walk calls yield with each difference from a to b in the order Diff
// returns them, until yield returns false. It reports whether it went to
// the end. Changes inside lists reach yield only once their list is
// walked when List is set.
func (o Options) Walk(base Path, a, b any, yield func(Change) bool) bool {
	w := walker{o: o, yield: yield}
	return w.walk(base, a, b)
}

type walker struct {
	o       Options
	yield   func(Change) bool
	held    []Change // changes waiting for Options.List, innermost list last
	holding int      // how many lists with Options.List are being walked
}

func (w *walker) emit(c Change) bool {
	if w.holding > 0 {
		w.held = append(w.held, c)
		return true
	}
	return w.yield(c)
}

func (w *walker) walk(path Path, a, b any) bool {
	if w.o.NullIsEmpty {
		a, b = emptyFor(a, b), emptyFor(b, a)
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			return w.objects(path, x, y)
		}
	case []any:
		if y, ok := b.([]any); ok {
			return w.list(path, x, y)
		}
	}
	if w.equal(a, b) {
		return true
	}
	return w.emit(Change{Path: path, Kind: Changed, Old: a, New: b})
}

// emptyFor returns an empty object or list in place of a null v when other
// is one, and v otherwise.
func emptyFor(v, other any) any {
	if v != nil {
		return v
	}
	switch other.(type) {
	case []any:
		return []any{}
	case map[string]any:
		return map[string]any{}
	}
	return v
}

func (w *walker) equal(a, b any) bool {
	if w.o.Equal != nil {
		return w.o.Equal(a, b)
	}
	return reflect.DeepEqual(a, b)
}

func (w *walker) objects(path Path, a, b map[string]any) bool {
	skip := ""
	if w.o.Pair != nil {
		var same bool
		if skip, same = w.o.Pair(a, b); skip != "" && !same {
			if !w.emit(Change{Path: path.Key(skip), Kind: Changed, Old: a[skip], New: b[skip]}) {
				return false
			}
		}
	}
	for _, k := range UnionKeys(a, b) {
		if skip != "" && k == skip {
			continue
		}
		x, inA := a[k]
		y, inB := b[k]
		var ok bool
		switch {
		case !inA:
			ok = w.emit(Change{Path: path.Key(k), Kind: Added, New: y})
		case !inB:
			ok = w.emit(Change{Path: path.Key(k), Kind: Removed, Old: x})
		default:
			ok = w.walk(path.Key(k), x, y)
		}
		if !ok {
			return false
		}
	}
	return true
}

func (w *walker) list(path Path, a, b []any) bool {
	start := len(w.held)
	if w.o.List != nil {
		w.holding++
	}
	ok := w.items(path, a, b)
	if w.o.List == nil {
		return ok
	}
	w.holding--
	found := slices.Clone(w.held[start:])
	w.held = w.held[:start]
	for _, c := range w.o.List(path, a, b, found) {
		if !w.emit(c) {
			return false
		}
	}
	return ok
}

func (w *walker) items(path Path, a, b []any) bool {
	n := min(len(a), len(b))
	for i := range n {
		if !w.walk(path.Index(i), a[i], b[i]) {
			return false
		}
	}
	for i := n; i < len(b); i++ {
		if !w.emit(Change{Path: path.Index(i), Kind: Added, New: b[i]}) {
			return false
		}
	}
	for i := n; i < len(a); i++ {
		if !w.emit(Change{Path: path.Index(i), Kind: Removed, Old: a[i]}) {
			return false
		}
	}
	return true
}

// UnionKeys returns the keys of a and b, each once, sorted.
func UnionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
