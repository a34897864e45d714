// Package store opens a checkpoint store from the one string a user types:
// a SQLite file path or a PostgreSQL DSN. The studio, the headless commands
// and the AG-UI server all open stores through it, so they accept the same
// names and report bad ones the same way.
package store

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// Store is an open checkpoint store.
type Store interface {
	checkpoint.Saver
	io.Closer
}

// Opener opens a store for a DSN. Packages register openers for URL schemes
// with Register, so this package does not force every driver on every
// binary.
type Opener func(ctx context.Context, dsn string, key []byte) (Store, error)

var openers = map[string]Opener{}

// Register makes Open hand DSNs that start with scheme + "://" to open.
// It is meant to be called from an init function.
func Register(scheme string, open Opener) { openers[scheme] = open }

// Open opens the store named by spec: "scheme://…" goes to the opener
// registered for that scheme (postgres:// and postgresql:// once the
// PostgreSQL package is linked), anything else is a SQLite file path,
// created when missing. The encryption key, if any, comes from
// WEFT_ENCRYPTION_KEY.
func Open(ctx context.Context, spec string) (Store, error) {
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
	var opts []sqlite.Option
	if key != nil {
		opts = append(opts, sqlite.WithEncryptionKey(key))
	}
	s, err := sqlite.Open(spec, opts...)
	if err != nil {
		return nil, err
	}
	return s, nil
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
