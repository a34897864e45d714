package agui

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// retained is the memory the process holds from the OS and has not given
// back: about its resident size.
func retained() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// BenchmarkServeRetainsAfterRun: two AG-UI runs of the writing assistant
// on a 12 MB topic, against SQLite as weft serve runs them, the client
// discarding the stream; then what the process still holds 3 s after the
// runs ended (issue #19 item 10: 1.5-1.7 GB resident after two such runs).
func BenchmarkServeRetainsAfterRun(b *testing.B) {
	s, err := sqlite.Open(filepath.Join(b.TempDir(), "weft.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ts := newTestServer(b, demoGraphs(b), s)
	topic := strings.Repeat("x", 12<<20)
	var after uint64
	for range b.N {
		for _, th := range []string{"a", "b"} {
			body, _ := json.Marshal(input(th, "r1", "state", map[string]any{"topic": topic}))
			resp, err := http.Post(ts.URL+"/agents/writing-assistant", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		time.Sleep(3 * time.Second)
		after = retained()
	}
	b.ReportMetric(float64(after)/1e6, "MB-held-after")
}
