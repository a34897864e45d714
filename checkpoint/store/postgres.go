package store

import (
	"context"

	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/checkpoint/postgres"
)

func init() {
	open := func(ctx context.Context, dsn string, key []byte) (Store, error) {
		// A LangGraph PostgresSaver database is recognised by its tables
		// before Weft's saver could create its own schema in it, and
		// opens read-only.
		if ok, _, err := langgraph.IsPostgresStore(ctx, dsn); err == nil && ok {
			return langgraph.OpenPostgres(ctx, dsn)
		}
		var opts []postgres.Option
		if key != nil {
			opts = append(opts, postgres.WithEncryptionKey(key))
		}
		s, err := postgres.Open(ctx, dsn, opts...)
		if err != nil {
			return nil, err
		}
		return pgStore{s}, nil
	}
	Register("postgres", open)
	Register("postgresql", open)
}

// pgStore adapts the PostgreSQL saver's Close (it returns nothing) to Store.
type pgStore struct{ *postgres.Saver }

func (p pgStore) Close() error { p.Saver.Close(); return nil }
