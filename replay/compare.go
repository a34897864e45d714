package replay

// Values are compared as JSON: every state value is storable, so it has a
// JSON form, and JSON shows the user what differs whatever the Go types.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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

func parseTree(b []byte) (tree, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var t tree
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	return t, nil
}

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

// equal compares a recorded tree with a replayed one, pairing message ids
// on the way, and returns where they first differ ("" and true when they
// are equal).
func (m *idMap) equal(rec, rep tree, path string) (string, bool) {
	switch r := rec.(type) {
	case map[string]any:
		p, ok := rep.(map[string]any)
		if !ok {
			return path, false
		}
		rid, rMsg := isMessage(r)
		pid, pMsg := isMessage(p)
		if rMsg && pMsg {
			if !m.pair(rid, pid) {
				return path + ".id", false
			}
		}
		for _, k := range unionKeys(r, p) {
			if k == "id" && rMsg && pMsg {
				continue
			}
			rv, rok := r[k]
			pv, pok := p[k]
			if rok != pok {
				return path + "." + k, false
			}
			if where, ok := m.equal(rv, pv, path+"."+k); !ok {
				return where, false
			}
		}
		return "", true
	case []any:
		p, ok := rep.([]any)
		if !ok {
			return path, false
		}
		for i := range min(len(r), len(p)) {
			if where, ok := m.equal(r[i], p[i], path+"["+strconv.Itoa(i)+"]"); !ok {
				return where, false
			}
		}
		if len(r) != len(p) {
			return path + "[" + strconv.Itoa(min(len(r), len(p))) + "]", false
		}
		return "", true
	case json.Number:
		p, ok := rep.(json.Number)
		if !ok {
			return path, false
		}
		if r == p {
			return "", true
		}
		a, err1 := r.Float64()
		b, err2 := p.Float64()
		if err1 == nil && err2 == nil && a == b {
			return "", true
		}
		return path, false
	default:
		if rec != rep {
			return path, false
		}
		return "", true
	}
}

// unionKeys returns the keys of a and b, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
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
	for _, ch := range unionKeys(rec, rep) {
		if ignore[ch] {
			continue
		}
		r, rok := rec[ch]
		p, pok := rep[ch]
		where, same := "", rok == pok
		if same {
			where, same = m.equal(r, p, "")
		}
		if !same {
			out = append(out, ChannelDiff{Channel: ch, Path: where, Recorded: raw(r), Replayed: raw(rewrite(p, m.back))})
		}
	}
	return out
}
