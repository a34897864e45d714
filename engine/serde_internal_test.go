package engine

import (
	"bytes"
	"encoding/json"
	"math"
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
