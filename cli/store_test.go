package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/testenv"
)

// weft store puts, reads, searches, lists and deletes items of the
// long-term store in the checkpoint file, and what it puts is what a
// program opening the file sees.
func TestStoreCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "weft.db")
	run := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := runCLI(t, nil, append([]string{"store"}, append(args, "-db", db)...)...)
		if code != want {
			t.Fatalf("store %v: exit %d, want %d: %s", args, code, want, errs)
		}
		return out + errs
	}
	run(0, "put", "users.ada", "pref", `{"drink": "tea", "n": 3}`, "-create")
	run(0, "put", "users.ada", "old", `{"drink": "coffee", "n": 1}`, "-ttl", "1h")
	run(0, "put", "users.bob", "pref", `{"drink": "tea", "n": 5}`)

	var item struct {
		Namespace []string       `json:"namespace"`
		Key       string         `json:"key"`
		Value     map[string]any `json:"value"`
		ExpiresAt *string        `json:"expires_at"`
		TTL       string         `json:"ttl"`
	}
	if err := json.Unmarshal([]byte(run(0, "get", "users.ada", "old")), &item); err != nil {
		t.Fatal(err)
	}
	if strings.Join(item.Namespace, ".") != "users.ada" || item.Key != "old" || item.Value["drink"] != "coffee" || item.ExpiresAt == nil || item.TTL != "1h0m0s" {
		t.Errorf("get = %+v", item)
	}

	var found struct {
		Items []struct {
			Namespace []string `json:"namespace"`
			Key       string   `json:"key"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(run(0, "search", "users", "-filter", `{"drink": "tea", "n": {"$gt": 4}}`)), &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Items) != 1 || found.Items[0].Key != "pref" || found.Items[0].Namespace[1] != "bob" {
		t.Errorf("search = %+v, want users.bob/pref alone", found)
	}

	var ls struct {
		Namespaces [][]string `json:"namespaces"`
	}
	if err := json.Unmarshal([]byte(run(0, "ls", "-suffix", "ada")), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Namespaces) != 1 || strings.Join(ls.Namespaces[0], ".") != "users.ada" {
		t.Errorf("ls -suffix ada = %v", ls.Namespaces)
	}

	if out := run(0, "sweep"); !strings.Contains(out, `"swept": 0`) {
		t.Errorf("sweep with nothing expired: %s", out)
	}
	run(0, "put", "users.ada", "brief", `{"x": 1}`, "-ttl", "1ns")
	if out := run(0, "sweep"); !strings.Contains(out, `"swept": 1`) {
		t.Errorf("sweep after an item expired: %s", out)
	}
	if out := run(0, "delete", "users.ada", "pref"); !strings.Contains(out, `"deleted": true`) {
		t.Errorf("delete: %s", out)
	}
	if out := run(1, "get", "users.ada", "pref"); !strings.Contains(out, `no item "pref"`) {
		t.Errorf("get after delete: %s", out)
	}
	// Bad input is named.
	if out := run(2, "put", "users.ada", "k", `[1]`); !strings.Contains(out, "JSON object") {
		t.Errorf("put of an array: %s", out)
	}
	if out := run(1, "put", "langgraph.x", "k", `{}`); !strings.Contains(out, `"langgraph"`) {
		t.Errorf("put under langgraph: %s", out)
	}
	if out := run(1, "search", "-filter", `{"n": {"$in": [1]}}`); !strings.Contains(out, `"$in"`) {
		t.Errorf("search with a bad operator: %s", out)
	}
	if out := run(2, "frob"); !strings.Contains(out, `unknown store subcommand "frob"`) {
		t.Errorf("unknown subcommand: %s", out)
	}

	// A program opening the file sees what the command put.
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lt, err := s.LongTerm(longterm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	it, err := lt.Get(ctx, longterm.Namespace{"users", "bob"}, "pref")
	if err != nil || it == nil || it.Value["n"] != 5.0 {
		t.Errorf("program's Get = %+v, %v", it, err)
	}
}

// The same on PostgreSQL, in a namespace of its own.
func TestStoreCommandPostgres(t *testing.T) {
	dsn := os.Getenv("WEFT_TEST_POSTGRES_DSN")
	if dsn == "" {
		if testenv.ServicesRequired() {
			t.Fatal("WEFT_TEST_POSTGRES_DSN is not set, and the PostgreSQL tests must run here (CI or scripts/dev.sh test)")
		}
		t.Skip(`no PostgreSQL: run eval "$(bash scripts/pg-test-server.sh start)" first`)
	}
	ns := "cli" + time.Now().Format("150405000000") + ".ada"
	run := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := runCLI(t, nil, append([]string{"store"}, append(args, "-store", dsn)...)...)
		if code != want {
			t.Fatalf("store %v: exit %d, want %d: %s", args, code, want, errs)
		}
		return out + errs
	}
	run(0, "put", ns, "pref", `{"drink": "tea", "n": 3}`)
	if out := run(0, "search", ns, "-filter", `{"n": {"$gte": 3}}`); !strings.Contains(out, `"drink": "tea"`) {
		t.Errorf("search: %s", out)
	}
	if out := run(0, "delete", ns, "pref"); !strings.Contains(out, `"deleted": true`) {
		t.Errorf("delete: %s", out)
	}
	run(1, "get", ns, "pref")
}

// A graph compiled without a store that a command runs gets the long-term
// store of the command's file: what its node puts, weft store reads.
func TestCommandsGiveGraphsTheFilesStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "weft.db")
	note := engine.LastValue[string]("note")
	g, err := engine.NewGraph("rememberer", note).AddNode("remember", func(ctx context.Context, s engine.State) (engine.Output, error) {
		rt, _ := engine.RuntimeOf(ctx)
		if rt.Store == nil {
			return nil, errors.New("no long-term store")
		}
		return nil, rt.Store.Put(ctx, longterm.Namespace{"notes"}, "last", map[string]any{"note": note.Get(s)})
	}).AddEdge(engine.START, "remember").Compile()
	if err != nil {
		t.Fatal(err)
	}
	graphs := []*engine.Graph{g}
	if out, errs, code := runCLI(t, graphs, "run", "rememberer", "-input", `{"note": "buy kelp"}`, "-db", db, "-create"); code != 0 {
		t.Fatalf("run: exit %d: %s %s", code, out, errs)
	}
	out, errs, code := runCLI(t, graphs, "store", "get", "notes", "last", "-db", db)
	if code != 0 || !strings.Contains(out, `"note": "buy kelp"`) {
		t.Errorf("store get after the run: exit %d: %s %s", code, out, errs)
	}
	if g.Store() != nil {
		t.Error("binding the file's store changed the compiled graph")
	}
	// The item says which task wrote it; a second run replaces it, and
	// the history and a search as at the first run's end tell both.
	var got struct {
		WrittenBy struct {
			ThreadID     string `json:"thread_id"`
			CheckpointID string `json:"checkpoint_id"`
			TaskID       string `json:"task_id"`
			Node         string `json:"node"`
			Step         int    `json:"step"`
		} `json:"written_by"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	first := got.WrittenBy
	if first.Node != "remember" || first.ThreadID == "" || first.CheckpointID == "" || first.TaskID == "" {
		t.Errorf("written_by = %+v, want the remember task of the run's thread", first)
	}
	var history []struct {
		CheckpointID string `json:"checkpoint_id"`
	}
	out, _, _ = runCLI(t, graphs, "history", first.ThreadID, "-db", db)
	if err := json.Unmarshal([]byte(out), &history); err != nil || len(history) == 0 {
		t.Fatalf("history: %s (%v)", out, err)
	}
	head := history[0].CheckpointID
	if out, errs, code := runCLI(t, graphs, "run", "rememberer", "-input", `{"note": "sell kelp"}`, "-db", db); code != 0 {
		t.Fatalf("second run: exit %d: %s %s", code, out, errs)
	}
	var hist struct {
		Changes []struct {
			Op        string         `json:"op"`
			Value     map[string]any `json:"value"`
			WrittenBy *struct {
				ThreadID string `json:"thread_id"`
			} `json:"written_by"`
		} `json:"changes"`
	}
	out, errs, code = runCLI(t, graphs, "store", "history", "notes", "last", "-db", db)
	if err := json.Unmarshal([]byte(out), &hist); code != 0 || err != nil || len(hist.Changes) != 2 ||
		hist.Changes[0].Value["note"] != "sell kelp" || hist.Changes[1].Value["note"] != "buy kelp" ||
		hist.Changes[1].WrittenBy == nil || hist.Changes[1].WrittenBy.ThreadID != first.ThreadID || hist.Changes[0].WrittenBy.ThreadID == first.ThreadID {
		t.Errorf("store history: exit %d: %s %s", code, out, errs)
	}
	if out, errs, code := runCLI(t, graphs, "store", "search", "notes", "-thread", first.ThreadID, "-checkpoint", head, "-db", db); code != 0 ||
		!strings.Contains(out, `"buy kelp"`) || strings.Contains(out, "sell") || strings.Contains(out, "created_at") {
		t.Errorf("search as at the first run's head: exit %d: %s %s", code, out, errs)
	}
	if out, errs, code := runCLI(t, graphs, "store", "search", "notes", "-at", "2000-01-01T00:00:00Z", "-db", db); code != 0 || !strings.Contains(out, `"items": []`) {
		t.Errorf("search as at 2000: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := runCLI(t, graphs, "store", "search", "notes", "-at", "yesterday", "-db", db); code != 2 || !strings.Contains(errs, "-at wants a time") {
		t.Errorf("search -at yesterday: exit %d: %s", code, errs)
	}
	if _, errs, code := runCLI(t, graphs, "store", "search", "notes", "-thread", first.ThreadID, "-checkpoint", "nope", "-db", db); code != 1 || !strings.Contains(errs, `"nope"`) || !strings.Contains(errs, "not found") {
		t.Errorf("search as at a missing checkpoint: exit %d: %s", code, errs)
	}
}

// weft store search -query ranks by similarity when the binary gives the
// commands an embedder (cli.Env.Embedder: examples/live from
// $WEFT_EMBEDDINGS), and names what is missing when it does not.
func TestStoreSearchByQuery(t *testing.T) {
	db := filepath.Join(t.TempDir(), "weft.db")
	emb := cli.Env{Embedder: longterm.HashEmbedder{Dims: 64}}
	run := func(env cli.Env, want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		env.Stdout, env.Stderr = &out, &errb
		if code := cli.Run(ctx, append([]string{"store"}, append(args, "-db", db)...), env); code != want {
			t.Fatalf("store %v: exit %d, want %d: %s", args, code, want, errb.String())
		}
		return out.String() + errb.String()
	}
	run(emb, 0, "put", "users.ada", "drink", `{"text": "likes green tea"}`, "-create")
	run(emb, 0, "put", "users.ada", "pet", `{"text": "has a cat named Kelp"}`)
	var found struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(run(emb, 0, "search", "users", "-query", "green tea please", "-limit", "1")), &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Items) != 1 || found.Items[0].Key != "drink" {
		t.Errorf("search -query = %+v, want drink first", found)
	}
	if out := run(cli.Env{}, 1, "search", "users", "-query", "tea"); !strings.Contains(out, "embedder") {
		t.Errorf("a query without an embedder: %s", out)
	}
}
