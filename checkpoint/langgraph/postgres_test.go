package langgraph

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/internal/testenv"
)

// dsnVar names the variable that gives the tests their PostgreSQL server,
// as for checkpoint/postgres (scripts/pg-test-server.sh sets it).
const dsnVar = "WEFT_TEST_POSTGRES_DSN"

func pgUnavailable(t testing.TB, why string) {
	t.Helper()
	hint := `start a throw-away server with eval "$(bash scripts/pg-test-server.sh start)" from the repository root`
	if testenv.ServicesRequired() {
		t.Fatalf("%s; the PostgreSQL tests must run here (CI or scripts/dev.sh test): %s", why, hint)
	}
	t.Skipf("%s; to run this test, %s", why, hint)
}

// psqlPath finds psql: on PATH, or beside the Debian server binaries the
// test server script uses.
func psqlPath() (string, error) {
	if p, err := exec.LookPath("psql"); err == nil {
		return p, nil
	}
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	p := filepath.Join(bin, "psql")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no psql on PATH or in %s", bin)
	}
	return p, nil
}

// restoreDump restores testdata/name.sql.gz (a LangGraph saver's pg_dump)
// into a fresh database of the test server, dropped when the test ends,
// and returns its DSN.
func restoreDump(t testing.TB, name string) string {
	t.Helper()
	dsn := os.Getenv(dsnVar)
	if dsn == "" {
		pgUnavailable(t, dsnVar+" is not set")
	}
	psql, err := psqlPath()
	if err != nil {
		pgUnavailable(t, err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		pgUnavailable(t, fmt.Sprintf("the server at %s is unreachable: %v", dsnVar, err))
	}
	defer admin.Close(ctx)
	db := fmt.Sprintf("weft_lg_%s_%d_%d", strings.ReplaceAll(name, "-", "_"), os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	// Older psql versions do not know pg_dump's \restrict lines: drop them.
	in := gunzip(t, t.TempDir(), name+".sql")
	clean := in + ".clean"
	src, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `\restrict`) || strings.HasPrefix(line, `\unrestrict`) {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(clean, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", u.String(), "-f", clean).CombinedOutput()
	if err != nil {
		t.Fatalf("restoring %s: %v\n%s", name, err, out)
	}
	return u.String()
}

func pgCase(name string, lossy, known map[string]string) storeCase {
	return storeCase{name: name, lossy: lossy, known: known, open: func(t *testing.T) *Reader {
		dsn := restoreDump(t, name)
		want := map[string]Kind{"py-postgres": PythonPostgres, "js-postgres": JSPostgres}[name]
		if ok, kind, err := IsPostgresStore(context.Background(), dsn); !ok || kind != want || err != nil {
			t.Errorf("IsPostgresStore = %v, %q, %v; want %q", ok, kind, err, want)
		}
		r, err := OpenPostgres(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}}
}

func TestTruthPostgres(t *testing.T) {
	for _, c := range []storeCase{
		pgCase("py-postgres", nil, knownPython),
		pgCase("js-postgres", map[string]string{"update-fork": "LangGraph.js' PostgresSaver shares blobs between forks (README item 1)"}, knownJS),
	} {
		t.Run(c.name, func(t *testing.T) { checkTruth(t, c) })
	}
}

func TestGetMatchesThreadPostgres(t *testing.T) {
	for _, name := range []string{"py-postgres", "js-postgres"} {
		t.Run(name, func(t *testing.T) {
			dsn := restoreDump(t, name)
			r, err := OpenPostgres(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			getMatchesThread(t, name, r)
		})
	}
}
