package bundle

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadHistory is wrapped by Import's error for a bundle whose checkpoints
// do not form a history a store could have written.
var ErrBadHistory = errors.New("the bundle's history is not one a store could have written")

// validate checks a bundle's checkpoints before anything is stored: every
// id present once, every namespace well formed ("" or "node:<task id>"
// levels joined by "|"), every parent present in the same namespace and
// none its own ancestor, so parent links form trees. A
// crafted or damaged bundle is refused naming the checkpoint, instead of
// storing a history the timeline would loop on or hide.
func validate(cps []Checkpoint) error {
	byID := make(map[string]*Checkpoint, len(cps))
	for i := range cps {
		c := &cps[i]
		if c.ID == "" {
			return fmt.Errorf("%w: checkpoint %d of the bundle has no id", ErrBadHistory, i+1)
		}
		if prev, dup := byID[c.ID]; dup {
			return fmt.Errorf("%w: checkpoint %s appears twice (namespaces %q and %q)", ErrBadHistory, c.ID, prev.NS, c.NS)
		}
		if err := checkNS(c.NS); err != nil {
			return fmt.Errorf("%w: checkpoint %s: %v", ErrBadHistory, c.ID, err)
		}
		byID[c.ID] = c
	}
	for i := range cps {
		c := &cps[i]
		if c.ParentID == "" {
			continue
		}
		p, ok := byID[c.ParentID]
		switch {
		case c.ParentID == c.ID:
			return fmt.Errorf("%w: checkpoint %s names itself as its parent", ErrBadHistory, c.ID)
		case !ok:
			return fmt.Errorf("%w: checkpoint %s names parent %s, which the bundle does not hold", ErrBadHistory, c.ID, c.ParentID)
		case p.NS != c.NS:
			return fmt.Errorf("%w: checkpoint %s (namespace %q) names parent %s of another namespace (%q)", ErrBadHistory, c.ID, c.NS, p.ID, p.NS)
		}
	}
	// Parent links must end at a first checkpoint: follow each chain,
	// marking what is done, so the walk is linear in the bundle.
	const walking, done = 1, 2
	state := make(map[string]int, len(cps))
	for i := range cps {
		var path []string
		for id := cps[i].ID; id != "" && state[id] != done; id = byID[id].ParentID {
			if state[id] == walking {
				return fmt.Errorf("%w: checkpoint %s is its own ancestor (parent links %s)", ErrBadHistory, id, strings.Join(append(path, id), " → "))
			}
			state[id] = walking
			path = append(path, id)
		}
		for _, id := range path {
			state[id] = done
		}
	}
	return nil
}

// checkNS checks a namespace's shape.
func checkNS(ns string) error {
	if ns == "" {
		return nil
	}
	for _, seg := range strings.Split(ns, "|") {
		node, task, ok := strings.Cut(seg, ":")
		if !ok || node == "" || task == "" || strings.TrimSpace(seg) != seg {
			return fmt.Errorf("namespace %q is not \"node:<task id>\" levels joined by \"|\"", ns)
		}
	}
	return nil
}
