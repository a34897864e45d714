package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/nodecache"
)

// NodeCache returns the store's node cache: a nodecache.Cache in the table
// weft_node_cache of the store's schema (migrations/0007_node_cache.sql),
// shared by every worker on the database. Expiry is the server's clock.
// Entries are sealed like write values when the store is encrypted. It is
// usable until the Saver is closed.
func (s *Saver) NodeCache() nodecache.Cache { return nodeCache{s} }

type nodeCache struct{ s *Saver }

func (c nodeCache) Get(ctx context.Context, ns, key string) ([]checkpoint.Write, bool, error) {
	var blob []byte
	err := c.s.pool.QueryRow(ctx, `SELECT writes FROM weft_node_cache WHERE ns = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > clock_timestamp())`,
		ns, key).Scan(&blob)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("postgres node cache: get %s: %w", ns, err)
	}
	plain, err := c.s.cipher.Open(blob)
	if err != nil {
		return nil, false, fmt.Errorf("postgres node cache: entry of %s: %w", ns, err)
	}
	ws, err := nodecache.DecodeEntry(plain)
	if err != nil {
		return nil, false, fmt.Errorf("postgres node cache: entry of %s: %w", ns, err)
	}
	return ws, true, nil
}

func (c nodeCache) Set(ctx context.Context, ns, key string, writes []checkpoint.Write, ttl time.Duration) error {
	if err := c.s.writable(ctx); err != nil {
		return err
	}
	b, err := nodecache.EncodeEntry(writes)
	if err != nil {
		return fmt.Errorf("postgres node cache: %w", err)
	}
	var secs *float64
	if ttl > 0 {
		v := max(ttl.Seconds(), 0.001)
		secs = &v
	}
	// Expired entries of the namespace go as new ones come, so a cache
	// with a TTL does not grow without bound.
	_, err = c.s.pool.Exec(ctx, `WITH gone AS (DELETE FROM weft_node_cache WHERE ns = $1 AND expires_at <= clock_timestamp())
		INSERT INTO weft_node_cache (ns, key, writes, expires_at)
		VALUES ($1, $2, $3, CASE WHEN $4::float8 IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $4::float8) END)
		ON CONFLICT (ns, key) DO UPDATE SET writes = excluded.writes, expires_at = excluded.expires_at`,
		ns, key, c.s.cipher.Seal(b), secs)
	if err != nil {
		return fmt.Errorf("postgres node cache: set %s: %w", ns, err)
	}
	return nil
}

func (c nodeCache) Clear(ctx context.Context, ns ...string) error {
	if err := c.s.writable(ctx); err != nil {
		return err
	}
	var err error
	if len(ns) == 0 {
		_, err = c.s.pool.Exec(ctx, `DELETE FROM weft_node_cache`)
	} else {
		_, err = c.s.pool.Exec(ctx, `DELETE FROM weft_node_cache WHERE ns = ANY($1)`, ns)
	}
	if err != nil {
		return fmt.Errorf("postgres node cache: clear: %w", err)
	}
	return nil
}
