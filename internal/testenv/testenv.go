// Package testenv says what tests may assume about the machine they run on.
package testenv

import "os"

// ServicesRequired reports whether tests must fail, not skip, when a
// service they need (PostgreSQL, Node for the AG-UI clients) is missing:
// in CI (CI=true) and under the README's test command, which sets
// WEFT_TEST_SERVICES=required after starting them. Anywhere else a missing
// service skips the test with instructions.
func ServicesRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv("WEFT_TEST_SERVICES") == "required"
}
