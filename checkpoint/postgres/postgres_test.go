package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/postgres"
)

// DSNVar names the environment variable that gives the tests their server.
const DSNVar = "WEFT_TEST_POSTGRES_DSN"

const startHint = `start a throw-away server with
	eval "$(bash scripts/pg-test-server.sh start)"
(from the repository root; it exports ` + DSNVar + `), and stop it afterwards with
	bash scripts/pg-test-server.sh stop`

var (
	reachOnce sync.Once
	reachErr  error
)

// testDSN returns the test server's DSN. Without one, or when it cannot be
// reached, the test is skipped with instructions, except under CI (CI=true),
// where it fails: CI must run these tests.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(DSNVar)
	if dsn == "" {
		unavailable(t, DSNVar+" is not set")
	}
	reachOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			reachErr = err
			return
		}
		reachErr = conn.Ping(ctx)
		conn.Close(ctx)
	})
	if reachErr != nil {
		unavailable(t, fmt.Sprintf("the PostgreSQL server at %s=%q is unreachable: %v", DSNVar, dsn, reachErr))
	}
	return dsn
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if testenv.ServicesRequired() {
		t.Fatalf("%s; the PostgreSQL tests must run here (CI or scripts/dev.sh test): %s", why, startHint)
	}
	t.Skipf("%s; to run this test, %s", why, startHint)
}

var schemaSeq struct {
	sync.Mutex
	n int
}

// freshSchema returns the name of a schema no other test uses, dropped when
// the test ends.
func freshSchema(t testing.TB, dsn string) string {
	t.Helper()
	schemaSeq.Lock()
	schemaSeq.n++
	name := fmt.Sprintf("weft_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.n)
	schemaSeq.Unlock()
	t.Cleanup(func() { dropSchema(t, dsn, name) })
	return name
}

func dropSchema(t testing.TB, dsn, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Errorf("drop schema %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
		t.Errorf("drop schema %s: %v", name, err)
	}
}

// openFresh opens a saver on a schema of its own, closed and dropped when
// the test ends.
func openFresh(t testing.TB, opts ...postgres.Option) (*postgres.Saver, string) {
	t.Helper()
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	s, err := postgres.Open(context.Background(), dsn, append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(s.Close)
	return s, schema
}

func TestConformance(t *testing.T) {
	testDSN(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		s, _ := openFresh(t, postgres.WithMaxConns(8))
		return s
	})
}
