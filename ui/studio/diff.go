package studio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftstudio/weft/internal/jsondiff"
)

// change is one difference between two JSON values: Path is like
// notes[2] or messages[0].content; Kind is "added", "removed" or "changed".
type change struct {
	Path     string
	Kind     string
	Old, New any
}

// toJSON turns any value into plain JSON data (maps, slices, strings,
// json.Number, bools, nil) so values of any Go type compare structurally.
// A value that cannot be marshalled becomes its %v text. A value that
// already is such data (as a LangGraph store's values are) is returned as
// it is, shared, not copied: encoding and decoding a thread's values of
// hundreds of megabytes held each twice more. Nothing in the studio
// changes the data it shows.
func toJSON(v any) (out any) {
	if isJSONData(v, 0) {
		return v
	}
	defer func() {
		// A user type's MarshalJSON may panic; the studio must not.
		if r := recover(); r != nil {
			out = fmt.Sprintf("<cannot show %T: %v>", v, r)
		}
	}()
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	t, err := jsondiff.Decode(b)
	if err != nil {
		return string(b)
	}
	return t
}

// isJSONData reports whether v is already what toJSON would make of it:
// strings of valid UTF-8, json.Numbers, bools and nil in non-nil maps and
// slices (a nil one would be null), at most maxJSONDepth deep.
func isJSONData(v any, depth int) bool {
	if depth > maxJSONDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(x)
	case json.Number:
		return x != "" && (x[0] == '-' || x[0] >= '0' && x[0] <= '9') && json.Valid([]byte(x))
	case map[string]any:
		if x == nil {
			return false
		}
		for k, e := range x {
			if !utf8.ValidString(k) || !isJSONData(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		if x == nil {
			return false
		}
		for _, e := range x {
			if !isJSONData(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// maxJSONDepth bounds isJSONData's walk; deeper data is copied.
const maxJSONDepth = 256

// diffOptions compare values for the Diff tab: a nil list or map (JSON
// null) compares as an empty one, so items appended to a fresh reducer
// show as added.
var diffOptions = jsondiff.Options{Equal: jsonEqual, NullIsEmpty: true}

// diffJSON appends the differences from a to b (JSON data) under path.
func diffJSON(path string, a, b any, out *[]change) {
	var base jsondiff.Path
	if path != "" {
		base = base.Key(path)
	}
	for _, c := range diffOptions.Diff(base, a, b) {
		*out = append(*out, change{c.Path.String(), c.Kind.String(), c.Old, c.New})
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonEqual(a, b any) bool {
	// Leaves of the same kind compare as they are: a string of hundreds
	// of megabytes is not encoded twice to be compared.
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x == y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	case json.Number:
		if y, ok := b.(json.Number); ok && x == y {
			return true
		}
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// preview renders JSON data in one line of at most n runes: strings
// quoted, objects and lists as one-line JSON ({"subject": "otters"}); a
// list too long for n says how many items it has before its start.
func preview(v any, n int) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(oneLine(x, n))
	case []any:
		js, full := lineJSON(v, n)
		if full {
			return js
		}
		head := fmt.Sprintf("%d items: ", len(x))
		if len(x) == 1 {
			head = "1 item: "
		}
		js, _ = lineJSON(v, max(8, n-len(head)))
		return head + js
	case map[string]any:
		js, _ := lineJSON(v, n)
		return js
	}
	js, _ := lineJSON(v, n)
	return js
}

// lineJSON writes JSON data as one line with a space after ':' and ',',
// keys sorted, stopping at n runes (ending in "…"); full reports whether
// all of it fit.
func lineJSON(v any, n int) (string, bool) {
	w := &lineWriter{budget: n}
	w.value(v)
	if w.over {
		r := []rune(w.b.String())
		if len(r) > n-1 {
			r = r[:max(0, n-1)]
		}
		return string(r) + "…", false
	}
	return w.b.String(), true
}

type lineWriter struct {
	b      strings.Builder
	budget int
	over   bool
}

func (w *lineWriter) str(s string) {
	if w.over {
		return
	}
	w.b.WriteString(s)
	if utf8.RuneCountInString(w.b.String()) > w.budget {
		w.over = true
	}
}

func (w *lineWriter) value(v any) {
	if w.over {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.str("{")
		for i, k := range keys {
			if i > 0 {
				w.str(", ")
			}
			kb, _ := json.Marshal(k)
			w.str(string(kb) + ": ")
			w.value(x[k])
		}
		w.str("}")
	case []any:
		w.str("[")
		for i, e := range x {
			if i > 0 {
				w.str(", ")
			}
			w.value(e)
		}
		w.str("]")
	case string:
		b, _ := json.Marshal(oneLine(x, w.budget))
		w.str(string(b))
	default:
		b, _ := json.Marshal(x)
		w.str(string(b))
	}
}

// text is how the Diff tab shows a change: the new or removed value, or
// old → new; for long strings only the part around what changed.
func (r diffRow) text() string {
	switch r.Kind {
	case "added":
		return preview(r.New, 80)
	case "removed":
		return preview(r.Old, 80)
	}
	a, aok := r.Old.(string)
	b, bok := r.New.(string)
	if aok && bok && (len([]rune(a)) > 36 || len([]rune(b)) > 36) {
		x, y := changedPart(a, b, 14, 40)
		return x + " → " + y
	}
	return preview(r.Old, 36) + " → " + preview(r.New, 36)
}

// changedPart returns quoted excerpts of a and b around where they differ:
// ctx runes of what they share on each side of the changed part (at most
// most runes of it), with "…" where text is left out.
func changedPart(a, b string, ctx, most int) (string, string) {
	ra, rb := []rune(oneLine(a, 1<<30)), []rune(oneLine(b, 1<<30))
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	q := 0
	for q < len(ra)-p && q < len(rb)-p && ra[len(ra)-1-q] == rb[len(rb)-1-q] {
		q++
	}
	excerpt := func(r []rune) string {
		start := max(0, p-ctx)
		midEnd := len(r) - q
		end := min(len(r), midEnd+ctx)
		var out strings.Builder
		if start > 0 {
			out.WriteString("…")
		}
		if midEnd-p > most {
			out.WriteString(string(r[start:p+most/2]) + "…" + string(r[midEnd-most/2:end]))
		} else {
			out.WriteString(string(r[start:end]))
		}
		if end < len(r) {
			out.WriteString("…")
		}
		return strconv.Quote(out.String())
	}
	return excerpt(ra), excerpt(rb)
}

// prettyJSON indents v's JSON.
func prettyJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// joinNames lists names compactly, counting repeats: "research ×3, write".
func joinNames(names []string) string {
	var order []string
	counts := map[string]int{}
	for _, n := range names {
		if n == "__start__" {
			n = "start"
		}
		if counts[n] == 0 {
			order = append(order, n)
		}
		counts[n]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = n
		if counts[n] > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", n, counts[n])
		}
	}
	return strings.Join(parts, ", ")
}

// clock formats a time of day for the timeline and the inspector; tests
// replace it to make golden files stable.
var clock = func(t time.Time) string { return t.Local().Format("15:04:05") }

// clockMS is clock with milliseconds, for the event log.
var clockMS = func(t time.Time) string { return t.Local().Format("15:04:05.000") }
