package agui

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// WithAllowedOrigins lets pages from these origins call the server from a
// browser (CORS): each is scheme://host[:port], as a browser sends it in
// Origin, or "*" for every origin. Pages served from loopback
// (http://localhost, http://127.0.0.1, http://[::1], any port) are always
// allowed; requests from other pages are refused. Guard and Serve apply it.
func WithAllowedOrigins(origins ...string) Option {
	return func(c *config) {
		for _, o := range origins {
			if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
				c.origins = append(c.origins, strings.ToLower(o))
			}
		}
	}
}

// WithAllowedHosts adds host names (without port) the server answers to
// besides loopback ones, for a server reached by a name or address of its
// own. Requests naming another host in their Host header are refused, which
// defeats DNS rebinding (a page whose name turns into 127.0.0.1). With a
// token (WithToken) and no allowed hosts, every host is answered: the
// token guards the server. Guard and Serve apply it.
func WithAllowedHosts(hosts ...string) Option {
	return func(c *config) {
		for _, h := range hosts {
			if h = strings.TrimSpace(h); h != "" {
				c.hosts = append(c.hosts, strings.ToLower(strings.Trim(h, "[]")))
			}
		}
	}
}

// WithToken requires every request to carry "Authorization: Bearer token"
// (or "X-Api-Key: token", as LangGraph's SDKs send it);
// "" requires none. Serve insists on one when it listens on an address
// other machines can reach. Guard and Serve apply it.
func WithToken(token string) Option { return func(c *config) { c.token = token } }

// Guard wraps next with the checks a server driven from web pages needs,
// as Serve does: a request whose Host is not allowed (see
// WithAllowedHosts), whose Origin is not allowed (WithAllowedOrigins) or
// that lacks the token (WithToken) is refused with 403 or 401 before next
// sees it; CORS preflights from allowed origins are answered, and
// responses to allowed origins carry Access-Control-Allow-Origin. The
// Handler itself refuses bodies that are not application/json, so a page
// cannot send a run as a form or text/plain without a preflight.
func Guard(next http.Handler, opts ...Option) http.Handler {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return &guard{next: next, origins: c.origins, hosts: c.hosts, token: c.token}
}

type guard struct {
	next    http.Handler
	origins []string
	hosts   []string
	token   string
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		refuse(w)
		httpError(w, http.StatusForbidden, "host %q is not allowed: this server answers to loopback names only (start it with -allow-host to add one)", r.Host)
		return
	}
	origin := r.Header.Get("Origin")
	if origin != "" {
		w.Header().Add("Vary", "Origin")
		if !g.originAllowed(origin) {
			refuse(w)
			httpError(w, http.StatusForbidden, "requests from pages at %s are not allowed (start the server with -allow-origin %s to allow them)", origin, origin)
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		// A preflight carries no credentials; the request that follows must.
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, X-Api-Key, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if g.token != "" {
		auth := r.Header.Get("Authorization")
		scheme, tok, _ := strings.Cut(auth, " ")
		if strings.EqualFold(scheme, "Bearer") {
			tok = strings.TrimSpace(tok)
		} else {
			tok = r.Header.Get("X-Api-Key")
		}
		if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(g.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
			refuse(w)
			httpError(w, http.StatusUnauthorized, "this server needs a token: send Authorization: Bearer <token> or X-Api-Key: <token>")
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// refuse marks a refused request's connection to be closed after the
// answer, so a client without the right to ask holds no connection.
func refuse(w http.ResponseWriter) { w.Header().Set("Connection", "close") }

// hostAllowed checks a request's Host header.
func (g *guard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	switch {
	case isLoopback(host), slices.Contains(g.hosts, host):
		return true
	}
	return g.token != "" && len(g.hosts) == 0
}

// originAllowed checks a request's Origin header.
func (g *guard) originAllowed(origin string) bool {
	o := strings.ToLower(origin)
	if slices.Contains(g.origins, "*") || slices.Contains(g.origins, o) {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (sandboxed pages, files) and anything odd
	}
	return isLoopback(u.Hostname())
}

// isLoopback reports whether host (a name or address, without port) is
// this machine's loopback.
func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkExposure refuses to listen on an address other machines can reach
// without a token.
func checkExposure(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("agui: bad listen address %q: %w", addr, err)
	}
	if isLoopback(strings.Trim(host, "[]")) || token != "" {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return fmt.Errorf("agui: refusing to listen on %s (%s) without a token: anyone who can reach it could run and answer threads; set a token (-token or %s), or listen on 127.0.0.1", addr, shown, TokenEnv)
}

// TokenEnv is the environment variable weft serve reads its token from
// when -token is not given.
const TokenEnv = "WEFT_SERVE_TOKEN"
