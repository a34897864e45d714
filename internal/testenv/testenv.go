// Package testenv says what tests may assume about the machine they run on.
package testenv

import (
	"os"
	"testing"
)

// ServicesRequired reports whether tests must fail, not skip, when a
// service they need (PostgreSQL, Node for the AG-UI clients) is missing:
// in CI (CI=true) and under the README's test command, which sets
// WEFT_TEST_SERVICES=required after starting them. Anywhere else a missing
// service skips the test with instructions.
func ServicesRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv("WEFT_TEST_SERVICES") == "required"
}

// PostgresDSNVar names the variable that gives tests their PostgreSQL
// server (scripts/pg-test-server.sh exports it).
const PostgresDSNVar = "WEFT_TEST_POSTGRES_DSN"

// PostgresDSN returns the test server's DSN. Without one the test skips
// with the command that starts a server, or fails where services are
// required (ServicesRequired).
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(PostgresDSNVar)
	if dsn == "" {
		const hint = `start a throw-away server with eval "$(bash scripts/pg-test-server.sh start)" from the repository root`
		if ServicesRequired() {
			t.Fatalf("%s is not set, and the PostgreSQL tests must run here (CI or scripts/dev.sh test): %s", PostgresDSNVar, hint)
		}
		t.Skipf("no PostgreSQL (%s is not set): %s", PostgresDSNVar, hint)
	}
	return dsn
}
