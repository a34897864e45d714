package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/postgres"
)

// appliedVersions returns the rows of weft_migrations in a schema.
func appliedVersions(t *testing.T, s *postgres.Saver) []int {
	t.Helper()
	rows, err := s.Pool().Query(context.Background(), `SELECT v FROM weft_migrations ORDER BY v`)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func openSchema(t *testing.T, dsn, schema string, opts ...postgres.Option) *postgres.Saver {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatalf("Open schema %s: %v", schema, err)
	}
	t.Cleanup(s.Close)
	return s
}

func allVersions() []int {
	var vs []int
	for v := 1; v <= postgres.SchemaVersion; v++ {
		vs = append(vs, v)
	}
	return vs
}

// An old schema is upgraded by Open, each migration recorded once.
func TestMigrationsUpgrade(t *testing.T) {
	if postgres.SchemaVersion < 2 {
		t.Skip("only one migration: nothing to upgrade")
	}
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	old := openSchema(t, dsn, schema, postgres.WithSchemaUpTo(1))
	if got := appliedVersions(t, old); !slices.Equal(got, []int{1}) {
		t.Fatalf("after migrating to 1: versions %v", got)
	}
	var hasPut bool
	if err := old.Pool().QueryRow(context.Background(), `SELECT to_regproc('weft_put') IS NOT NULL`).Scan(&hasPut); err != nil || hasPut {
		t.Fatalf("schema 1 has weft_put: %v, %v", hasPut, err)
	}
	s := openSchema(t, dsn, schema)
	if got := appliedVersions(t, s); !slices.Equal(got, allVersions()) {
		t.Fatalf("after upgrading: versions %v, want %v", got, allVersions())
	}
	cp := newCP()
	if _, err := s.Put(context.Background(), checkpoint.Ref{ThreadID: "t"}, cp, md(checkpoint.SourceInput, -1), cp.ChannelVersions); err != nil {
		t.Fatalf("Put after the upgrade: %v", err)
	}
	again := openSchema(t, dsn, schema)
	if got := appliedVersions(t, again); !slices.Equal(got, allVersions()) {
		t.Fatalf("after opening again: versions %v", got)
	}
}

// Processes starting together on an empty database do not race: the
// migrations run once, behind the advisory lock.
func TestMigrationsConcurrentOpen(t *testing.T) {
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	const n = 6
	savers := make([]*postgres.Saver, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			savers[i], errs[i] = postgres.Open(context.Background(), dsn, postgres.WithSchema(schema), postgres.WithMaxConns(2))
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(savers[i].Close)
	}
	if got := appliedVersions(t, savers[0]); !slices.Equal(got, allVersions()) {
		t.Fatalf("versions %v, want %v", got, allVersions())
	}
	for i, s := range savers {
		cp := newCP()
		if _, err := s.Put(context.Background(), checkpoint.Ref{ThreadID: fmt.Sprint("t", i)}, cp, md(checkpoint.SourceInput, -1), cp.ChannelVersions); err != nil {
			t.Fatalf("saver %d: %v", i, err)
		}
	}
}

