package agui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
)

// serveReal runs Serve on a free loopback port, as weft serve does, and
// returns its base URL and store; it stops when the test ends.
func serveReal(t *testing.T, addr string, opts ...Option) (string, checkpoint.Saver) {
	t.Helper()
	saver := memory.New()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- Serve(ctx, addr, saver, demoGraphs(t), append([]Option{WithOutput(pw), WithKeepAlive(0)}, opts...)...)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("Serve printed no URL: %v (%v)", err, <-errc)
	}
	go io.Copy(io.Discard, pr)
	base := strings.TrimSpace(strings.TrimPrefix(line, "AG-UI server listening on "))
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	})
	return base, saver
}

type browserReq struct {
	method, path, body string
	header             map[string]string
}

// do sends r to base with exactly the headers given (no defaults).
func do(t *testing.T, base string, r browserReq) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func runBody(thread string) string {
	b, _ := json.Marshal(input(thread, "r1", "state", map[string]any{"topic": "kelp"}))
	return string(b)
}

// TestCrossSiteRequestsRefused sends what a browser sends when a page from
// another site posts to weft serve: the simple-request forms (no preflight:
// text/plain, a form, a multipart form), a preflight, and requests for a
// rebound DNS name. None reaches a graph; the store stays empty.
func TestCrossSiteRequestsRefused(t *testing.T) {
	base, saver := serveReal(t, "127.0.0.1:0")
	agent := "/agents/writing-assistant"
	evil := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, c := range []struct {
		name   string
		req    browserReq
		status int
		want   string
	}{
		{"fetch text/plain from another site", browserReq{"POST", agent, runBody("x1"), with(evil, "Content-Type", "text/plain;charset=UTF-8")}, 403, "https://evil.example"},
		{"form post from another site", browserReq{"POST", agent, "threadId=x2&state=%7B%7D", with(evil, "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Mode", "navigate")}, 403, "not allowed"},
		{"multipart form from another site", browserReq{"POST", agent, "--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n" + runBody("x3") + "\r\n--b--\r\n",
			with(evil, "Content-Type", "multipart/form-data; boundary=b")}, 403, "not allowed"},
		{"JSON from another site", browserReq{"POST", agent, runBody("x4"), with(evil, "Content-Type", "application/json", "Sec-Fetch-Mode", "cors")}, 403, "not allowed"},
		{"preflight from another site", browserReq{"OPTIONS", agent, "", with(evil, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")}, 403, "not allowed"},
		{"agent list from another site", browserReq{"GET", "/agents", "", with(evil)}, 403, "not allowed"},
		{"sandboxed page (Origin null)", browserReq{"POST", agent, runBody("x5"), map[string]string{"Origin": "null", "Content-Type": "text/plain"}}, 403, "not allowed"},
		// DNS rebinding: the attacker's name now resolves to 127.0.0.1, so
		// the page is same-origin; its Host header still names the attacker.
		{"rebound host name", browserReq{"POST", agent, runBody("x6"), map[string]string{"Host": "evil.example:8123", "Origin": "http://evil.example:8123", "Content-Type": "application/json"}}, 403, `host "evil.example:8123"`},
		{"rebound host, same-origin text/plain", browserReq{"POST", agent, runBody("x7"), map[string]string{"Host": "evil.example:8123", "Content-Type": "text/plain"}}, 403, "not allowed"},
		// Without an Origin (a script or a non-browser client) the body
		// type still has to be JSON.
		{"no origin, text/plain", browserReq{"POST", agent, runBody("x8"), map[string]string{"Content-Type": "text/plain"}}, 415, "application/json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := do(t, base, c.req)
			if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, body, c.status, c.want)
			}
			if acao := resp.Header.Get("Access-Control-Allow-Origin"); acao != "" {
				t.Errorf("a refused request got Access-Control-Allow-Origin %q", acao)
			}
		})
	}
	if ts, err := saver.(checkpoint.ThreadLister).ListThreads(context.Background(), 0); err != nil || len(ts) != 0 {
		t.Errorf("refused requests reached the store: %v %+v", err, ts)
	}
	// The same server answers loopback pages and clients without an
	// Origin.
	resp, body := do(t, base, browserReq{"POST", agent, runBody("ok1"), map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:5173"}})
	if resp.StatusCode != 200 || !strings.Contains(body, "RUN_FINISHED") || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Errorf("a loopback page: %d %q, ACAO %q", resp.StatusCode, body[:min(len(body), 200)], resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if resp, body := do(t, base, browserReq{"POST", agent, runBody("ok2"), map[string]string{"Content-Type": "application/json; charset=utf-8"}}); resp.StatusCode != 200 || !strings.Contains(body, "RUN_FINISHED") {
		t.Errorf("a client without Origin: %d %q", resp.StatusCode, body[:min(len(body), 200)])
	}
}

// TestAllowedOriginCORS: an origin on the allow-list gets its preflight
// answered and may post JSON; others still may not.
func TestAllowedOriginCORS(t *testing.T) {
	base, _ := serveReal(t, "127.0.0.1:0", WithAllowedOrigins("https://app.example"))
	agent := "/agents/writing-assistant"
	resp, _ := do(t, base, browserReq{"OPTIONS", agent, "", map[string]string{"Origin": "https://app.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,authorization"}})
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "content-type") {
		t.Errorf("preflight: %d %v", resp.StatusCode, h)
	}
	resp, body := do(t, base, browserReq{"POST", agent, runBody("c1"), map[string]string{"Origin": "https://app.example", "Content-Type": "application/json"}})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(body, "RUN_FINISHED") {
		t.Errorf("allowed origin: %d ACAO %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if !strings.Contains(resp.Header.Get("Vary"), "Origin") {
		t.Errorf("a response that depends on Origin lacks Vary: Origin: %v", resp.Header)
	}
	// A simple request from the allowed origin is still refused: JSON only.
	if resp, _ := do(t, base, browserReq{"POST", agent, runBody("c2"), map[string]string{"Origin": "https://app.example", "Content-Type": "text/plain"}}); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain from the allowed origin: %d", resp.StatusCode)
	}
	if resp, _ := do(t, base, browserReq{"POST", agent, runBody("c3"), map[string]string{"Origin": "https://other.example", "Content-Type": "application/json"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another origin: %d", resp.StatusCode)
	}
}

// TestToken: with a token every request must carry it; it may then listen
// beyond loopback and answer any host name. Without one it refuses to.
func TestToken(t *testing.T) {
	if err := Serve(context.Background(), "0.0.0.0:0", memory.New(), demoGraphs(t), WithOutput(nil)); err == nil || !strings.Contains(err.Error(), "without a token") {
		t.Fatalf("listening on every interface without a token: %v", err)
	}
	base, _ := serveReal(t, "0.0.0.0:0", WithToken("s3cret-token"))
	base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
	base = strings.Replace(base, "[::]", "127.0.0.1", 1)
	agent := "/agents/writing-assistant"
	for _, auth := range []string{"", "Bearer wrong", "s3cret-token", "Basic czNjcmV0LXRva2Vu"} {
		h := map[string]string{"Content-Type": "application/json"}
		if auth != "" {
			h["Authorization"] = auth
		}
		resp, body := do(t, base, browserReq{"POST", agent, runBody("tk"), h})
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(body, "token") {
			t.Errorf("Authorization %q: %d %q", auth, resp.StatusCode, body)
		}
	}
	resp, body := do(t, base, browserReq{"POST", agent, runBody("tk"), map[string]string{"Content-Type": "application/json",
		"Authorization": "Bearer s3cret-token", "Host": "weft.lan:8123"}})
	if resp.StatusCode != 200 || !strings.Contains(body, "RUN_FINISHED") {
		t.Errorf("with the token, by another host name: %d %q", resp.StatusCode, body[:min(200, len(body))])
	}
	if resp, _ := do(t, base, browserReq{"GET", "/agents", "", nil}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("agent list without the token: %d", resp.StatusCode)
	}
	// LangGraph's SDKs send the token as X-Api-Key.
	for key, want := range map[string]int{"wrong": http.StatusUnauthorized, "s3cret-token": 200} {
		if resp, _ := do(t, base, browserReq{"GET", "/agents", "", map[string]string{"X-Api-Key": key}}); resp.StatusCode != want {
			t.Errorf("X-Api-Key %q: %d, want %d", key, resp.StatusCode, want)
		}
	}
}
