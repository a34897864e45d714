package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/testenv"

	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
)

// proxy forwards TCP connections to a server until cut, which drops every
// connection and refuses new ones until restore: a database outage.
type proxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	down     bool
	conns    []net.Conn
}

func newProxy(t *testing.T, upstream string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		u, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { io.Copy(u, c); u.Close() }()
		go func() { io.Copy(c, u); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// TestWorkerOutlivesOutage: the PostgreSQL server goes away under a
// watching worker and comes back. The worker says it lost the connection
// (not "unexpected EOF" alone), retries with backoff, and once the server
// is back finishes the work that arrived meanwhile.
func TestWorkerOutlivesOutage(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	direct := pgSchemaDSN(t, dsn)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	proxied := u.String()

	ctx := context.Background()
	s, err := store.Open(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := bankGraph(t).WithSaver(s)
	ask := func(thread string) {
		t.Helper()
		th := engine.WithThread(thread)
		if _, err := g.Invoke(ctx, engine.Values{"amount": 1}, th); err != nil {
			t.Fatal(err)
		}
		if _, err := g.SubmitAnswer(ctx, engine.Command{Resume: "approve"}, th); err != nil {
			t.Fatal(err)
		}
	}
	done := func(thread string) bool {
		snap, err := g.GetState(ctx, engine.WithThread(thread))
		return err == nil && snap.Done()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	ask("before")
	wctx, stop := context.WithCancel(ctx)
	var stdout bytes.Buffer
	var stderr testenv.Buffer
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(wctx, []string{"worker", "-store", proxied, "-watch", "100ms"},
			cli.Env{Graphs: []*engine.Graph{bankGraph(t)}, Stdout: &stdout, Stderr: &stderr})
	}()
	waitFor("the worker to finish the first thread", func() bool { return done("before") })

	p.cut()
	waitFor("the worker to notice the outage", func() bool { return strings.Contains(stderr.String(), "retrying in") })
	ask("during")
	time.Sleep(1500 * time.Millisecond) // a few failed polls, backing off
	if done("during") {
		t.Fatal("work done through a cut connection")
	}
	p.restore()
	waitFor("the worker to finish the thread answered during the outage", func() bool { return done("during") })
	// The round that finished it says the store is back once it ends.
	waitFor("the worker to say the store is back", func() bool { return strings.Contains(stderr.String(), "reachable again") })
	stop()
	if c := <-code; c != 0 {
		t.Fatalf("worker exit code %d: %s", c, stderr.String())
	}
	log := stderr.String()
	t.Logf("worker's messages:\n%s", log)
	for _, want := range []string{"lost the connection to the PostgreSQL server", "retrying in 1s", "retrying in 2s", "the store is reachable again"} {
		if !strings.Contains(log, want) {
			t.Errorf("the worker's messages lack %q", want)
		}
	}
	var results []cli.ResultJSON
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil || len(results) != 2 {
		t.Errorf("worker output: %v %s", err, stdout.String())
	}
}
