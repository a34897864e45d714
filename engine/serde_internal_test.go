package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// The reflection-free encoder writes exactly what json.Marshal writes, and
// declines what it would get wrong.
func TestAppendSimpleJSONMatchesMarshal(t *testing.T) {
	for _, tc := range []struct {
		v      any
		simple bool
	}{
		{0, true}, {-42, true}, {math.MaxInt64, true}, {int64(math.MinInt64), true},
		{true, true}, {false, true},
		{"", true}, {"plain text 123", true},
		{"quote\"", false}, {"back\\slash", false}, {"<b>", false}, {"a&b", false},
		{"tab\t", false}, {"héllo", false}, {"\u2028", false},
		{[]string(nil), true}, {[]string{}, true}, {[]string{"a", "", "c d"}, true},
		{[]string{"ok", "<no>"}, false},
		{3.5, false}, {uint(3), false}, {[]int{1}, false}, {map[string]int{"a": 1}, false},
	} {
		got, ok := appendSimpleJSON(nil, tc.v)
		if ok != tc.simple {
			t.Errorf("%#v: simple = %v, want %v", tc.v, ok, tc.simple)
			continue
		}
		if !ok {
			continue
		}
		want, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%#v: got %s, json.Marshal gives %s", tc.v, got, want)
		}
	}
}

// The reflection-free decoder agrees with json.Unmarshal wherever it
// answers, and leaves everything else to it.
func TestDecodeSimpleJSONMatchesUnmarshal(t *testing.T) {
	inputs := []string{
		`0`, `-0`, `7`, `-42`, `123456789012345678`, `1234567890123456789`, `9223372036854775807`,
		`007`, `1.5`, `1e3`, ` 1`, `1 `, `-`, ``, `+1`,
		`true`, `false`, `null`, `True`,
		`""`, `"plain"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, `"héllo"`, "\"\xff\"", "\"tab\t\"", `"unterminated`, `"`,
	}
	for _, in := range inputs {
		check := func(name string, fast func() (any, bool), slow func() (any, error)) {
			got, ok := fast()
			want, err := slow()
			if ok && (err != nil || got != want) {
				t.Errorf("%s %q: fast %v, json.Unmarshal %v (%v)", name, in, got, want, err)
			}
		}
		check("int", func() (any, bool) { var v int; ok := decodeSimpleJSON([]byte(in), &v); return v, ok },
			func() (any, error) { var v int; err := json.Unmarshal([]byte(in), &v); return v, err })
		check("int64", func() (any, bool) { var v int64; ok := decodeSimpleJSON([]byte(in), &v); return v, ok },
			func() (any, error) { var v int64; err := json.Unmarshal([]byte(in), &v); return v, err })
		check("bool", func() (any, bool) { var v bool; ok := decodeSimpleJSON([]byte(in), &v); return v, ok },
			func() (any, error) { var v bool; err := json.Unmarshal([]byte(in), &v); return v, err })
		check("string", func() (any, bool) { var v string; ok := decodeSimpleJSON([]byte(in), &v); return v, ok },
			func() (any, error) { var v string; err := json.Unmarshal([]byte(in), &v); return v, err })
	}
	// The common cases do take the fast path.
	var n int
	var s string
	if !decodeSimpleJSON([]byte(`-42`), &n) || n != -42 || !decodeSimpleJSON([]byte(`"plain"`), &s) || s != "plain" {
		t.Errorf("fast path not taken: %d %q", n, s)
	}
}

// A Values map encodes to what json.Marshal of its encoded members gives,
// tricky keys and values included, and decodes back.
func TestValuesCodecMatchesMarshal(t *testing.T) {
	type doc struct {
		Title string `json:"title"`
	}
	RegisterType[doc]("values-codec-doc")
	a := LastValue[string]("a")
	odd := LastValue[string]("b<c>&\"é\"")
	n := LastValue[int]("n")
	list := List[string]("list")
	d := LastValue[doc]("doc")
	anyCh := LastValue[any]("any")
	g, err := NewGraph("codec", a, odd, n, list, d, anyCh).
		AddNode("x", func(ctx context.Context, s State) (Output, error) { return nil, nil }).
		AddEdge(START, "x").Compile()
	if err != nil {
		t.Fatal(err)
	}
	in := Values{"a": "plain", "b<c>&\"é\"": "<tag> & \u2028", "n": -3, "list": []string{"x", "y<"},
		"doc": doc{Title: "t&t"}, "any": doc{Title: "dyn"}}
	c := valuesCodec{g}
	got, err := c.encode(in)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]json.RawMessage{}
	for k, v := range in {
		b, err := g.specs[g.chanIdx[k]].codec.encode(v)
		if err != nil {
			t.Fatal(err)
		}
		raw[k] = b
	}
	want, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encode:\n got %s\nwant %s", got, want)
	}
	back, err := c.decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("decode(encode(v)) = %#v, want %#v", back, in)
	}
	if _, err := c.encode(Values{"nope": 1}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown key: err = %v", err)
	}
}
