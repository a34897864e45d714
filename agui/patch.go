package agui

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
	a, err := decodeJSON(from)
	if err != nil {
		return nil, err
	}
	b, err := decodeJSON(to)
	if err != nil {
		return nil, err
	}
	return diffValues(nil, "", a, b), nil
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// escapePointer escapes one JSON Pointer reference token (RFC 6901).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func diffValues(ops []PatchOp, path string, a, b any) []PatchOp {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "/" + escapePointer(k)
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inB:
				ops = append(ops, PatchOp{Op: "remove", Path: p})
			case !inA:
				ops = append(ops, PatchOp{Op: "add", Path: p, Value: y})
			default:
				ops = diffValues(ops, p, x, y)
			}
		}
		return ops
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		// Lists in graph state mostly grow at the end (reducers append):
		// patch the common prefix element by element, then add or remove
		// the tail. Anything else is one replace when that is smaller.
		n := min(len(av), len(bv))
		var elem []PatchOp
		for i := range n {
			elem = diffValues(elem, path+"/"+strconv.Itoa(i), av[i], bv[i])
		}
		for i := n; i < len(bv); i++ {
			elem = append(elem, PatchOp{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: bv[i]})
		}
		for i := len(av) - 1; i >= n; i-- {
			elem = append(elem, PatchOp{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
		if path != "" && len(elem) > 1 {
			whole := []PatchOp{{Op: "replace", Path: path, Value: bv}}
			if size(whole) < size(elem) {
				return append(ops, whole...)
			}
		}
		return append(ops, elem...)
	}
	if reflect.DeepEqual(a, b) {
		return ops
	}
	return append(ops, PatchOp{Op: "replace", Path: path, Value: b})
}

func size(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
