// Package nodetest holds what the end-to-end tests that drive Weft with
// real npm clients and servers under Node share: finding Node and the
// packages scripts/npm-e2e-setup.sh installs, starting a Weft server on
// loopback, and reading what a Node script printed.
package nodetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/internal/testenv"
)

// Setup is the command that installs every package Installed looks for.
const Setup = "bash scripts/npm-e2e-setup.sh"

// Installed returns the path of node once each of pkgs is installed in
// dir's node_modules. Otherwise it skips the test with the command that
// installs them, or fails it where services are required (CI, the README's
// test command), so an end-to-end test never passes by not running there.
// It skips in -short mode.
func Installed(t testing.TB, dir string, pkgs ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			Missing(t, "e2e: %s is not installed in %s: run %s", pkg, dir, Setup)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "e2e: node is not on PATH: %v", err)
	}
	return node
}

// Missing reports a service a test needs that is not there: a skip with
// the message, or a failure where services are required.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if testenv.ServicesRequired() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Serve runs serve in the background with its output piped and waits for
// the first line, which ends with the address it listens on (agui.Serve's
// "… listening on http://127.0.0.1:PORT"). It returns that address, the
// next n lines, and wait, which returns serve's error once it has stopped
// (the caller cancels its context first). The rest of the output is read
// and dropped so serve never blocks on it.
func Serve(t testing.TB, n int, serve func(out io.Writer) error) (base string, lines []string, wait func() error) {
	t.Helper()
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- serve(pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("the server printed nothing: %v", <-served)
	}
	first := sc.Text()
	base = first[strings.LastIndex(first, " ")+1:]
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("the server's first line %q names no loopback address", first)
	}
	for range n {
		if !sc.Scan() {
			t.Fatalf("the server printed %d lines after its first, want %d: %v", len(lines), n, sc.Err())
		}
		lines = append(lines, sc.Text())
	}
	go io.Copy(io.Discard, pr)
	return base, lines, func() error { return <-served }
}

// LastJSON decodes the last non-empty line of out, where the Node scripts
// print their findings, into v.
func LastJSON(out []byte, v any) error {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return json.Unmarshal(lines[len(lines)-1], v)
}
