package agui

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/net/netutil"
)

// ConnLimits bounds what clients can hold of a server: without them a few
// hundred slow or idle connections keep the process's sockets and memory
// for as long as they like. A zero field takes its default.
type ConnLimits struct {
	// MaxConns is how many connections are open at once (default 256);
	// more wait in the listen queue until one closes.
	MaxConns int
	// HeaderTimeout is how long a client has to send a request's headers
	// (default 10 s).
	HeaderTimeout time.Duration
	// BodyTimeout is how long it has to send the body once the headers
	// are in (default 30 s). The response has no deadline: a run's event
	// stream lasts as long as the run.
	BodyTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request (default 60 s).
	IdleTimeout time.Duration
}

// DefaultConnLimits are the limits Serve applies unless WithConnLimits
// says otherwise.
var DefaultConnLimits = ConnLimits{MaxConns: 256, HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second, IdleTimeout: time.Minute}

// WithConnLimits sets Serve's connection limits; zero fields keep the
// defaults.
func WithConnLimits(l ConnLimits) Option { return func(c *config) { c.limits = l } }

// withDefaults fills l's zero fields.
func (l ConnLimits) withDefaults() ConnLimits {
	d := DefaultConnLimits
	if l.MaxConns > 0 {
		d.MaxConns = l.MaxConns
	}
	if l.HeaderTimeout > 0 {
		d.HeaderTimeout = l.HeaderTimeout
	}
	if l.BodyTimeout > 0 {
		d.BodyTimeout = l.BodyTimeout
	}
	if l.IdleTimeout > 0 {
		d.IdleTimeout = l.IdleTimeout
	}
	return d
}

// server returns the HTTP server and listener Serve runs with l (its
// defaults filled) applied. MaxHeaderBytes keeps a client from sending a
// megabyte of headers.
func (l ConnLimits) server(h http.Handler, ln net.Listener) (*http.Server, net.Listener) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	return srv, netutil.LimitListener(ln, l.MaxConns)
}

// readBodyFirst reads a request's whole body (up to maxBody+1 bytes, so
// the handler still sees one over its limit) under a read deadline, then
// lifts the deadline before the handler runs. http.Server.ReadTimeout
// cannot do this: its deadline outlives the body and, on expiry, cancels a
// streaming response's context.
func readBodyFirst(next http.Handler, timeout time.Duration, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			// The deadline stays in the past: the server would otherwise
			// wait for the rest of the body before closing.
			_ = rc.SetReadDeadline(time.Now())
			w.Header().Set("Connection", "close")
			if errors.Is(err, os.ErrDeadlineExceeded) {
				httpError(w, http.StatusRequestTimeout, "the request's body did not arrive within %s", timeout)
				return
			}
			httpError(w, http.StatusBadRequest, "reading the request's body: %v", err)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
