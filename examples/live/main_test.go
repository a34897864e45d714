package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/internal/testenv"
	"github.com/weftstudio/weft/model/modeltest"
)

// asLive is this test binary started again as the live command.
var asLive = testenv.Command{Name: "live", Env: "WEFT_LIVE_TEST_AS_LIVE", Main: main}

func TestMain(m *testing.M) { asLive.TestMain(m) }

func live(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return asLive.Run(t, t.TempDir(), append([]string{"WEFT_MODEL="}, env...), args...)
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
