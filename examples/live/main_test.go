package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/model/modeltest"
)

// TestMain runs main instead of the tests when a test below starts this
// binary again as the live command.
func TestMain(m *testing.M) {
	if os.Getenv("WEFT_LIVE_TEST_AS_LIVE") == "1" {
		os.Args = append([]string{"live"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func live(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "WEFT_LIVE_TEST_AS_LIVE=1", "WEFT_MODEL="), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// The agent runs on the model $WEFT_MODEL names: here a fake
// OpenAI-compatible server, reached through the provider's own SDK.
func TestAgentOnTheNamedModel(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.OpenAI{}, modeltest.Response{Reply: modeltest.Reply{Text: []string{"Your balance ", "is fine."}}})
	db := filepath.Join(t.TempDir(), "live.db")
	out, errs, code := live(t, []string{"WEFT_MODEL=" + srv.URL + "/v1#fake-model"},
		"run", "tool agent", "-input", `{"messages": [{"role": "user", "content": "Balance?"}]}`, "-db", db, "-create")
	if code != 0 || !strings.Contains(out, "Your balance is fine.") {
		t.Fatalf("live run: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"fake-model"`) || !strings.Contains(string(reqs[0].Body), "Balance?") {
		t.Fatalf("the server saw %d requests, want one for fake-model with the question: %+v", len(reqs), reqs)
	}
}

// Without a model named, or with a bad spec, live says what to set and
// exits 2 before touching any store.
func TestModelMustBeNamed(t *testing.T) {
	for env, want := range map[string]string{
		"WEFT_MODEL=":          "set WEFT_MODEL to the model the agent runs on",
		"WEFT_MODEL=gopher:v1": `WEFT_MODEL: model "gopher:v1": want openai:NAME`,
	} {
		_, errs, code := live(t, []string{env}, "threads", "-db", "x.db")
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", env, code, errs, want)
		}
	}
}
