package agentserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/memory"
)

// LangGraph's JS SDK (client.store) on a Weft server: the tool agent's
// run remembers a preference in the long-term store the SQLite checkpoint
// store keeps, the SDK finds it, puts, gets, filters, lists namespaces and
// deletes, and a later run reads what the SDK put.
func TestSDKStore(t *testing.T) {
	sv := sdkServer(t, "", nil)
	out := sv.script(t, time.Minute, "store.mjs", sv.base)
	var seen map[string]any
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{
		"remembered":  "Done. Remembered: I prefer euros.",
		"found":       []any{map[string]any{"namespace": []any{"users", "demo", "preferences"}, "value": map[string]any{"preference": "I prefer euros"}, "dated": true}},
		"got":         map[string]any{"key": "manual", "value": map[string]any{"preference": "short answers"}, "namespace": []any{"users", "demo", "preferences"}},
		"filtered":    []any{"manual"},
		"namespaces":  []any{[]any{"users", "demo", "preferences"}},
		"recalled":    "Done. Balance: 1000. (I remember: I prefer euros; short answers.)",
		"afterDelete": nil,
		"badValue":    float64(400),
	}
	for k, w := range want {
		if !reflect.DeepEqual(seen[k], w) {
			t.Errorf("%s: the SDK saw %#v, want %#v", k, seen[k], w)
		}
	}
}

// The store's endpoints answer as LangGraph's dev server does (its
// answers recorded by hand with curl, LangGraph.js CLI 1.5.1, in
// testdata/store-exchange.json): 204 for a put and a delete, an item's
// fields, null for a missing item, {"items"} and {"namespaces"}, and the
// caller's mistakes refused; without a store, 501 saying why.
func TestStoreEndpointsAnswerAsLangGraph(t *testing.T) {
	b, err := testdataFile("store-exchange.json")
	if err != nil {
		t.Fatal(err)
	}
	var exchange []struct {
		Method, Path string
		Body         json.RawMessage
		Status       int
		Response     json.RawMessage
	}
	if err := json.Unmarshal(b, &exchange); err != nil {
		t.Fatal(err)
	}
	h, err := agentserver.New(demoGraphs(t), memory.New(), agentserver.WithLongTerm(longterm.NewMemory(longterm.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, x := range exchange {
		var body io.Reader
		if len(x.Body) > 0 {
			body = bytes.NewReader(x.Body)
		}
		req, _ := http.NewRequest(x.Method, srv.URL+x.Path, body)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != x.Status {
			t.Errorf("%s %s: status %d, LangGraph's %d (%s)", x.Method, x.Path, res.StatusCode, x.Status, got)
			continue
		}
		if x.Response == nil {
			continue // an error: LangGraph's body is its validator's, not a contract
		}
		if g, w := normalized(t, got), normalized(t, x.Response); !reflect.DeepEqual(g, w) {
			t.Errorf("%s %s: answered %s, LangGraph %s", x.Method, x.Path, got, x.Response)
		}
	}
	noStore, err := agentserver.New(demoGraphs(t), memory.New())
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	noStore.ServeHTTP(rec, httptest.NewRequest("GET", "/store/items?namespace=a&key=b", nil))
	if rec.Code != 501 || !strings.Contains(rec.Body.String(), "no long-term store") {
		t.Errorf("without a store: %d %s", rec.Code, rec.Body)
	}
}

// normalized decodes JSON with every timestamp replaced by "<time>".
func normalized(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "created_at" || k == "updated_at" {
					if _, err := time.Parse(time.RFC3339Nano, e.(string)); err == nil {
						x[k] = "<time>"
						continue
					}
				}
				x[k] = walk(e)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return v
	}
	return walk(v)
}

func testdataFile(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }
