package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/nodecache"
)

// NodeCache returns the store's node cache: a nodecache.Cache in the table
// node_cache of the same file (migrations/0005_node_cache.sql), so cached
// node writes outlive the process and are shared by every process on the
// file. Entries are sealed like write values when the store is encrypted.
// It is usable until the Saver is closed.
func (s *Saver) NodeCache() nodecache.Cache { return nodeCache{s} }

type nodeCache struct{ s *Saver }

func (c nodeCache) Get(ctx context.Context, ns, key string) ([]checkpoint.Write, bool, error) {
	var blob []byte
	const q = `SELECT writes FROM node_cache WHERE ns = ? AND key = ? AND (expires_at = 0 OR expires_at > ?)`
	st, err := c.s.stmt(ctx, nil, q) // prepared once: a hit is one lookup
	if err == nil {
		if st != nil {
			err = st.QueryRowContext(ctx, ns, key, time.Now().UnixMilli()).Scan(&blob)
		} else {
			err = c.s.r.QueryRowContext(ctx, q, ns, key, time.Now().UnixMilli()).Scan(&blob)
		}
	}
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("node cache %s: get %s: %w", c.s.path, ns, err)
	}
	plain, err := c.s.cipher.Open(blob)
	if err != nil {
		return nil, false, fmt.Errorf("node cache %s: entry of %s: %w", c.s.path, ns, err)
	}
	ws, err := nodecache.DecodeEntry(plain)
	if err != nil {
		return nil, false, fmt.Errorf("node cache %s: entry of %s: %w", c.s.path, ns, err)
	}
	return ws, true, nil
}

func (c nodeCache) Set(ctx context.Context, ns, key string, writes []checkpoint.Write, ttl time.Duration) error {
	if err := c.s.writable(ctx); err != nil {
		return err
	}
	b, err := nodecache.EncodeEntry(writes)
	if err != nil {
		return fmt.Errorf("node cache %s: %w", c.s.path, err)
	}
	now := time.Now().UnixMilli()
	var expires int64
	if ttl > 0 {
		expires = now + max(ttl.Milliseconds(), 1)
	}
	// Expired entries of the namespace go as new ones come, so a cache
	// with a TTL does not grow without bound.
	if _, err := c.s.w.ExecContext(ctx, `DELETE FROM node_cache WHERE ns = ? AND expires_at != 0 AND expires_at <= ?`, ns, now); err != nil {
		return fmt.Errorf("node cache %s: set %s: %w", c.s.path, ns, err)
	}
	if _, err := c.s.w.ExecContext(ctx, `INSERT INTO node_cache (ns, key, writes, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (ns, key) DO UPDATE SET writes = excluded.writes, expires_at = excluded.expires_at`,
		ns, key, c.s.cipher.Seal(b), expires); err != nil {
		return fmt.Errorf("node cache %s: set %s: %w", c.s.path, ns, err)
	}
	return nil
}

func (c nodeCache) Clear(ctx context.Context, ns ...string) error {
	if err := c.s.writable(ctx); err != nil {
		return err
	}
	if len(ns) == 0 {
		if _, err := c.s.w.ExecContext(ctx, `DELETE FROM node_cache`); err != nil {
			return fmt.Errorf("node cache %s: clear: %w", c.s.path, err)
		}
		return nil
	}
	for _, n := range ns {
		if _, err := c.s.w.ExecContext(ctx, `DELETE FROM node_cache WHERE ns = ?`, n); err != nil {
			return fmt.Errorf("node cache %s: clear %s: %w", c.s.path, n, err)
		}
	}
	return nil
}
