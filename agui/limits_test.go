package agui

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// dialRaw opens a plain TCP connection to base (http://host:port).
func dialRaw(t *testing.T, base string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer waits (up to a generous bound that only ends a hung
// test) until the server closes c, reading and dropping whatever it sent.
func closedByServer(t *testing.T, c net.Conn, what string) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server still holds the connection", what)
	}
	return string(got)
}

func TestConnLimitsCloseSlowAndIdleClients(t *testing.T) {
	short := 200 * time.Millisecond
	base, _ := serveReal(t, "127.0.0.1:0", WithConnLimits(ConnLimits{HeaderTimeout: short, BodyTimeout: short, IdleTimeout: short}))

	// Headers that never end.
	c := dialRaw(t, base)
	io.WriteString(c, "POST /agents/writing-assistant HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	closedByServer(t, c, "headers never finished")

	// A body that never arrives: answered 408 and closed.
	c = dialRaw(t, base)
	io.WriteString(c, "POST /agents/writing-assistant HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"threadId\":")
	if got := closedByServer(t, c, "body never finished"); !strings.Contains(got, " 408 ") {
		t.Errorf("slow body answered %q, want 408", got)
	}

	// A kept-alive connection after its answer.
	c = dialRaw(t, base)
	io.WriteString(c, "GET /agents HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if got := closedByServer(t, c, "idle keep-alive"); !strings.Contains(got, " 200 ") {
		t.Errorf("GET /agents answered %q", got)
	}
}

func TestConnLimitsCapConnections(t *testing.T) {
	base, _ := serveReal(t, "127.0.0.1:0", WithConnLimits(ConnLimits{MaxConns: 2, HeaderTimeout: time.Minute, IdleTimeout: time.Minute}))
	held := []net.Conn{dialRaw(t, base), dialRaw(t, base)}
	for _, c := range held {
		io.WriteString(c, "GET /agents HTTP/1.1\r\nHost: 127.0.0.1\r\n") // half a request: the slot stays taken
	}
	third := dialRaw(t, base)
	io.WriteString(third, "GET /agents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	answer := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(third)
		answer <- string(b)
	}()
	select {
	case got := <-answer:
		t.Fatalf("a third connection was served while two held the cap: %q", got)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close()
	select {
	case got := <-answer:
		if !strings.Contains(got, " 200 ") {
			t.Fatalf("third connection answered %q", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the third connection was never served after a slot freed")
	}
}

func TestRefusedClientKeepsNoConnection(t *testing.T) {
	base, _ := serveReal(t, "127.0.0.1:0", WithToken("s3cret"), WithConnLimits(ConnLimits{IdleTimeout: time.Minute}))
	c := dialRaw(t, base)
	io.WriteString(c, "GET /agents HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("status %d, close %v; want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after a 401 the connection is still open (%v)", err)
	}
}

// A client the guard refuses gets its answer without the server reading
// (or waiting for) its body.
func TestRefusedClientBodyNotRead(t *testing.T) {
	base, _ := serveReal(t, "127.0.0.1:0", WithToken("s3cret"), WithConnLimits(ConnLimits{BodyTimeout: time.Minute}))
	c := dialRaw(t, base)
	io.WriteString(c, "POST /agents/writing-assistant HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{")
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer while the body is pending: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401 before any body", resp.StatusCode)
	}
}
