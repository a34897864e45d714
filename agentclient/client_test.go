package agentclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentclient"
)

// The responses below are LangGraph.js 1.5.1's, as recorded in the
// server's transcript, or crafted where a failure cannot be provoked on a
// real server at will (a cut connection, a malformed event).

func newClient(t *testing.T, h http.Handler, opts ...agentclient.Option) *agentclient.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := agentclient.New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func answer(status int, ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestNewRejectsBadAddresses(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:2024", "ftp://x", "http://", "http://x/?q=1", "::"} {
		if _, err := agentclient.New(addr); err == nil || !strings.Contains(err.Error(), "server address") {
			t.Errorf("New(%q): %v, want an error about the server address", addr, err)
		}
	}
	c, err := agentclient.New("https://example.test/prefix/")
	if err != nil || c.BaseURL() != "https://example.test/prefix" {
		t.Errorf("https with a prefix: %v, %v", c, err)
	}
}

// TestErrorStatuses checks each error status: its sentinel, its status,
// and the server's own message, whichever way the server wrote it.
func TestErrorStatuses(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		ctype, body string
		is, isNot   error
		says        string
	}{
		{"401 with a JSON detail", 401, "application/json", `{"detail":"Invalid API key: x-api-key is not valid for this deployment"}`,
			agentclient.ErrUnauthorized, agentclient.ErrNotFound, "Invalid API key: x-api-key is not valid for this deployment"},
		{"403 text", 403, "text/plain", "Forbidden: this key cannot read thread T", agentclient.ErrUnauthorized, agentclient.ErrInvalid, "cannot read thread T"},
		{"404 text/plain (LangGraph.js)", 404, "text/plain", "Thread with ID 00000000-0000-0000-0000-000000000000 not found",
			agentclient.ErrNotFound, agentclient.ErrConflict, "Thread with ID 00000000-0000-0000-0000-000000000000 not found"},
		{"409 JSON (Weft, Python)", 409, "application/json", `{"detail":"Thread T has a run in progress; cancel it first"}`,
			agentclient.ErrConflict, agentclient.ErrInvalid, "has a run in progress"},
		{"422 busy (LangGraph.js)", 422, "text/plain", "Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
			agentclient.ErrConflict, agentclient.ErrInvalid, "already running a task"},
		{"422 validation (Python)", 422, "application/json", `{"detail":[{"loc":["body","assistant_id"],"msg":"field required","type":"missing"}]}`,
			agentclient.ErrInvalid, agentclient.ErrConflict, "body.assistant_id: field required"},
		{"400 ZodError (LangGraph.js)", 400, "application/json", `{"success":false,"error":{"issues":[{"code":"invalid_union","path":["stream_mode"],"message":"Invalid input"}],"name":"ZodError"}}`,
			agentclient.ErrInvalid, agentclient.ErrConflict, "stream_mode: Invalid input"},
		{"500 empty", 500, "", "", nil, agentclient.ErrInvalid, "(no message)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, answer(tc.status, tc.ctype, tc.body))
			_, err := c.GetThread(context.Background(), "T")
			var ae *agentclient.Error
			if !errors.As(err, &ae) {
				t.Fatalf("err %v (%T), want an *agentclient.Error", err, err)
			}
			if ae.Status != tc.status || ae.Method != "GET" || ae.Path != "/threads/T" || ae.Message != tc.says && !strings.Contains(ae.Message, tc.says) {
				t.Errorf("error %+v, want status %d on GET /threads/T saying %q", ae, tc.status, tc.says)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
			if errors.Is(err, tc.isNot) {
				t.Errorf("%v is %v, it should not be", err, tc.isNot)
			}
			if s := err.Error(); !strings.Contains(s, fmt.Sprint(tc.status)) || !strings.Contains(s, "GET /threads/T") || strings.Contains(s, "unexpected status") {
				t.Errorf("message %q: want the call, the status and the server's words", s)
			}
		})
	}
}

