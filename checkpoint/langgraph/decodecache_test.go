package langgraph

import (
	"context"
	"reflect"
	"testing"
)

// TestDecodeJSONBody checks the split decoding of JS checkpoint bodies
// (channel values through the cache) against decoding each body whole, on
// every checkpoint of the LangGraph.js SQLite fixture, and that values
// stored twice are decoded once and shared.
func TestDecodeJSONBody(t *testing.T) {
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
