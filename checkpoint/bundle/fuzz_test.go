package bundle_test

import (
	"bytes"
	"testing"

	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

// FuzzImportBundle feeds mutated bundles to Import: each is imported whole
// or refused with an error, never a panic, and what was imported exports
// again. Seeds: a real thread (runtime) and the files under testdata/fuzz.
//
//	go test -run '^$' -fuzz FuzzImportBundle -fuzztime 120000x -fuzzminimizetime 10x ./checkpoint/bundle
func FuzzImportBundle(f *testing.F) {
	src := memory.New()
	w, err := examples.Writer(src)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := w.Graph.Invoke(f.Context(), w.Example, engine.WithThread("w")); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := bundle.Export(f.Context(), src, "w", &buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"weft.thread-bundle","version":1,"thread_id":"x","checkpoints":[{"id":"1","metadata":{"source":"input","step":-1},"values":{"a":{"base64":"AQID"}}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		dst := memory.New()
		id, err := bundle.Import(t.Context(), dst, bytes.NewReader(doc))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := bundle.Export(t.Context(), dst, id, &out); err != nil {
			t.Fatalf("thread %q imported but does not export: %v", id, err)
		}
	})
}
