package longterm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Filter keeps the items whose values match every entry, LangGraph's
// filter: a field name maps to a value the field must equal, to an object
// of operators ({"$gt": 3}: $eq, $ne, $gt, $gte, $lt, $lte), or to an
// object of nested fields ({"author": {"name": "Ada"}}). Values compare by
// their JSON meaning: numbers as numbers (1 equals 1.0), strings byte by
// byte, arrays and objects as wholes. $gt, $gte, $lt and $lte compare two
// numbers or two strings and are false for anything else; $ne is true for
// a missing field. A nil Filter matches every item.
type Filter map[string]any

// Condition is one test of a Filter, flattened: the value at Path
// compared with Op to Value (a JSON-decoded value: nil, bool, float64,
// string, []any or map[string]any).
type Condition struct {
	Path  []string
	Op    string // "$eq", "$ne", "$gt", "$gte", "$lt" or "$lte"
	Value any
}

var operators = map[string]bool{"$eq": true, "$ne": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true}

// Conditions flattens f into its conditions, sorted by path then operator,
// or says what is wrong with it (an unknown operator, an operator mixed with
// fields, an ordering operator given a value that is not a number or a
// string, a value JSON cannot encode).
func (f Filter) Conditions() ([]Condition, error) {
	if len(f) == 0 {
		return nil, nil
	}
	// Normalize through JSON: numbers of every Go type become float64.
	b, err := json.Marshal(map[string]any(f))
	if err != nil {
		return nil, invalid("filter is not JSON: %v", err)
	}
	var norm map[string]any
	if err := json.Unmarshal(b, &norm); err != nil {
		return nil, invalid("filter is not JSON: %v", err)
	}
	var out []Condition
	if err := flatten(nil, norm, &out); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := strings.Join(out[i].Path, "\x00"), strings.Join(out[j].Path, "\x00")
		if pi != pj {
			return pi < pj
		}
		return out[i].Op < out[j].Op
	})
	return out, nil
}

func flatten(path []string, m map[string]any, out *[]Condition) error {
	for k, v := range m {
		if k == "" {
			return invalid("filter: empty field name at %q", strings.Join(path, "."))
		}
		if strings.HasPrefix(k, "$") {
			return invalid("filter: operator %q must be inside a field's object (as {\"field\": {%q: value}})", k, k)
		}
		if strings.ContainsAny(k, "\"\\") {
			return invalid("filter: field name %q contains a quote or backslash", k)
		}
		p := append(append([]string{}, path...), k)
		sub, isObj := v.(map[string]any)
		if !isObj {
			*out = append(*out, Condition{Path: p, Op: "$eq", Value: v})
			continue
		}
		if len(sub) == 0 {
			return invalid("filter: field %q has an empty object (give a value, operators or nested fields)", strings.Join(p, "."))
		}
		ops, fields := 0, 0
		for sk := range sub {
			if strings.HasPrefix(sk, "$") {
				ops++
			} else {
				fields++
			}
		}
		if ops > 0 && fields > 0 {
			return invalid("filter: field %q mixes operators and nested fields", strings.Join(p, "."))
		}
		if fields > 0 {
			if err := flatten(p, sub, out); err != nil {
				return err
			}
			continue
		}
		for op, ov := range sub {
			if !operators[op] {
				return invalid("filter: field %q: unknown operator %q (want $eq, $ne, $gt, $gte, $lt or $lte)", strings.Join(p, "."), op)
			}
			if op != "$eq" && op != "$ne" {
				switch ov.(type) {
				case float64, string:
				default:
					return invalid("filter: field %q: %s wants a number or a string, not %s", strings.Join(p, "."), op, jsonText(ov))
				}
			}
			*out = append(*out, Condition{Path: p, Op: op, Value: ov})
		}
	}
	return nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Matches reports whether value (as JSON decodes it) meets every
// condition.
func Matches(conds []Condition, value map[string]any) bool {
	for _, c := range conds {
		if !c.match(value) {
			return false
		}
	}
	return true
}

// equal compares two JSON-decoded values; scalars without reflection,
// which a filter over many items mostly compares.
func equal(a, b any) bool {
	switch y := b.(type) {
	case string:
		x, ok := a.(string)
		return ok && x == y
	case float64:
		x, ok := a.(float64)
		return ok && x == y
	case bool:
		x, ok := a.(bool)
		return ok && x == y
	case nil:
		return a == nil
	}
	return reflect.DeepEqual(a, b)
}

func (c Condition) match(value map[string]any) bool {
	var cur any = value
	found := true
	for _, k := range c.Path {
		m, ok := cur.(map[string]any)
		if !ok {
			found = false
			break
		}
		if cur, ok = m[k]; !ok {
			found = false
			break
		}
	}
	switch c.Op {
	case "$eq":
		return found && equal(cur, c.Value)
	case "$ne":
		return !found || !equal(cur, c.Value)
	}
	if !found {
		return false
	}
	var cmp int
	switch want := c.Value.(type) {
	case float64:
		got, ok := cur.(float64)
		if !ok {
			return false
		}
		switch {
		case got < want:
			cmp = -1
		case got > want:
			cmp = 1
		}
	case string:
		got, ok := cur.(string)
		if !ok {
			return false
		}
		cmp = strings.Compare(got, want)
	default:
		return false
	}
	switch c.Op {
	case "$gt":
		return cmp > 0
	case "$gte":
		return cmp >= 0
	case "$lt":
		return cmp < 0
	case "$lte":
		return cmp <= 0
	}
	panic(fmt.Sprintf("longterm: unknown operator %q", c.Op))
}
