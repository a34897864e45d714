package replay

// Values are compared as JSON: every state value is storable, so it has a
// JSON form, and JSON shows the user what differs whatever the Go types.

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/weftstudio/weft/internal/jsondiff"
)

// tree is a value's JSON form decoded with numbers kept as written.
type tree = any

// toTree returns v's JSON form as a tree (nil for nil).
func toTree(v any) (tree, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return parseTree(b)
}

func parseTree(b []byte) (tree, error) { return jsondiff.Decode(b) }

// idMap pairs message ids of the recording with those of the replay.
// Messages added without an id get a random one when they join a messages
// channel, and a model reply not served from the recording gets a fresh
// one too, so the same message has another id in each run. Ids are paired
// the first time the same message shows in both; after that the pairing
// must hold both ways (a message replacing another by id must replace the
// same one in both runs).
type idMap struct {
	fwd  map[string]string // recorded → replayed
	back map[string]string // replayed → recorded
}

func newIDMap() *idMap { return &idMap{fwd: map[string]string{}, back: map[string]string{}} }

// pair reports whether recorded id r and replayed id p may stand for the
// same message, pairing them if neither is paired yet.
func (m *idMap) pair(r, p string) bool {
	if q, ok := m.fwd[r]; ok {
		return q == p
	}
	if q, ok := m.back[p]; ok {
		return q == r
	}
	m.fwd[r], m.back[p] = p, r
	return true
}

// isMessage reports whether obj is a chat message's JSON form
// (engine.Message): an object with a string role and a string id.
func isMessage(obj map[string]any) (string, bool) {
	if _, ok := obj["role"].(string); !ok {
		return "", false
	}
	id, ok := obj["id"].(string)
	return id, ok
}

// sameLeaf compares two leaves of recorded and replayed trees: numbers by
// value (a replay may write 1.0 where the recording has 1), the rest as
// they are.
func sameLeaf(rec, rep any) bool {
	r, rok := rec.(json.Number)
	p, pok := rep.(json.Number)
	if rok && pok {
		if r == p {
			return true
		}
		a, err1 := r.Float64()
		b, err2 := p.Float64()
		return err1 == nil && err2 == nil && a == b
	}
	return rec == rep
}

// pairMessages tells the walk that two chat messages' ids are the same
// when they pair (see idMap), and otherwise that they differ there.
func (m *idMap) pairMessages(rec, rep map[string]any) (string, bool) {
	rid, rMsg := isMessage(rec)
	pid, pMsg := isMessage(rep)
	if !rMsg || !pMsg {
		return "", true
	}
	return "id", m.pair(rid, pid)
}

// equal compares a recorded tree with a replayed one, pairing message ids
// on the way, and returns where they first differ ("" and true when they
// are equal).
func (m *idMap) equal(rec, rep tree) (string, bool) {
	c, differ := jsondiff.Options{Equal: sameLeaf, Pair: m.pairMessages}.First(nil, rec, rep)
	return c.Path.Suffix(), !differ
}

// rewrite returns t with message ids replaced through ids (those not in
// it are kept): for showing a replayed value with the recorded ids, and
// for re-applying a recorded value with the replay's ids.
func rewrite(t tree, ids map[string]string) tree {
	switch v := t.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = rewrite(x, ids)
		}
		if id, ok := isMessage(v); ok {
			if to, ok := ids[id]; ok {
				out["id"] = to
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = rewrite(x, ids)
		}
		return out
	}
	return t
}

// raw encodes a tree for a report (null for nil).
func raw(t tree) json.RawMessage {
	b, err := json.Marshal(t)
	if err != nil {
		return json.RawMessage(strconv.Quote(fmt.Sprint(t)))
	}
	return b
}

// diffValues compares two channel maps (trees by channel) and returns the
// differing channels in name order, skipping ignored ones.
func (m *idMap) diffValues(rec, rep map[string]tree, ignore map[string]bool) []ChannelDiff {
	var out []ChannelDiff
	for _, ch := range jsondiff.UnionKeys(rec, rep) {
		if ignore[ch] {
			continue
		}
		r, rok := rec[ch]
		p, pok := rep[ch]
		where, same := "", rok == pok
		if same {
			where, same = m.equal(r, p)
		}
		if !same {
			out = append(out, ChannelDiff{Channel: ch, Path: where, Recorded: raw(r), Replayed: raw(rewrite(p, m.back))})
		}
	}
	return out
}
