// Package early fixes up the process environment before third-party
// package initialisers read it. Import it (for its side effects) from any
// package that links go-graphviz or Fyne.
//
// Go initialises packages in import-path order among those whose imports
// are ready (the language spec, since Go 1.21): this package needs only the
// standard library's os, so it runs before go-graphviz's WebAssembly package
// (which waits for net, through wazero) and before Fyne's lang package
// (which waits for golang.org/x/text). Tests in package render check that
// the order holds.
//
// What it does:
//
//   - go-graphviz compiles its WebAssembly module in its init function and
//     caches the result in $TMPDIR/go-graphviz, a folder shared by every OS
//     user and owned by whoever ran first: a second user's process panicked
//     with "permission denied". While that init runs, TMPDIR points into the
//     user's own cache directory (os.UserCacheDir()/weft); Restore puts the
//     original back once the Graphviz packages are initialised.
//   - Fyne's lang package parses the user's locale in its init function and
//     logs three error lines for "C.UTF-8" or "POSIX.UTF-8" (the default on
//     many servers and containers). When LANGUAGE is unset and the locale
//     is one of those, LANGUAGE is set to "en", which gettext ignores under
//     the C locale and which the locale lookup Fyne uses reads first.
package early

import (
	"os"
	"path/filepath"
	"strings"
)

var (
	savedTMPDIR string
	hadTMPDIR   bool
	cacheDir    string
)

func init() {
	setGraphvizCache()
	quietCLocale()
}

// GraphvizCacheDir returns the folder go-graphviz was pointed at while it
// initialised (it adds "go-graphviz" inside), or "" if none could be made
// (Graphviz then compiles without a cache).
func GraphvizCacheDir() string { return cacheDir }

func setGraphvizCache() {
	savedTMPDIR, hadTMPDIR = os.LookupEnv("TMPDIR")
	dir := ""
	if base, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(base, "weft")
		if os.MkdirAll(dir, 0o700) != nil {
			dir = ""
		}
	}
	if dir == "" {
		// No usable cache directory: point at a folder that does not
		// exist, so go-graphviz runs without a cache rather than sharing
		// one in /tmp.
		os.Setenv("TMPDIR", filepath.Join(string(filepath.Separator), "nonexistent", "weft-no-cache"))
		return
	}
	cacheDir = dir
	os.Setenv("TMPDIR", dir)
}

// Restore puts TMPDIR back as it was before this package ran. Package
// render calls it from its own init, which runs after go-graphviz's.
// Calling it more than once is harmless.
func Restore() {
	if hadTMPDIR {
		os.Setenv("TMPDIR", savedTMPDIR)
	} else {
		os.Unsetenv("TMPDIR")
	}
}

func quietCLocale() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	loc := ""
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if loc = os.Getenv(name); loc != "" {
			break
		}
	}
	base, _, _ := strings.Cut(loc, ".")
	if base == "C" && loc != "C" || base == "POSIX" && loc != "POSIX" {
		os.Setenv("LANGUAGE", "en")
	}
}
