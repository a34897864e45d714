package lgserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestStart starts the real server and finds both graphs among its
// assistants: what every test built on Start relies on.
func TestStart(t *testing.T) {
	s := Start(t)
	resp, err := http.Post(s.URL+"/assistants/search", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var found []struct {
		GraphID string `json:"graph_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&found); err != nil {
		t.Fatalf("assistants/search: %d, %v", resp.StatusCode, err)
	}
	var ids []string
	for _, a := range found {
		ids = append(ids, a.GraphID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"agent", "approval"}) {
		t.Errorf("assistants' graphs %v, want agent and approval", ids)
	}
}
