package store

import (
	"context"

	"github.com/weftstudio/weft/checkpoint/postgres"
)

func init() {
	open := func(ctx context.Context, dsn string, key []byte) (Store, error) {
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