// A database written by a newer Weft opens read-only: reads work, writes
// say why they are refused.
func TestNewerSchemaIsReadOnly(t *testing.T) {
	s, schema := openFresh(t)
	ctx := context.Background()
	cp := newCP()
	ref, err := s.Put(ctx, checkpoint.Ref{ThreadID: "t"}, cp, md(checkpoint.SourceInput, -1), cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	newer := postgres.SchemaVersion + 1
	if _, err := s.Pool().Exec(ctx, `INSERT INTO weft_migrations (v, name) VALUES ($1, 'from the future')`, newer); err != nil {
		t.Fatal(err)
	}
	ro := openSchema(t, testDSN(t), schema)
	reason := ro.ReadOnlyReason()
	if !errors.Is(reason, checkpoint.ErrReadOnly) || !strings.Contains(reason.Error(), fmt.Sprint(newer)) {
		t.Fatalf("ReadOnlyReason = %v; want ErrReadOnly naming version %d", reason, newer)
	}
	expectReadOnly(t, ro, ref)
}

// ReadOnly opens an existing store without migrating and refuses writes; it
// refuses a database with no store at all.
func TestReadOnlyOption(t *testing.T) {
	s, schema := openFresh(t)
	cp := newCP()
	ref, err := s.Put(context.Background(), checkpoint.Ref{ThreadID: "t"}, cp, md(checkpoint.SourceInput, -1), cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	expectReadOnly(t, openSchema(t, testDSN(t), schema, postgres.ReadOnly()), ref)

	dsn := testDSN(t)
	empty := freshSchema(t, dsn)
	if _, err := postgres.Open(context.Background(), dsn, postgres.WithSchema(empty), postgres.ReadOnly()); err == nil ||
		!strings.Contains(err.Error(), "no Weft checkpoint schema") {
		t.Fatalf("ReadOnly on an empty schema: err = %v", err)
	}
}

// expectReadOnly checks that every write of s fails with ErrReadOnly and
// nothing changes, while reads of ref work.
func expectReadOnly(t *testing.T, s *postgres.Saver, ref checkpoint.Ref) {
	t.Helper()
	ctx := context.Background()
	cp := newCP()
	_, putErr := s.Put(ctx, ref, cp, md(checkpoint.SourceLoop, 0), cp.ChannelVersions)
	_, pruneAgeErr := s.PruneOlderThan(ctx, 0)
	for what, err := range map[string]error{
		"Put":            putErr,
		"PutWrites":      s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "x", Value: []byte("1")}}, "task", ""),
		"DeleteThread":   s.DeleteThread(ctx, ref.ThreadID),
		"Prune":          s.Prune(ctx, []string{ref.ThreadID}, 0),
		"PruneOlderThan": pruneAgeErr,
		"CopyThread":     s.CopyThread(ctx, ref.ThreadID, "copy"),
	} {
		if !errors.Is(err, checkpoint.ErrReadOnly) {
			t.Errorf("%s on a read-only store: err = %v, want ErrReadOnly", what, err)
		}
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: ref.ThreadID})
	if err != nil || tp.Ref != ref || len(tp.PendingWrites) != 0 {
		t.Fatalf("Get on a read-only store = %+v, %v; want %+v, unchanged", tp, err, ref)
	}
	if ths, err := s.ListThreads(ctx, 0); err != nil || len(ths) != 1 {
		t.Errorf("ListThreads = %v, %v", ths, err)
	}
	if st, err := s.Stats(ctx); err != nil || st.Checkpoints != 1 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
}

// Open names the server it could not reach.
func TestOpenUnreachable(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://weft@127.0.0.1:1/nothing?connect_timeout=5&sslmode=disable")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Open of a closed port: err = %v; want an error naming 127.0.0.1:1", err)
	}
	if _, err := postgres.Open(context.Background(), "postgres://%zz"); err == nil || !strings.Contains(err.Error(), "DSN") {
		t.Fatalf("Open of a malformed DSN: err = %v", err)
	}
}

