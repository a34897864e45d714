package studio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
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
// A value that cannot be marshalled becomes its %v text.
func toJSON(v any) (out any) {
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
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&out) != nil {
		return string(b)
	}
	return out
}

// diffJSON appends the differences from a to b (JSON data) under path.
func diffJSON(path string, a, b any, out *[]change) {
	// A nil list or map (JSON null) compares as an empty one, so items
	// appended to a fresh reducer show as added.
	if a == nil {
		switch b.(type) {
		case []any:
			a = []any{}
		case map[string]any:
			a = map[string]any{}
		}
	}
	if b == nil {
		switch a.(type) {
		case []any:
			b = []any{}
		case map[string]any:
			b = map[string]any{}
		}
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := joinPath(path, k)
			av, inA := x[k]
			bv, inB := y[k]
			switch {
			case !inA:
				*out = append(*out, change{p, "added", nil, bv})
			case !inB:
				*out = append(*out, change{p, "removed", av, nil})
			default:
				diffJSON(p, av, bv, out)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		n := max(len(x), len(y))
		for i := 0; i < n; i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(x):
				*out = append(*out, change{p, "added", nil, y[i]})
			case i >= len(y):
				*out = append(*out, change{p, "removed", x[i], nil})
			default:
				diffJSON(p, x[i], y[i], out)
			}
		}
		return
	}
	if !jsonEqual(a, b) {
		*out = append(*out, change{path, "changed", a, b})
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// preview renders JSON data in one short line.
func preview(v any, n int) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(oneLine(x, n))
	case map[string]any:
		return fmt.Sprintf("{…} %d keys", len(x))
	case []any:
		if len(x) == 1 {
			return "[…] 1 item"
		}
		return fmt.Sprintf("[…] %d items", len(x))
	}
	b, _ := json.Marshal(v)
	return oneLine(string(b), n)
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
