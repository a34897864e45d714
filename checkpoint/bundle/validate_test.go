package bundle

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateRefusesBrokenHistories(t *testing.T) {
	cp := func(ns, id, parent string) Checkpoint { return Checkpoint{NS: ns, ID: id, ParentID: parent} }
	for _, c := range []struct {
		name string
		cps  []Checkpoint
		want string // in the error; "" for a valid history
	}{
		{"chain", []Checkpoint{cp("", "a", ""), cp("", "b", "a"), cp("", "c", "b")}, ""},
		{"forks and a subgraph", []Checkpoint{cp("", "a", ""), cp("", "b", "a"), cp("", "c", "a"), cp("sub:t1", "d", ""), cp("sub:t1|inner:t2", "e", "")}, ""},
		{"child older than parent", []Checkpoint{cp("", "b", ""), cp("", "a", "b")}, ""},
		{"duplicate id", []Checkpoint{cp("", "a", ""), cp("sub:t", "a", "")}, "appears twice"},
		{"self-parent", []Checkpoint{cp("", "a", "a")}, "names itself"},
		{"dangling parent", []Checkpoint{cp("", "a", ""), cp("", "b", "zz")}, "does not hold"},
		{"cycle", []Checkpoint{cp("", "a", "c"), cp("", "b", "a"), cp("", "c", "b")}, "its own ancestor"},
		{"parent in another namespace", []Checkpoint{cp("", "a", ""), cp("sub:t", "b", "a")}, "another namespace"},
		{"no id", []Checkpoint{cp("", "", "")}, "has no id"},
		{"odd namespace", []Checkpoint{cp("", "a", ""), cp("sub", "b", "")}, "namespace \"sub\""},
		{"empty level", []Checkpoint{cp("sub:t||x:y", "b", "")}, "namespace"},
		{"trailing bar", []Checkpoint{cp("sub:t|", "b", "")}, "namespace"},
		{"spaces", []Checkpoint{cp(" sub:t", "b", "")}, "namespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := validate(c.cps)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused a valid history: %v", err)
			case c.want != "" && (err == nil || !errors.Is(err, ErrBadHistory) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err %v, want ErrBadHistory saying %q", err, c.want)
			}
		})
	}
}