func TestAPIKeyAndHeaders(t *testing.T) {
	var key, ctype, extra atomic.Value
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key.Store(r.Header.Get("x-api-key"))
		ctype.Store(r.Header.Get("Content-Type"))
		extra.Store(r.Header.Get("X-Trace"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}), agentclient.WithAPIKey("lsv2_secret"), agentclient.WithHeader("X-Trace", "t1"))
	if err := c.Ok(context.Background()); err != nil {
		t.Fatal(err)
	}
	if key.Load() != "lsv2_secret" || extra.Load() != "t1" {
		t.Errorf("x-api-key %q, X-Trace %q", key.Load(), extra.Load())
	}
	// A bodiless GET carries no Content-Type: LangGraph.js answers 400
	// Malformed JSON to one that does.
	if ctype.Load() != "" {
		t.Errorf("GET /ok sent Content-Type %q", ctype.Load())
	}
	if _, err := c.SearchThreads(context.Background(), agentclient.ThreadSearch{}); err == nil || ctype.Load() != "application/json" {
		t.Errorf("POST /threads/search: Content-Type %q (err %v: an object is not a list)", ctype.Load(), err)
	}
}

// TestServerDown: nothing listens at the address.
func TestServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := agentclient.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ok(context.Background())
	var ae *agentclient.Error
	if !errors.Is(err, agentclient.ErrUnreachable) || !errors.As(err, &ae) || ae.Status != 0 || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), addr) {
		t.Errorf("server down: %v, want ErrUnreachable naming %s and the refused connection", err, addr)
	}
	if _, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"}); !errors.Is(err, agentclient.ErrUnreachable) {
		t.Errorf("stream to a server that is down: %v", err)
	}
}

// TestTimeout: a server that does not answer in time, for a plain call
// and for a stream's headers; and the caller's own cancellation, which is
// not a timeout.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), agentclient.WithTimeout(150*time.Millisecond))
	defer close(release)
	start := time.Now()
	_, err := c.GetThread(context.Background(), "T")
	if d := time.Since(start); !errors.Is(err, agentclient.ErrTimeout) || !strings.Contains(err.Error(), "150ms") || d > 2*time.Second {
		t.Errorf("slow server: %v after %v, want ErrTimeout at 150ms", err, d)
	}
	start = time.Now()
	_, err = c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if d := time.Since(start); !errors.Is(err, agentclient.ErrTimeout) || d > 2*time.Second {
		t.Errorf("slow stream headers: %v after %v, want ErrTimeout", err, d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = c.GetThread(ctx, "T")
	if !errors.Is(err, context.Canceled) || errors.Is(err, agentclient.ErrTimeout) {
		t.Errorf("cancelled by the caller: %v, want context.Canceled", err)
	}
}

// sse writes events in LangGraph's framing.
func sse(w http.ResponseWriter, from, to int) {
	for i := from; i < to; i++ {
		name, data := "updates", fmt.Sprintf(`{"n%d":{"i":%d}}`, i, i)
		if i == 0 {
			name, data = "metadata", `{"run_id":"R","attempt":1}`
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\nid: %d\n\n", name, data, i)
	}
	w.(http.Flusher).Flush()
}

// cutServer streams events 0..2 of run R on thread T, then drops the
// connection; its rejoin endpoint answers per rejoin.
func cutServer(t *testing.T, rejoin http.HandlerFunc) (*agentclient.Client, *atomic.Value) {
	var lastID atomic.Value
	lastID.Store("")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /threads/T/runs/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Location", "/threads/T/runs/R")
		sse(w, 0, 3)
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("GET /threads/T/runs/R/stream", func(w http.ResponseWriter, r *http.Request) {
		lastID.Store(r.Header.Get("Last-Event-ID"))
		rejoin(w, r)
	})
	return newClient(t, mux), &lastID
}

func TestCutStreamResumed(t *testing.T) {
	c, lastID := cutServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, 2, 6) // event 2 again, as a server replaying from its log might
	})
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a", StreamResumable: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids(evs), ","); got != "0,1,2,3,4,5" || st.Reconnects() != 1 || lastID.Load() != "2" {
		t.Errorf("events %s after %d reconnects with Last-Event-ID %q; want 0..5 once each after one, from 2", got, st.Reconnects(), lastID.Load())
	}
	if st.RunID() != "R" || st.ThreadID() != "T" {
		t.Errorf("run %q thread %q", st.RunID(), st.ThreadID())
	}
}

