package modeltest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The fake servers' streams are pinned by golden files, written to match
// the providers' API references (and the SDKs' own test fixtures) frame for
// frame; a change to them is a change to the wire and shows in review.
func TestWireGolden(t *testing.T) {
	for _, w := range []Wire{OpenAI{}, Anthropic{}} {
		for name, r := range map[string]Reply{"text": TextReply, "tools": ToolReply} {
			path := filepath.Join("testdata", w.Name()+"_"+name+".sse")
			got := strings.Join(w.Events(r), "")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s: the stream differs from the golden file:\n%s", path, got)
			}
		}
	}
}

// Error bodies carry the message where the SDKs read it.
func TestErrorBodies(t *testing.T) {
	for _, w := range []Wire{OpenAI{}, Anthropic{}} {
		for _, status := range []int{400, 429, 500} {
			if b := w.ErrorBody(status, "why"); !strings.Contains(string(b), `"message":"why"`) {
				t.Errorf("%s %d: %s", w.Name(), status, b)
			}
		}
	}
}