// Without a reachable server the tests say how to start one: they skip
// unless services are required (CI=true, or the README's test command),
// and fail where they are.
func TestNoServerSkipsOrFails(t *testing.T) {
	if os.Getenv(workerModeVar) != "" || os.Getenv("WEFT_PG_NOSERVER_CHILD") != "" {
		t.Skip("child process")
	}
	env := func(dsn, ci string) []string {
		var out []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, DSNVar+"=") && !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "WEFT_TEST_SERVICES=") {
				out = append(out, kv)
			}
		}
		return append(out, DSNVar+"="+dsn, "CI="+ci, "WEFT_PG_NOSERVER_CHILD=1")
	}
	for _, c := range []struct {
		name, dsn, ci string
		fail          bool
		says          string
	}{
		{"unset", "", "", false, DSNVar + " is not set"},
		{"unreachable", "postgres://weft@127.0.0.1:1/x?connect_timeout=5", "", false, "unreachable"},
		{"unset_in_CI", "", "true", true, "the PostgreSQL tests must run here"},
		{"unreachable_in_CI", "postgres://weft@127.0.0.1:1/x?connect_timeout=5", "true", true, "unreachable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestConformance$", "-test.count=1", "-test.v")
			cmd.Env = env(c.dsn, c.ci)
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.fail {
				t.Fatalf("exit error %v, want failure %v\n%s", err, c.fail, out)
			}
			text := string(out)
			if !strings.Contains(text, c.says) || !strings.Contains(text, `eval "$(bash scripts/pg-test-server.sh start)"`) {
				t.Errorf("output does not say %q and how to start a server:\n%s", c.says, text)
			}
			if !c.fail && !strings.Contains(text, "--- SKIP: TestConformance") {
				t.Errorf("want TestConformance skipped:\n%s", text)
			}
		})
	}
}

// A weft_migrations table whose only row is negative (no Weft writes one)
// is refused by Open, writable or read-only, with the number in the error,
// instead of migrating from it.
func TestNegativeSchemaVersionRefused(t *testing.T) {
	s, schema := openFresh(t)
	ctx := context.Background()
	if _, err := s.Pool().Exec(ctx, `DELETE FROM weft_migrations; INSERT INTO weft_migrations (v, name) VALUES (-3, 'by hand')`); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]postgres.Option{nil, {postgres.ReadOnly()}} {
		o, err := postgres.Open(ctx, testDSN(t), append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
		if err == nil {
			o.Close()
			t.Fatalf("Open with weft_migrations at -3 succeeded")
		}
		if !strings.Contains(err.Error(), "-3") {
			t.Errorf("Open error %q does not name the version -3", err)
		}
	}
	if got := appliedVersions(t, s); !slices.Equal(got, []int{-3}) {
		t.Errorf("weft_migrations after the refused opens = %v, want it untouched", got)
	}
}

// A store made before schema 8 keeps its long-term items when upgraded,
// each with one change (its last put, by nobody), and says when its
// history began; a store made at schema 8 has kept every change.
func TestHistoryOfAnUpgradedStore(t *testing.T) {
	ctx := t.Context()
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	old := openSchema(t, dsn, schema, postgres.WithSchemaUpTo(7))
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, k := range []string{"a", "b"} {
		at := t1.Add(time.Duration(i) * time.Minute).UnixNano()
		if _, err := old.Pool().Exec(ctx, "INSERT INTO weft_store (prefix, key, value, created_at, updated_at) VALUES ('users.u1', $1, $2::jsonb, $3, $3)",
			k, fmt.Sprintf(`{"v": %d}`, i), at); err != nil {
			t.Fatal(err)
		}
	}
	// The upgrade runs in a later transaction than schema 6's.
	time.Sleep(10 * time.Millisecond)
	before := time.Now()
	s := openSchema(t, dsn, schema)
	lt, err := s.LongTerm(longterm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	began, err := lt.HistoryBegan(ctx)
	if err != nil || began.Before(before.Add(-time.Second)) || began.After(time.Now().Add(time.Second)) {
		t.Fatalf("HistoryBegan = %v, %v; want the upgrade's time (%v)", began, err, before)
	}
	cs, err := lt.Changes(ctx, longterm.ChangeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Key != "b" || cs[1].Key != "a" || !cs[1].At.Equal(t1) || !cs[0].Writer.IsZero() || cs[0].Value["v"] != 1.0 {
		t.Fatalf("changes after the upgrade = %+v; want b's and a's last puts, by nobody", cs)
	}
	fresh := openSchema(t, dsn, freshSchema(t, dsn))
	flt, _ := fresh.LongTerm(longterm.Config{})
	if began, err := flt.HistoryBegan(ctx); err != nil || !began.IsZero() {
		t.Fatalf("a new store's HistoryBegan = %v, %v; want zero", began, err)
	}
}