func TestCutStreamNotResumable(t *testing.T) {
	c, _ := cutServer(t, answer(404, "text/plain", "Run R not found"))
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	var cut *agentclient.StreamCutError
	if !errors.As(err, &cut) || !errors.Is(err, agentclient.ErrStreamCut) || cut.After != 3 || cut.LastID != "2" || len(evs) != 3 {
		t.Fatalf("%d events, err %v; want a StreamCutError after event 3 (id 2)", len(evs), err)
	}
	if !errors.Is(err, agentclient.ErrNotFound) || !strings.Contains(err.Error(), "cut after event 3 (id 2)") || !strings.Contains(err.Error(), "Run R not found") {
		t.Errorf("message %q: want where it was cut and what the server said to the rejoin", err)
	}
}

func TestCutStreamResumedWithAGap(t *testing.T) {
	c, _ := cutServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, 5, 6) // a server that kept no events: it goes on from now
	})
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Collect()
	if !errors.Is(err, agentclient.ErrStreamCut) || !strings.Contains(err.Error(), "events 3 to 4 are lost") {
		t.Errorf("a resume that skips events: %v, want them named as lost", err)
	}
}

func TestCutStreamResumeOff(t *testing.T) {
	var rejoined atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("POST /runs/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// Closes inside an event: a cut too.
		fmt.Fprint(w, "event: metadata\ndata: {\"run_id\":\"R\"}\nid: 0\n\nevent: values\ndata: {\"a\"")
	})
	mux.HandleFunc("GET /runs/R/stream", func(w http.ResponseWriter, r *http.Request) { rejoined.Store(true) })
	c := newClient(t, mux, agentclient.WithReconnects(0))
	st, err := c.Stream(context.Background(), "", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if !errors.Is(err, agentclient.ErrStreamCut) || len(evs) != 1 || rejoined.Load() || !strings.Contains(err.Error(), "middle of an event") || !strings.Contains(err.Error(), "WithReconnects(0)") {
		t.Errorf("%d events, err %v: want a cut after 1 event, not resumed", len(evs), err)
	}
}

func TestMalformedEvent(t *testing.T) {
	c := newClient(t, answer(200, "text/event-stream", "event: metadata\ndata: {\"run_id\":\"R\"}\nid: 0\n\nevent: updates\ndata: {not json\nid: 1\n\nevent: updates\ndata: {}\nid: 2\n\n"))
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	var ee *agentclient.EventError
	if !errors.As(err, &ee) || ee.N != 2 || ee.ID != "1" || ee.Name != "updates" || len(evs) != 1 || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("%d events, err %v: want an EventError at event 2 (id 1)", len(evs), err)
	}
}

func TestNotAnEventStream(t *testing.T) {
	c := newClient(t, answer(200, "text/html", "<html>login</html>"))
	_, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err == nil || !strings.Contains(err.Error(), "not an event stream") || !strings.Contains(err.Error(), "text/html") {
		t.Errorf("an HTML answer to a stream: %v", err)
	}
}

