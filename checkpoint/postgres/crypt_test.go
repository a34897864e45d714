package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/postgres"
)

var (
	keyA = bytes.Repeat([]byte{0xA1}, 32)
	keyB = bytes.Repeat([]byte{0xB2}, 16)
)

// The whole conformance suite holds with encryption on.
func TestConformanceEncrypted(t *testing.T) {
	if testing.Short() {
		t.Skip("the unencrypted suite covers the same code in -short mode")
	}
	testDSN(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		s, _ := openFresh(t, postgres.WithEncryptionKey(keyA), postgres.WithMaxConns(8))
		return s
	})
}

// Values and writes never reach the database in the clear; the right key
// reads them back; a wrong key, no key, or a key for a store of plain data
// fails at Open with the matching error.
func TestEncryptionKeyChecks(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	s, schema := openFresh(t, postgres.WithEncryptionKey(keyA))
	secret := []byte("the secret channel value")
	cp := newCP()
	cp.ChannelValues = map[string][]byte{"x": secret}
	ref, err := s.Put(ctx, checkpoint.Ref{ThreadID: "t"}, cp, md(checkpoint.SourceInput, -1), cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "x", Value: []byte("the secret write")}, {Channel: "y"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	var raw [][]byte
	rows, err := s.Pool().Query(ctx, `SELECT blob FROM weft_blobs UNION ALL SELECT blob FROM weft_writes WHERE blob IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
	}
	if rows.Err() != nil || len(raw) != 2 {
		t.Fatalf("stored values %q, %v", raw, rows.Err())
	}
	for _, b := range raw {
		if bytes.Contains(b, []byte("secret")) {
			t.Errorf("a value is stored in the clear: %q", b)
		}
	}
	tp, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tp.Checkpoint.ChannelValues["x"], secret) || len(tp.PendingWrites) != 2 ||
		string(tp.PendingWrites[0].Value) != "the secret write" || tp.PendingWrites[1].Value != nil {
		t.Fatalf("read back values %q writes %+v", tp.Checkpoint.ChannelValues, tp.PendingWrites)
	}

	// The same key opens it again, alone or beside another process.
	openSchema(t, dsn, schema, postgres.WithEncryptionKey(keyA))
	openSchema(t, dsn, schema, postgres.WithEncryptionKey(keyA), postgres.ReadOnly())
	for _, c := range []struct {
		name string
		opts []postgres.Option
		want error
	}{
		{"wrong key", []postgres.Option{postgres.WithEncryptionKey(keyB)}, crypt.ErrWrongKey},
		{"no key", nil, crypt.ErrKeyRequired},
		{"no key, read-only", []postgres.Option{postgres.ReadOnly()}, crypt.ErrKeyRequired},
		{"bad key", []postgres.Option{postgres.WithEncryptionKey([]byte("short"))}, crypt.ErrBadKey},
	} {
		_, err := postgres.Open(ctx, dsn, append([]postgres.Option{postgres.WithSchema(schema)}, c.opts...)...)
		if !errors.Is(err, c.want) {
			t.Errorf("Open with %s: err = %v, want %v", c.name, err, c.want)
		}
	}

	// A key for a store that holds plain data is refused.
	plain, plainSchema := openFresh(t)
	if _, err := plain.Put(ctx, checkpoint.Ref{ThreadID: "t"}, newCP(), md(checkpoint.SourceInput, -1), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(ctx, dsn, postgres.WithSchema(plainSchema), postgres.WithEncryptionKey(keyA)); !errors.Is(err, postgres.ErrNotEncrypted) {
		t.Errorf("Open of a plain store with a key: err = %v, want ErrNotEncrypted", err)
	}
}
