package store

import (
	"context"
	"errors"

	"github.com/weftstudio/weft/checkpoint/postgres"
)

func init() {
	open := func(ctx context.Context, dsn string, key []byte) (Store, error) {
		if key != nil {
			return nil, errors.New("WEFT_ENCRYPTION_KEY is set, but the PostgreSQL store does not encrypt values yet: unset it or use a SQLite file")
		}
		s, err := postgres.Open(ctx, dsn)
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