// TestEventFraming reads the framing's corners: CRLF and CR line ends,
// comments, multi-line data, no space after the colon, namespaced names,
// and an error event, which is delivered and then is the stream's error.
func TestEventFraming(t *testing.T) {
	body := ": keep-alive\r\nevent: metadata\r\ndata: {\"run_id\":\"R\",\"attempt\":1}\r\nid: 0\r\n\r\n" +
		"event:updates|research:abc|inner:def\rdata: {\"a\":\rdata: 1}\rid: 1\r\r" +
		"event: messages/partial\ndata: [{\"content\":\"The \"}]\nid: 2\n\n" +
		"event: error\ndata: {\"error\":\"GraphRecursionError\",\"message\":\"Recursion limit of 25 reached\"}\nid: 3\n\n"
	c := newClient(t, answer(200, "text/event-stream; charset=utf-8", body))
	st, err := c.Stream(context.Background(), "", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	var re *agentclient.RunError
	if !errors.As(err, &re) || re.Name != "GraphRecursionError" || re.Message != "Recursion limit of 25 reached" {
		t.Errorf("the run's error: %v", err)
	}
	if len(evs) != 4 {
		t.Fatalf("events %v", names(evs))
	}
	if st.RunID() != "R" {
		t.Errorf("run id %q from the metadata event", st.RunID())
	}
	ns := evs[1]
	if ns.Mode != "updates" || strings.Join(ns.Namespace, "|") != "research:abc|inner:def" || string(ns.Data) != "{\"a\":\n1}" || ns.ID != "1" {
		t.Errorf("namespaced event %+v (data %s)", ns, ns.Data)
	}
	if evs[2].Mode != "messages/partial" || evs[2].Namespace != nil || evs[0].Namespace != nil {
		t.Errorf("events %+v", evs)
	}
	var v map[string]int
	if err := ns.Decode(&v); err != nil || v["a"] != 1 {
		t.Errorf("decode %v %v", v, err)
	}
}

// TestResumeRefusesAMovedThread: the head is not the checkpoint named, so
// no run is started.
func TestResumeRefusesAMovedThread(t *testing.T) {
	var runs atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /threads/T/state", answer(200, "application/json",
		`{"values":{},"next":["review"],"tasks":[],"metadata":{"step":3},"checkpoint":{"thread_id":"T","checkpoint_ns":"","checkpoint_id":"C2"},"parent_checkpoint":{"checkpoint_ns":"","checkpoint_id":"C1"}}`))
	mux.HandleFunc("POST /threads/T/runs/stream", func(w http.ResponseWriter, r *http.Request) { runs.Add(1) })
	c := newClient(t, mux)
	_, err := c.Resume(context.Background(), "T", "C1", agentclient.Command{Resume: "yes"}, agentclient.RunRequest{AssistantID: "a"})
	var moved *agentclient.ThreadMovedError
	if !errors.As(err, &moved) || moved.Head != "C2" || moved.Expected != "C1" || runs.Load() != 0 || !strings.Contains(err.Error(), "C2") {
		t.Errorf("Resume on a moved thread: %v (runs started %d)", err, runs.Load())
	}
	if _, err := c.Resume(context.Background(), "T", "", agentclient.Command{Resume: "yes"}, agentclient.RunRequest{AssistantID: "a"}); !errors.Is(err, agentclient.ErrInvalid) {
		t.Errorf("Resume without a checkpoint: %v", err)
	}
}

func TestEmptyIDsAreRefused(t *testing.T) {
	c := newClient(t, answer(500, "", ""))
	ctx := context.Background()
	if _, err := c.GetState(ctx, "", agentclient.StateQuery{}); !errors.Is(err, agentclient.ErrInvalid) || !strings.Contains(err.Error(), "thread id is empty") {
		t.Errorf("GetState of no thread: %v", err)
	}
	if _, err := c.Stream(ctx, "T", agentclient.RunRequest{}); !errors.Is(err, agentclient.ErrInvalid) || !strings.Contains(err.Error(), "assistant id") {
		t.Errorf("a run without an assistant: %v", err)
	}
}

