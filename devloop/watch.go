package devloop

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// watcher reports changes to the files of the modules a build depends on:
// Go files other than tests, go.mod and go.sum, in every folder of the
// module except hidden ones, testdata, vendor and node_modules (folders
// made later are watched as they appear).
type watcher struct {
	w       *fsnotify.Watcher
	changed chan string
	errs    chan error
	dirs    int
	done    chan struct{}
}

func newWatcher(roots ...string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{w: fw, changed: make(chan string, 64), errs: make(chan error, 4), done: make(chan struct{})}
	for _, root := range roots {
		if err := w.addTree(root); err != nil {
			fw.Close()
			return nil, err
		}
	}
	go w.loop()
	return w, nil
}

// skipDir reports whether a folder holds nothing a build reads.
func skipDir(name string) bool {
	return name != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
		name == "testdata" || name == "vendor" || name == "node_modules")
}

// addTree watches dir and the folders below it.
func (w *watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // a folder that went away or cannot be read
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := w.w.Add(path); err != nil {
			return err
		}
		w.dirs++
		return nil
	})
}

// relevant reports whether a change to the file at path can change the
// program.
func relevant(path string) bool {
	base := filepath.Base(path)
	if base == "go.mod" || base == "go.sum" {
		return true
	}
	return strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go") && !strings.HasPrefix(base, ".")
}

func (w *watcher) loop() {
	defer close(w.changed)
	for {
		select {
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Stat(ev.Name); err == nil && st.IsDir() && !skipDir(filepath.Base(ev.Name)) {
					_ = w.addTree(ev.Name)
					select {
					case w.changed <- ev.Name: // it may bring Go files
					default:
					}
					continue
				}
			}
			if ev.Op == fsnotify.Chmod || !relevant(ev.Name) {
				continue
			}
			select {
			case w.changed <- ev.Name:
			default: // a build is coming anyway
			}
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			select {
			case w.errs <- err:
			default:
			}
		case <-w.done:
			return
		}
	}
}

func (w *watcher) close() {
	close(w.done)
	w.w.Close()
}
