package studio

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
)

// File → Connect to server… connects with the key typed (sent as
// x-api-key, never stored), remembers the server for the user, and
// offers it first the next time; an address that is no server's is
// refused with a sentence saying why.
func TestConnectToServer(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("x-api-key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/info":
			_, _ = w.Write([]byte(`{"version":"1.5.1"}`))
		case r.Method == http.MethodPost: // the searches: no graphs, no threads
			_, _ = w.Write([]byte(`[]`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	a := test.NewTempApp(t)
	var asked []string
	s := openStudio(t, a, Config{Store: memory.New(), StoreName: "first.db", Graphs: demoGraphs(t),
		OpenServer: func(addr, apiKey string) (checkpoint.Saver, string, error) {
			asked = append(asked, addr)
			sv, err := agentview.Connect(addr, agentclient.WithAPIKey(apiKey))
			return sv, addr, err
		}})
	idle(t, s)

	act(s.connectDialog)
	addr, ok := inOverlays[*widget.SelectEntry](s.Window())
	if !ok {
		t.Fatalf("no address field in %q", overlayText(s.Window()))
	}
	if addr.Text != defaultServer {
		t.Errorf("a first connect offers %q, want %q", addr.Text, defaultServer)
	}
	act(func() { addr.SetText("weft.db") })
	if b := overlayButton(s.Window(), "Connect"); b == nil || !b.Disabled() {
		t.Errorf("Connect is offered for a file name")
	}
	if err := addr.Validate(); err == nil || !strings.Contains(err.Error(), "not an http:// or https:// address") {
		t.Errorf("a file name as server: %v", err)
	}
	var key *widget.Entry
	walkObjects(s.Window().Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		if e, ok := o.(*widget.Entry); ok && e.Password {
			key = e
			return true
		}
		return false
	})
	if key == nil {
		t.Fatal("no API key field")
	}
	act(func() {
		addr.SetText(srv.URL)
		key.SetText("k-123")
	})
	test.Tap(overlayButton(s.Window(), "Connect"))
	idle(t, s)
	if !slices.Equal(asked, []string{srv.URL}) || s.m.storeName != srv.URL {
		t.Fatalf("opened %v, the window shows %q", asked, s.m.storeName)
	}
	mu.Lock()
	if len(keys) == 0 || slices.ContainsFunc(keys, func(k string) bool { return k != "k-123" }) {
		t.Errorf("the server got the keys %q, want k-123 on every request", keys)
	}
	mu.Unlock()
	if got := recentServers(a.Preferences()); !slices.Equal(got, []string{srv.URL}) {
		t.Errorf("remembered %v", got)
	}
	for _, p := range a.Preferences().StringListWithFallback(recentServersKey, nil) {
		if strings.Contains(p, "k-123") {
			t.Errorf("the API key was stored: %q", p)
		}
	}

	act(s.connectDialog)
	addr, _ = inOverlays[*widget.SelectEntry](s.Window())
	if addr.Text != srv.URL {
		t.Errorf("the next connect offers %q, want the last server %s", addr.Text, srv.URL)
	}
}

func TestRememberServer(t *testing.T) {
	p := test.NewTempApp(t).Preferences()
	for i := range maxRecentServers + 2 {
		rememberServer(p, "http://h"+string(rune('a'+i)))
	}
	rememberServer(p, "http://hc")
	got := recentServers(p)
	if len(got) != maxRecentServers || got[0] != "http://hc" || got[1] != "http://hj" || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
		t.Errorf("recent servers %v: want %d, newest first, each once", got, maxRecentServers)
	}
}