// TestCleanCloseMidRun: a proxy that closes the stream cleanly while the
// run goes on; the run's status says so, and the client rejoins.
func TestCleanCloseMidRun(t *testing.T) {
	var gets atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /threads/T/runs/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Location", "/threads/T/runs/R")
		sse(w, 0, 2) // and a clean end
	})
	mux.HandleFunc("GET /threads/T/runs/R", func(w http.ResponseWriter, r *http.Request) {
		status := "running"
		if gets.Add(1) > 1 {
			status = "success"
		}
		answer(200, "application/json", `{"run_id":"R","thread_id":"T","status":"`+status+`"}`)(w, r)
	})
	mux.HandleFunc("GET /threads/T/runs/R/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, 2, 4)
	})
	c := newClient(t, mux)
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil || strings.Join(ids(evs), ",") != "0,1,2,3" || st.Reconnects() != 1 || gets.Load() != 2 {
		t.Errorf("events %v, err %v, %d reconnects, %d status checks; want 0..3 after one rejoin", ids(evs), err, st.Reconnects(), gets.Load())
	}
}

// TestCleanCloseRaceAccepted: the run is still marked running as its
// stream ends, and the rejoin brings nothing new: that is the end, not a
// cut.
func TestCleanCloseRaceAccepted(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /threads/T/runs/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Location", "/threads/T/runs/R")
		sse(w, 0, 2)
	})
	mux.HandleFunc("GET /threads/T/runs/R", answer(200, "application/json", `{"run_id":"R","thread_id":"T","status":"running"}`))
	mux.HandleFunc("GET /threads/T/runs/R/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, 0, 2) // all again, nothing new
	})
	c := newClient(t, mux)
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil || strings.Join(ids(evs), ",") != "0,1" || st.Reconnects() != 1 {
		t.Errorf("events %v, err %v, %d reconnects", ids(evs), err, st.Reconnects())
	}
}

