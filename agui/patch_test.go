package agui

import (
	"encoding/json"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     string // the exact patch, when it matters
	}{
		{`{}`, `{}`, `[]`},
		{`{}`, `{"a":1}`, `[{"op":"add","path":"/a","value":1}]`},
		{`{"a":1}`, `{}`, `[{"op":"remove","path":"/a"}]`},
		{`{"a":1,"b":"x"}`, `{"a":2,"b":"x"}`, `[{"op":"replace","path":"/a","value":2}]`},
		{`{"log":["a"]}`, `{"log":["a","b"]}`, `[{"op":"add","path":"/log/1","value":"b"}]`},
		{`{"log":["a","b","c"]}`, `{"log":["a"]}`, `[{"op":"replace","path":"/log","value":["a"]}]`}, // smaller than two removes
		{`{"log":["aaaaaaaaaaaaaaaaaaaa","bbbbbbbbbbbbbbbbbbbbbbbb","c"]}`, `{"log":["aaaaaaaaaaaaaaaaaaaa"]}`, `[{"op":"remove","path":"/log/2"},{"op":"remove","path":"/log/1"}]`},
		{`{"a/b":1,"c~d":2}`, `{"a/b":3,"c~d":4}`, `[{"op":"replace","path":"/a~1b","value":3},{"op":"replace","path":"/c~0d","value":4}]`},
		{`{"n":1.5}`, `{"n":1.5}`, `[]`},
		{`{"l":[1,2,3]}`, `{"l":[3,2,1,0]}`, `[{"op":"replace","path":"/l","value":[3,2,1,0]}]`},
		{`{"o":{"x":{"y":[1,{"z":true}]}}}`, `{"o":{"x":{"y":[1,{"z":false,"w":null}]},"v":"new"}}`, ``},
		{`{"a":null}`, `{"a":1}`, `[{"op":"replace","path":"/a","value":1}]`},
		{`{"a":[1]}`, `{"a":{"x":1}}`, `[{"op":"replace","path":"/a","value":{"x":1}}]`},
		{`[1,2]`, `{"a":1}`, `[{"op":"replace","path":"","value":{"a":1}}]`},
		{`"s"`, `"t"`, `[{"op":"replace","path":"","value":"t"}]`},
	} {
		ops, err := Diff([]byte(c.from), []byte(c.to))
		if err != nil {
			t.Fatalf("%s → %s: %v", c.from, c.to, err)
		}
		got, _ := json.Marshal(ops)
		if ops == nil {
			got = []byte("[]")
		}
		if c.want != "" && string(got) != c.want {
			t.Errorf("%s → %s:\n got %s\nwant %s", c.from, c.to, got, c.want)
		}
		var doc any
		_ = json.Unmarshal([]byte(c.from), &doc)
		var back []PatchOp
		_ = json.Unmarshal(got, &back)
		res, err := applyPatch(doc, back)
		if err != nil {
			t.Fatalf("%s → %s: applying %s: %v", c.from, c.to, got, err)
		}
		out, _ := json.Marshal(res)
		if !jsonEqual(out, []byte(c.to)) {
			t.Errorf("%s → %s: patch %s gives %s", c.from, c.to, got, out)
		}
	}
	if _, err := Diff([]byte(`{`), []byte(`{}`)); err == nil {
		t.Error("Diff accepted invalid JSON")
	}
}
