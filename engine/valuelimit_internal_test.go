package engine

import (
	"reflect"
	"strings"
	"testing"
)

// The readers WithValueLimit uses step over what they leave out without
// decoding it, yet find the same members encoding/json does: strings
// holding quotes, backslashes and brackets, nested values, white space,
// members in any order.
func TestDecodeUpToFindsWhatDecodingFinds(t *testing.T) {
	payloads := []any{
		`a "quoted" \ back\\slash \" ] } [ {`,
		map[string]any{"draft": `\\"`, "n": 1.5e3, "list": []any{true, false, nil, "]"}},
		[]any{},
		"",
		nil,
	}
	in := make([]PendingInterrupt, len(payloads))
	for i, p := range payloads {
		in[i] = PendingInterrupt{ID: strings.Repeat("i", i+1), Value: p, Node: "n\"ode", TaskID: "t", NS: "sub:1"}
	}
	b, err := encodeInterrupts(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeInterrupts(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeInterruptsUpTo(b, len(b))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeInterruptsUpTo: %v, %+v\nwant %+v", err, got, want)
	}
	small, err := decodeInterruptsUpTo(b, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range small {
		_, left := in.Value.(Omitted)
		if left != (want[i].Value != nil) || in.ID != want[i].ID || in.Node != want[i].Node || in.NS != want[i].NS { // null is 4 bytes: kept
			t.Errorf("interrupt %d with limit 8: %+v", i, in)
		}
	}
	spaced := " [ {\"task_id\" : \"t\" ,\n \"value\" : { \"type\" : \"\" , \"value\" : [ 1 , \"\\\"]\" ] } , \"id\":\"x\", \"node\":\"n\", \"extra\": {\"a\": [[]]}} ] "
	got, err = decodeInterruptsUpTo([]byte(spaced), 1<<20)
	if err != nil || len(got) != 1 || got[0].ID != "x" || got[0].TaskID != "t" || !reflect.DeepEqual(got[0].Value, []any{1.0, `"]`}) {
		t.Fatalf("spaced document: %v, %+v", err, got)
	}
}

// What is not a stored list of objects is refused with an error naming the
// fault, not read past.
func TestDecodeUpToRefusesBrokenDocuments(t *testing.T) {
	for _, doc := range []string{
		``,
		`"x"`,
		`[{"id":"x","value":"unterminated}]`,
		`[{"id":"x","value":[1,2}]`,
		`[{"id":"x","value":{"a":1]}]`,
		`[{"id":"x"}] trailing`,
		`[{"id":"x"},]`,
		`[{"id":"x" "value":1}]`,
		`[{"id" "x"}]`,
		`[{id:"x"}]`,
		`[{"id":"x"}`,
		`[{"id":"x","value":1,}]`,
		`[{"id":"x","value":]}]`,
		`[{"id":"x","value":"\"}]`,
	} {
		if got, err := decodeInterruptsUpTo([]byte(doc), 1); err == nil {
			t.Errorf("%q: read as %+v, want an error", doc, got)
		}
	}
}