// TestStreamOutlivesTimeout: WithTimeout bounds the wait for a stream's
// headers, not the run: events slower than it still arrive. And the
// caller's cancel stops a stream with the context's error, not a cut.
func TestStreamOutlivesTimeout(t *testing.T) {
	var calls atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, 0, 1)
		select {
		case <-time.After(400 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		sse(w, 1, 2)
	}), agentclient.WithTimeout(100*time.Millisecond), agentclient.WithHTTPClient(hc), agentclient.WithReconnects(0))
	st, err := c.Stream(context.Background(), "T", agentclient.RunRequest{AssistantID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil || len(evs) != 2 {
		t.Errorf("events %v, err %v: want both, the second after the timeout", ids(evs), err)
	}
	if calls.Load() != 1 {
		t.Errorf("the given http.Client made %d requests, want 1", calls.Load())
	}

	ctx, cancel := context.WithCancel(context.Background())
	st, err = c.JoinStream(ctx, "T", "R", "")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Next() {
		t.Fatalf("no first event: %v", st.Err())
	}
	cancel()
	if st.Next() || !errors.Is(st.Err(), context.Canceled) || errors.Is(st.Err(), agentclient.ErrStreamCut) {
		t.Errorf("after the caller's cancel: %v, want context.Canceled", st.Err())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRunRequestOnTheWire: the fields LangGraph's API names, and nothing
// for zero fields (an input of null would replay; none is sent).
func TestRunRequestOnTheWire(t *testing.T) {
	var body atomic.Value
	c := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body.Store(r.Method + " " + r.URL.Path + " " + string(b))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"run_id":"R","thread_id":"T","status":"pending"}`)
	}))
	ctx := context.Background()
	if _, err := c.CreateRun(ctx, "T", agentclient.RunRequest{AssistantID: "approval"}); err != nil {
		t.Fatal(err)
	}
	if got := body.Load(); got != `POST /threads/T/runs {"assistant_id":"approval"}` {
		t.Errorf("a bare run: %s", got)
	}
	_, err := c.CreateRun(ctx, "", agentclient.RunRequest{AssistantID: "a", Input: map[string]any{"topic": "x"},
		Command: &agentclient.Command{Update: map[string]any{"topic": "y"}, Goto: []string{"review"}},
		Config:  &agentclient.RunConfig{Configurable: map[string]any{"delay_ms": 5}}, StreamMode: []string{"updates", "messages-tuple"},
		StreamSubgraphs: true, StreamResumable: true, InterruptBefore: []string{"tools"}, InterruptAfter: []string{"*"},
		CheckpointID: "C", MultitaskStrategy: "enqueue", IfNotExists: "create", OnDisconnect: "continue"})
	if err != nil {
		t.Fatal(err)
	}
	want := `POST /runs {"assistant_id":"a","input":{"topic":"x"},"command":{"update":{"topic":"y"},"goto":["review"]},"config":{"configurable":{"delay_ms":5}},` +
		`"stream_mode":["updates","messages-tuple"],"stream_subgraphs":true,"stream_resumable":true,"interrupt_before":["tools"],"interrupt_after":["*"],` +
		`"checkpoint_id":"C","multitask_strategy":"enqueue","if_not_exists":"create","on_disconnect":"continue"}`
	if got := body.Load(); got != want {
		t.Errorf("a full run:\n%s\nwant\n%s", got, want)
	}
	if _, err := c.CreateRun(ctx, "T", agentclient.RunRequest{AssistantID: "a", Command: &agentclient.Command{Resume: map[string]any{"i1": "yes"}}}); err != nil {
		t.Fatal(err)
	}
	if got := body.Load(); got != `POST /threads/T/runs {"assistant_id":"a","command":{"resume":{"i1":"yes"}}}` {
		t.Errorf("a resume by id: %s", got)
	}
	if _, err := c.History(ctx, "T", agentclient.HistoryQuery{Limit: 2, Before: "C", Metadata: map[string]any{"step": 1}, CheckpointNS: "research:t"}); err == nil {
		t.Error("a run record is not a history: want a decoding error")
	}
	if got := body.Load(); got != `POST /threads/T/history {"before":"C","checkpoint":{"checkpoint_ns":"research:t"},"limit":2,"metadata":{"step":1}}` {
		t.Errorf("history: %s", got)
	}
}

// TestHTTPS: a deployed server over TLS, with the API key it wants.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "k" {
			answer(401, "application/json", `{"detail":"Missing or invalid x-api-key"}`)(w, r)
			return
		}
		answer(200, "application/json", `{"version":"0.4.0","flags":{"assistants":true}}`)(w, r)
	}))
	defer srv.Close()
	c, err := agentclient.New(srv.URL, agentclient.WithHTTPClient(srv.Client()), agentclient.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := c.Info(context.Background()); err != nil || info.Version != "0.4.0" || info.Flags["assistants"] != true {
		t.Errorf("info over https: %+v, %v", info, err)
	}
	c, _ = agentclient.New(srv.URL, agentclient.WithHTTPClient(srv.Client()))
	if _, err := c.Info(context.Background()); !errors.Is(err, agentclient.ErrUnauthorized) || !strings.Contains(err.Error(), "Missing or invalid x-api-key") {
		t.Errorf("no key: %v", err)
	}
	c, _ = agentclient.New(srv.URL) // the test's certificate is not trusted
	if _, err := c.Info(context.Background()); !errors.Is(err, agentclient.ErrUnreachable) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an untrusted certificate: %v", err)
	}
}

// Settle waits out a thread the server still marks busy after a run's
// stream ended, and gives up after its bound with the thread as it is.
func TestSettle(t *testing.T) {
	var reads atomic.Int32
	busyFor := int32(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := "idle"
		if reads.Add(1) <= busyFor {
			status = "busy"
		}
		fmt.Fprintf(w, `{"thread_id":"t1","status":%q}`, status)
	}))
	defer srv.Close()
	c, err := agentclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	th, err := c.Settle(context.Background(), "t1", time.Minute)
	if err != nil || th.Status != "idle" || reads.Load() != 4 {
		t.Errorf("Settle: %+v, %v after %d reads; want idle after 4", th, err, reads.Load())
	}
	reads.Store(0)
	busyFor = 1 << 30
	th, err = c.Settle(context.Background(), "t1", 250*time.Millisecond)
	if err != nil || th.Status != "busy" {
		t.Errorf("Settle on a thread that stays busy: %+v, %v; want it busy", th, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Settle(ctx, "t1", time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Settle with a cancelled context: %v", err)
	}
}
