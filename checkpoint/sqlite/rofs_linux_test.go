//go:build linux

package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// mountTmpfs mounts a small tmpfs on a new directory and unmounts it at the
// end of the test. It skips the test when the process may not mount (it
// needs CAP_SYS_ADMIN: root in the CI sandbox has it, an ordinary user does
// not). As root, chmod does not stop writes, so a read-only mount is the only
// faithful read-only file system.
func mountTmpfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount a tmpfs to make a read-only file system (%v); TestOpenBadPaths covers unwritable paths", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

func remountReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=8m"); err != nil {
		t.Fatalf("remount %s read-only: %v", dir, err)
	}
}

func TestReadOnlyFileSystem(t *testing.T) {
	dir := mountTmpfs(t)
	existing := filepath.Join(dir, "weft.db")
	s, err := sqlite.Open(existing)
	if err != nil {
		t.Fatal(err)
	}
	fillChain(t, s, "t", 5, true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	remountReadOnly(t, dir)
	if _, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		t.Fatal("the remounted file system is still writable")
	}

	t.Run("new_file", func(t *testing.T) {
		path := filepath.Join(dir, "new.db")
		err := expectOpenError(t, path, nil)
		if !strings.Contains(err.Error(), "read-only") && !strings.Contains(err.Error(), "writable") {
			t.Errorf("error %q does not say the location is not writable", err)
		}
	})
	t.Run("existing_file_writable_open", func(t *testing.T) {
		err := expectOpenError(t, existing, checkpoint.ErrReadOnly)
		if !strings.Contains(err.Error(), "ReadOnly()") {
			t.Errorf("error %q does not point to the ReadOnly option", err)
		}
	})
	t.Run("existing_file_read_only_open", func(t *testing.T) {
		s, err := sqlite.Open(existing, sqlite.ReadOnly())
		if err != nil {
			t.Fatalf("Open read-only on a read-only file system: %v", err)
		}
		defer s.Close()
		tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if tp.Metadata.Step != 4 || len(tp.Checkpoint.ChannelValues) != 2 {
			t.Fatalf("read %+v", tp.Metadata)
		}
		_, err = s.Put(t.Context(), tp.Ref, tp.Checkpoint, tp.Metadata, nil)
		if !errors.Is(err, checkpoint.ErrReadOnly) {
			t.Fatalf("Put = %v, want ErrReadOnly", err)
		}
	})
}
