// Package store opens a checkpoint store from the one string a user types:
// a SQLite file path or a PostgreSQL DSN. The studio, the headless commands
// and the AG-UI server all open stores through it, so they accept the same
// names and report bad ones the same way.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/checkpoint/postgres"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// Store is an open checkpoint store.
type Store interface {
	checkpoint.Saver
	io.Closer
}

// Checker is an optional capability of a Store: Check returns nil while
// the store is usable, and an error saying why not once it is not (the
// SQLite store's file was deleted or replaced under the process:
// sqlite.ErrFileGone). Long-running commands call it periodically and stop
// on an error instead of writing into the void.
type Checker interface {
	Check(ctx context.Context) error
}

var _ Checker = (*sqlite.Saver)(nil)

// Opener opens a store for a DSN. Packages register openers for URL schemes
// with Register, so this package does not force every driver on every
// binary.
type Opener func(ctx context.Context, dsn string, key []byte) (Store, error)

var openers = map[string]Opener{}

// Register makes Open hand DSNs that start with scheme + "://" to open.
// It is meant to be called from an init function.
func Register(scheme string, open Opener) { openers[scheme] = open }

// Option changes how Open opens a SQLite file. The PostgreSQL opener
// ignores options: its schema is created on connect and its roles decide
// what may be written.
type Option func(*options)

type options struct{ mustExist, readOnly bool }

// MustExist opens only a file that already is a Weft store: a missing
// path, a 0-byte file or another program's empty SQLite database is an
// error and is left as it is (sqlite.MustExist). Without it (or ReadOnly),
// Open creates the store. Commands that only read use ReadOnly; commands
// that write use MustExist unless the user asked to create a store.
func MustExist() Option { return func(o *options) { o.mustExist = true } }

// ReadOnly opens an existing file read-only: writes fail with
// checkpoint.ErrReadOnly, nothing in the file changes, and no -wal or -shm
// file is left behind (sqlite.ReadOnly). It works on read-only files and
// folders.
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

// Open opens the store named by spec: "scheme://…" goes to the opener
// registered for that scheme (postgres:// and postgresql:// once the
// PostgreSQL package is linked), anything else is a SQLite file path,
// created when missing unless MustExist or ReadOnly is given. The
// encryption key, if any, comes from WEFT_ENCRYPTION_KEY.
func Open(ctx context.Context, spec string, opts ...Option) (Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("no store given: name a SQLite file or a postgres:// DSN")
	}
	key, err := crypt.KeyFromEnv()
	if err != nil {
		return nil, err
	}
	if scheme, _, ok := strings.Cut(spec, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		open, ok := openers[scheme]
		if !ok {
			return nil, fmt.Errorf("store %q: no driver for %s:// in this build", Redact(spec), scheme)
		}
		return open(ctx, spec, key)
	}
	var sopts []sqlite.Option
	if key != nil {
		sopts = append(sopts, sqlite.WithEncryptionKey(key))
	}
	if o.mustExist {
		sopts = append(sopts, sqlite.MustExist())
	}
	if o.readOnly {
		sopts = append(sopts, sqlite.ReadOnly())
	}
	s, err := sqlite.Open(spec, sopts...)
	if errors.Is(err, sqlite.ErrForeignFile) {
		// Another program's SQLite file: LangGraph's SqliteSaver store
		// opens read-only, whatever the options asked (Weft never writes
		// one); anything else keeps sqlite's error.
		if lg, lgErr := langgraph.OpenSQLite(ctx, spec); lgErr == nil {
			return lg, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Describer is an optional capability of a Store: what kind of store it
// is, in words for the user ("LangGraph (Python) SQLite store").
type Describer interface {
	StoreKind() string
}

// Kind says what kind of store s is: the Describer's words, or Weft's own
// store.
func Kind(s Store) string {
	if d, ok := s.(Describer); ok {
		return d.StoreKind()
	}
	return "Weft checkpoint store"
}

// Redact hides the password of a DSN for display; paths pass unchanged.
func Redact(spec string) string {
	scheme, rest, ok := strings.Cut(spec, "://")
	if !ok {
		return spec
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return spec
	}
	userinfo := rest[:at]
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return scheme + "://" + user + ":***@" + rest[at+1:]
	}
	return spec
}

// LongTerm returns the long-term store kept beside the checkpoints of s,
// configured by cfg (its embedder for semantic search; the zero Config
// has none): the SQLite and PostgreSQL stores keep one in the same file or
// database (longterm's items). Open wraps the savers, so their method is
// asked for, not their type. Other stores keep none, which the error says.
func LongTerm(s checkpoint.Saver, cfg longterm.Config) (longterm.Store, error) {
	switch sv := s.(type) {
	case interface {
		LongTerm(longterm.Config) (*sqlite.LongTerm, error)
	}:
		return sv.LongTerm(cfg)
	case interface {
		LongTerm(longterm.Config) (*postgres.LongTerm, error)
	}:
		return sv.LongTerm(cfg)
	}
	return nil, errors.New("this store keeps no long-term items (the SQLite and PostgreSQL stores do)")
}

// NodeCache returns the node cache kept beside the checkpoints of s (the
// SQLite and PostgreSQL stores keep one, for nodes with a cache policy);
// nil when s keeps none.
func NodeCache(s checkpoint.Saver) nodecache.Cache {
	if c, ok := s.(interface{ NodeCache() nodecache.Cache }); ok {
		return c.NodeCache()
	}
	return nil
}
