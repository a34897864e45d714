package jsondiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// show writes changes one a line as "kind path old new", paths in String
// form, values as JSON.
func show(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		old, _ := json.Marshal(c.Old)
		nw, _ := json.Marshal(c.New)
		fmt.Fprintf(&b, "%s %q %s %s\n", c.Kind, c.Path.String(), old, nw)
	}
	return b.String()
}

func TestDiff(t *testing.T) {
	for _, c := range []struct {
		name, a, b string
		opts       Options
		want       string
	}{
		{"equal", `{"a":[1,{"b":null}]}`, `{"a":[1,{"b":null}]}`, Options{}, ``},
		{"member added and removed, in key order", `{"b":1,"z":2}`, `{"a":0,"b":1}`, Options{},
			"added \"a\" null 0\nremoved \"z\" 2 null\n"},
		{"leaf changed deep", `{"o":{"x":[1,{"y":true}]}}`, `{"o":{"x":[1,{"y":false}]}}`, Options{},
			"changed \"o.x[1].y\" true false\n"},
		{"items added at the end", `["a"]`, `["a","b","c"]`, Options{},
			"added \"[1]\" null \"b\"\nadded \"[2]\" null \"c\"\n"},
		{"items removed in index order", `["a","b","c"]`, `["a"]`, Options{},
			"removed \"[1]\" \"b\" null\nremoved \"[2]\" \"c\" null\n"},
		{"prefix before tail", `[1,2]`, `[3,2,5]`, Options{},
			"changed \"[0]\" 1 3\nadded \"[2]\" null 5\n"},
		{"object against list is one change", `{"a":[1]}`, `{"a":{"x":1}}`, Options{},
			"changed \"a\" [1] {\"x\":1}\n"},
		{"root leaf", `"s"`, `"t"`, Options{}, "changed \"\" \"s\" \"t\"\n"},
		{"numbers as written", `{"n":1}`, `{"n":1.0}`, Options{}, "changed \"n\" 1 1.0\n"},
		{"numbers by value with Equal", `{"n":1}`, `{"n":1.0}`, Options{Equal: func(a, b any) bool {
			x, _ := a.(json.Number).Float64()
			y, _ := b.(json.Number).Float64()
			return x == y
		}}, ``},
		{"null against list is a value", `{"l":null}`, `{"l":["a"]}`, Options{}, "changed \"l\" null [\"a\"]\n"},
		{"null against list is empty with NullIsEmpty", `{"l":null}`, `{"l":["a"]}`, Options{NullIsEmpty: true},
			"added \"l[0]\" null \"a\"\n"},
		{"null against object is empty with NullIsEmpty", `{"m":{"k":1}}`, `{"m":null}`, Options{NullIsEmpty: true},
			"removed \"m.k\" 1 null\n"},
		{"null against leaf stays a change with NullIsEmpty", `null`, `3`, Options{NullIsEmpty: true},
			"changed \"\" null 3\n"},
		{"Pair passes over its member", `{"id":"a","t":1}`, `{"id":"b","t":2}`,
			Options{Pair: func(a, b map[string]any) (string, bool) { return "id", true }},
			"changed \"t\" 1 2\n"},
		{"Pair reports its member first", `{"id":"a","t":1}`, `{"id":"b","t":2}`,
			Options{Pair: func(a, b map[string]any) (string, bool) { return "id", false }},
			"changed \"id\" \"a\" \"b\"\nchanged \"t\" 1 2\n"},
		{"Pair with no member", `{"id":"a"}`, `{"id":"b"}`,
			Options{Pair: func(a, b map[string]any) (string, bool) { return "", false }},
			"changed \"id\" \"a\" \"b\"\n"},
		{"List replaces a list's changes", `{"l":[1,2,3],"m":[1]}`, `{"l":[4,5,6],"m":[2]}`,
			Options{List: func(p Path, a, b []any, cs []Change) []Change {
				if len(cs) > 1 {
					return []Change{{Path: p, Kind: Changed, Old: a, New: b}}
				}
				return cs
			}},
			"changed \"l\" [1,2,3] [4,5,6]\nchanged \"m[0]\" 1 2\n"},
		{"List sees inner lists already handled", `[[1,2],[3]]`, `[[5,6],[3,4]]`,
			Options{List: func(p Path, a, b []any, cs []Change) []Change {
				if len(p) > 0 && len(cs) > 1 {
					return []Change{{Path: p, Kind: Changed, Old: a, New: b}}
				}
				slices.Reverse(cs)
				return cs
			}},
			"added \"[1][1]\" null 4\nchanged \"[0]\" [1,2] [5,6]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := show(c.opts.Diff(nil, mustDecode(t, c.a), mustDecode(t, c.b)))
			if got != c.want {
				t.Errorf("%s → %s:\n got %s\nwant %s", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestDiffBase(t *testing.T) {
	base := Path{{Key: "notes"}}
	cs := Options{}.Diff(base, mustDecode(t, `["a"]`), mustDecode(t, `["a","b"]`))
	if len(cs) != 1 || cs[0].Path.String() != "notes[1]" {
		t.Fatalf("got %v", cs)
	}
	if len(base) != 1 {
		t.Errorf("base changed: %v", base)
	}
}

// Paths kept from the walk must not share steps: a path taken by a later
// sibling must not overwrite an earlier one.
func TestPathsDoNotShareSteps(t *testing.T) {
	base := make(Path, 1, 8)
	base[0] = Step{Key: "root"}
	cs := Options{}.Diff(base, mustDecode(t, `{"a":1,"b":2,"c":3}`), mustDecode(t, `{"a":4,"b":5,"c":6}`))
	var got []string
	for _, c := range cs {
		got = append(got, c.Path.String())
	}
	if want := []string{"root.a", "root.b", "root.c"}; !slices.Equal(got, want) {
		t.Errorf("paths %v, want %v", got, want)
	}
}

func TestFirstStopsThere(t *testing.T) {
	pairs := 0
	o := Options{Pair: func(a, b map[string]any) (string, bool) { pairs++; return "", true }}
	c, ok := o.First(nil, mustDecode(t, `[{"x":1},{"x":2},{"x":3}]`), mustDecode(t, `[{"x":1},{"x":9},{"x":9}]`))
	if !ok || c.Path.String() != "[1].x" {
		t.Fatalf("First = %v %v", c, ok)
	}
	if pairs != 2 {
		t.Errorf("Pair asked %d times, want 2 (the walk goes on after the first difference)", pairs)
	}
	if _, ok := o.First(nil, mustDecode(t, `[1]`), mustDecode(t, `[1]`)); ok {
		t.Error("First found a difference between equal trees")
	}
}

func TestWalkStopsWhenYieldSaysSo(t *testing.T) {
	n := 0
	done := Options{}.Walk(nil, mustDecode(t, `[1,2,3]`), mustDecode(t, `[4,5,6,7]`), func(Change) bool {
		n++
		return n < 2
	})
	if done || n != 2 {
		t.Errorf("done=%v after %d changes, want false after 2", done, n)
	}
	o := Options{List: func(_ Path, _, _ []any, cs []Change) []Change { return cs }}
	n = 0
	done = o.Walk(nil, mustDecode(t, `{"a":[1,2],"b":3}`), mustDecode(t, `{"a":[4,5],"b":6}`), func(Change) bool {
		n++
		return n < 1
	})
	if done || n != 1 {
		t.Errorf("with List: done=%v after %d changes, want false after 1", done, n)
	}
}

func TestPathForms(t *testing.T) {
	for _, c := range []struct {
		p                    Path
		str, suffix, pointer string
	}{
		{nil, "", "", ""},
		{Path(nil).Key("messages").Index(0).Key("content"), "messages[0].content", ".messages[0].content", "/messages/0/content"},
		{Path(nil).Index(2).Key("a"), "[2].a", "[2].a", "/2/a"},
		{Path(nil).Key("a/b").Key("c~d"), "a/b.c~d", ".a/b.c~d", "/a~1b/c~0d"},
		{Path(nil).Key(""), "", ".", "/"},
	} {
		if got := c.p.String(); got != c.str {
			t.Errorf("%v String = %q, want %q", c.p, got, c.str)
		}
		if got := c.p.Suffix(); got != c.suffix {
			t.Errorf("%v Suffix = %q, want %q", c.p, got, c.suffix)
		}
		if got := c.p.Pointer(); got != c.pointer {
			t.Errorf("%v Pointer = %q, want %q", c.p, got, c.pointer)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Changed: "changed", Added: "added", Removed: "removed"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
}

func TestDecode(t *testing.T) {
	v, err := Decode([]byte(`{"n":1.50}`))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := v.(map[string]any)["n"].(json.Number); !ok || n != "1.50" {
		t.Errorf("n = %#v, want json.Number 1.50", v.(map[string]any)["n"])
	}
	if _, err := Decode([]byte(`{`)); err == nil {
		t.Error("Decode accepted invalid JSON")
	}
}

func TestUnionKeys(t *testing.T) {
	got := UnionKeys(map[string]int{"b": 1, "a": 2}, map[string]int{"c": 3, "a": 4})
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
