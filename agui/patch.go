package agui

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/weftstudio/weft/internal/jsondiff"
)

// PatchOp is one RFC 6902 operation. This package only produces "add",
// "remove" and "replace"; Value is omitted for "remove".
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// MarshalJSON writes Value even when it is JSON null for add and replace,
// where RFC 6902 requires it.
func (p PatchOp) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"op":`)
	op, _ := json.Marshal(p.Op)
	b.Write(op)
	b.WriteString(`,"path":`)
	path, _ := json.Marshal(p.Path)
	b.Write(path)
	if p.Op != "remove" {
		v, err := json.Marshal(p.Value)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"value":`)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Diff returns the RFC 6902 patch that turns the JSON document from into
// to. Both are JSON texts; an error means one of them is not valid JSON.
// Equal documents give an empty patch.
func Diff(from, to []byte) ([]PatchOp, error) {
	a, err := jsondiff.Decode(from)
	if err != nil {
		return nil, err
	}
	b, err := jsondiff.Decode(to)
	if err != nil {
		return nil, err
	}
	return diffValues(nil, nil, a, b), nil
}

// patchOptions walk two states for a patch: lists are patched item by
// item (see patchList).
var patchOptions = jsondiff.Options{List: patchList}

// diffValues appends to ops the patch from a to b, two decoded JSON values
// found at path.
func diffValues(ops []PatchOp, path jsondiff.Path, a, b any) []PatchOp {
	return append(ops, toOps(patchOptions.Diff(path, a, b))...)
}

// patchList orders and sizes the changes inside two lists. Lists in graph
// state mostly grow at the end (reducers append): the common prefix is
// patched item by item, then the tail is added, or removed from the last
// item back so each index is still there when its remove is applied.
// Anything else is one replace of the whole list when that is smaller.
func patchList(path jsondiff.Path, _, b []any, changes []jsondiff.Change) []jsondiff.Change {
	tail := len(changes)
	for tail > 0 && changes[tail-1].Kind == jsondiff.Removed && len(changes[tail-1].Path) == len(path)+1 {
		tail--
	}
	slices.Reverse(changes[tail:])
	if len(path) > 0 && len(changes) > 1 {
		whole := []jsondiff.Change{{Path: path, Kind: jsondiff.Changed, New: b}}
		if size(toOps(whole)) < size(toOps(changes)) {
			return whole
		}
	}
	return changes
}

// toOps writes changes as patch operations.
func toOps(changes []jsondiff.Change) []PatchOp {
	var ops []PatchOp
	for _, c := range changes {
		op := PatchOp{Op: "replace", Path: c.Path.Pointer(), Value: c.New}
		switch c.Kind {
		case jsondiff.Added:
			op.Op = "add"
		case jsondiff.Removed:
			op = PatchOp{Op: "remove", Path: op.Path}
		}
		ops = append(ops, op)
	}
	return ops
}

func size(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
