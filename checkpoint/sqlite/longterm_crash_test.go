package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

const envLongTermCrashDB = "WEFT_LONGTERM_CRASH_DB" // switches TestLongTermCrashChild on

// TestLongTermCrashChild is the child of TestLongTermSurvivesKill: it puts
// items until it is killed, printing each key once its Put returned.
func TestLongTermCrashChild(t *testing.T) {
	db := os.Getenv(envLongTermCrashDB)
	if db == "" {
		t.Skip("the child of TestLongTermSurvivesKill")
	}
	s, err := sqlite.Open(db)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	lt, err := s.LongTerm(longterm.Config{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		key := fmt.Sprintf("k%06d", i)
		if err := lt.Put(context.Background(), longterm.Namespace{"crash", fmt.Sprint(i % 7)}, key, map[string]any{"i": i, "pad": strings.Repeat("x", i%500)}); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(key)
	}
}

// A process killed with SIGKILL in the middle of its puts loses none that
// returned: the next process opens the file and finds each of them, its
// value whole.
func TestLongTermSurvivesKill(t *testing.T) {
	db := filepath.Join(t.TempDir(), "weft.db")
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLongTermCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envLongTermCrashDB+"="+db)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked []string
		sc := bufio.NewScanner(out)
		for sc.Scan() && len(acked) < 200+100*round {
			line := sc.Text()
			if strings.HasPrefix(line, "error:") {
				t.Fatal(line)
			}
			if strings.HasPrefix(line, "k") {
				acked = append(acked, line)
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		if len(acked) == 0 {
			t.Fatal("the child put nothing")
		}

		s, err := sqlite.Open(db)
		if err != nil {
			t.Fatalf("round %d: reopening after the kill: %v", round, err)
		}
		lt, err := s.LongTerm(longterm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range acked {
			var i int
			fmt.Sscanf(key, "k%d", &i)
			it, err := lt.Get(context.Background(), longterm.Namespace{"crash", fmt.Sprint(i % 7)}, key)
			if err != nil || it == nil {
				t.Fatalf("round %d: acknowledged put %s lost after SIGKILL: %v, %v", round, key, it, err)
			}
			if it.Value["i"] != float64(i) || it.Value["pad"] != strings.Repeat("x", i%500) {
				t.Fatalf("round %d: %s came back as %v", round, key, it.Value)
			}
		}
		s.Close()
	}
}
