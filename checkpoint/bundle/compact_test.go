package bundle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// compactByEncoder is what valueOf checked before: valid JSON that
// json.Compact leaves as it is.
func compactByEncoder(b []byte) bool {
	var c bytes.Buffer
	return len(b) > 0 && json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
}

var compactCases = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-12.5e+3`, `1E9`, `0.5`, `""`, `"x"`, `{}`, `[]`,
	`{"a":1}`, `[1,"2",[3],{"4":null}]`, `{"a":{"b":[true,false]}}`, `"\"\\\/\b\f\n\r\t\u00e9\uD83D"`,
	`"é ✓ \u2028"`, "\"\xff\xfe\"", `"12345678901234567890\"1234567"`, `"1234567\\"`,
	`{"a" :1}`, `{"a": 1}`, `[1, 2]`, ` 1`, `1 `, "\"a\tb\"", "\"a\nb\"", `"\x"`, `"\u12"`, `"\u12G4"`,
	`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`, `[1,]`, `{"a":1,}`, `{"a"}`, `{1:2}`,
	`[`, `]`, `{`, `}`, `[}`, `{]`, `"`, `"abc`, `[1][2]`, `{}{}`, `{"a":1}}`, `[[]]]`, `"a"b`, ``, `,`, `:`,
	`"` + strings.Repeat("x", 100) + `"`, `"` + strings.Repeat(`\"`, 50) + `"`, `"` + strings.Repeat("x", 13) + "\x01" + `"`,
}

// isCompactJSON accepts exactly what json.Compact leaves unchanged.
func TestIsCompactJSONAgreesWithTheEncoder(t *testing.T) {
	for _, c := range compactCases {
		if got, want := isCompactJSON([]byte(c)), compactByEncoder([]byte(c)); got != want {
			t.Errorf("%q: %v, the encoder says %v", c, got, want)
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	deeper := "[" + deep + "]"
	for _, c := range []string{deep, deeper, strings.Repeat("[", maxDepth) + "{}" + strings.Repeat("]", maxDepth)} {
		if got, want := isCompactJSON([]byte(c)), compactByEncoder([]byte(c)); got != want {
			t.Errorf("nesting of %d: %v, the encoder says %v", strings.Count(c, "[")+strings.Count(c, "{"), got, want)
		}
	}
}

// FuzzIsCompactJSON checks isCompactJSON against the encoder on mutated
// documents:
//
//	go test -run '^$' -fuzz FuzzIsCompactJSON -fuzztime 200000x ./checkpoint/bundle
func FuzzIsCompactJSON(f *testing.F) {
	for _, c := range compactCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := isCompactJSON(b), compactByEncoder(b); got != want {
			t.Fatalf("%q: %v, the encoder says %v", b, got, want)
		}
	})
}
