package langgraph

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestDecodeJSONBody checks the split decoding of JS checkpoint bodies
// (channel values through the cache) against decoding each body whole, on
// every checkpoint of the LangGraph.js SQLite fixture, and that values
// stored twice are decoded once and shared.
func TestDecodeJSONBody(t *testing.T) {
	defer func(n int) { inlineDecode = n }(inlineDecode)
	inlineDecode = 1 << 62 // every row's bytes kept, to decode both ways here
	r := sqliteCase("js-sqlite", nil).open(t)
	ctx := context.Background()
	rows, err := r.b.threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bodies, shared := 0, 0
	for _, row := range rows {
		raw, err := r.b.thread(ctx, row.id)
		if err != nil {
			t.Fatal(err)
		}
		vc := newValueCache()
		seen := map[string]any{} // stored bytes → the value first decoded from them
		for _, c := range raw.cps {
			whole, werr := r.decodeValue(c.typ, c.cp)
			split, serr := r.decodeJSONBody(vc, c.cp)
			if (werr == nil) != (serr == nil) || !reflect.DeepEqual(whole, split) {
				t.Fatalf("thread %s checkpoint %s: split decoding %v (%v), whole %v (%v)", row.id, c.id, split, serr, whole, werr)
			}
			bodies++
			_, raws, _ := splitJSONBody(c.cp)
			vals, _ := split.(map[string]any)["channel_values"].(map[string]any)
			for ch, b := range raws {
				v := vals[ch]
				if _, ok := v.(map[string]any); !ok {
					if _, ok := v.([]any); !ok {
						continue // only maps and lists can be told apart by identity
					}
				}
				if first, ok := seen[string(b)]; ok {
					if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(v).UnsafePointer() {
						t.Fatalf("thread %s checkpoint %s: channel %s stored as before but decoded again", row.id, c.id, ch)
					}
					shared++
				} else {
					seen[string(b)] = v
				}
			}
		}
	}
	if bodies == 0 || shared == 0 {
		t.Fatalf("%d bodies, %d shared values: the fixture no longer exercises the cache", bodies, shared)
	}
	// A body the scanner cannot walk decodes whole, with whole decoding's error.
	bad := []byte(`{"v":4,"channel_values":{"a":1,}}`)
	if _, err := r.decodeJSONBody(newValueCache(), bad); err == nil {
		t.Fatal("a damaged body decoded")
	}
}

// A large JSON array is decoded an element at a time exactly as whole
// (undefined elements null, LangChain messages revived, nested arrays,
// escapes, numbers), a malformed one fails as whole, and rows whose lists
// repeat an element share its decoded value.
func TestLargeArraysDecodeByElement(t *testing.T) {
	big := func(c byte) string { return strings.Repeat(string(c), cacheElement+7) }
	msg := `{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"` + big('m') + `","id":"m1"}}`
	pad := `"` + strings.Repeat("p", splitArray) + `"`
	cases := []string{
		`[` + pad + `, "` + big('a') + `", {"lc":2,"type":"undefined"}, 12, -3.5e2, "esc\"aped\\u00e9", [1, [2, "` + big('n') + `"]], null, true, ` + msg + `]`,
		` [ ` + pad + ` , {"k": [` + pad + `]} ] `,
	}
	r := &Reader{}
	for i, c := range cases {
		whole, werr := decodeJSValue([]byte(c))
		if _, split := jsonElements("json", []byte(c)); !split {
			t.Fatalf("case %d: not split", i)
		}
		got, err := newValueCache().decode(r, "json", []byte(c))
		if werr != nil || err != nil || !reflect.DeepEqual(whole, got) {
			t.Errorf("case %d: by element %v (%v), whole %v (%v)", i, cut(got), err, cut(whole), werr)
		}
	}
	for _, bad := range []string{`[` + pad + `, "x"`, `[` + pad + `, nope]`, `[` + pad + `] x`} {
		if _, err := newValueCache().decode(r, "json", []byte(bad)); err == nil {
			t.Errorf("a malformed array (%d bytes) decoded", len(bad))
		}
	}
	// Rows [A], [A, B], [A, B, C]: three notes decoded, shared.
	a, b, c := `"`+big('A')+`"`, `"`+big('B')+`"`, `"`+big('C')+`"`
	vc := newValueCache()
	var rows [][]any
	for _, row := range []string{`[` + pad + `,` + a + `]`, `[` + pad + `,` + a + `,` + b + `]`, `[` + pad + `,` + a + `,` + b + `,` + c + `]`} {
		v, err := vc.decode(r, "json", []byte(row))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, v.([]any))
	}
	data := func(v any) *byte { return unsafe.StringData(v.(string)) }
	if data(rows[0][1]) != data(rows[2][1]) || data(rows[1][2]) != data(rows[2][2]) {
		t.Error("rows repeating an element do not share its decoded value")
	}
}

// cut cuts long strings in v for a failure message.
func cut(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
