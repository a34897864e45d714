package devloop

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// BuildError is one error of a failed build: the file as the compiler
// named it, its absolute path, the line and column (0 when not given) and
// the message with its continuation lines.
type BuildError struct {
	File string `json:"file"`
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
	Msg  string `json:"msg"`
}

// errLine matches "file.go:12:5: message" and "file.go:12: message".
var errLine = regexp.MustCompile(`^(\S[^:]*\.go):(\d+)(?::(\d+))?: (.*)$`)

// ParseBuildOutput splits the output of go build, run in dir, into the
// errors that name a place in a Go file and the other lines (package
// headers such as "# example.com/app" are dropped, go command errors
// kept). A line indented with a tab continues the error right before it
// (the compiler's "have … want …").
func ParseBuildOutput(out, dir string) (errs []BuildError, rest string) {
	var other []string
	inErr := false // the line before belongs to an error
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if m := errLine.FindStringSubmatch(l); m != nil {
			e := BuildError{File: m[1], Msg: m[4]}
			e.Line, _ = strconv.Atoi(m[2])
			e.Col, _ = strconv.Atoi(m[3])
			e.Path = m[1]
			if !filepath.IsAbs(e.Path) {
				e.Path = filepath.Join(dir, e.Path)
			}
			errs = append(errs, e)
			inErr = true
			continue
		}
		if (strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "    ")) && inErr {
			errs[len(errs)-1].Msg += "\n" + strings.TrimSpace(l)
			continue
		}
		inErr = false
		if strings.HasPrefix(l, "# ") {
			continue // "# example.com/app": the errors name their files
		}
		other = append(other, l)
	}
	return errs, strings.Join(other, "\n")
}
