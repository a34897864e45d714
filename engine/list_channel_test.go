package engine

import (
	"math/rand/v2"
	"reflect"
	goruntime "runtime"
	"slices"
	"testing"
)

// TestListChannelMatchesAppend drives a List channel and the plain reducer
// with Append through the same random steps (several writes a step,
// Overwrite, copies that go on separately, a write of the wrong type) and
// checks after every step that they hold the same list, and that every
// value either handed out before is still what it was then: the list's
// buffer is appended to in place, which must never show.
func TestListChannelMatchesAppend(t *testing.T) {
	spec := List[int]("l").s
	plain := Reducer("l", "append", Append[int]).s
	type handed struct {
		v    []int
		want []int
	}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		pairs := [][2]channel{{spec.newCh(), plain.newCh()}}
		var out []handed
		next := 0
		for step := range 200 {
			i := r.IntN(len(pairs))
			got, want := pairs[i][0], pairs[i][1]
			var vals []any
			for range r.IntN(4) {
				switch k := r.IntN(20); {
				case k == 0:
					vals = append(vals, Overwrite{Value: []int{-next}})
				case k == 1 && seed%4 == 0:
					vals = append(vals, "not a list")
				default:
					add := make([]int, r.IntN(3))
					for j := range add {
						next++
						add[j] = next
					}
					vals = append(vals, add)
				}
			}
			c1, err1 := got.update(vals)
			c2, err2 := want.update(vals)
			if (err1 == nil) != (err2 == nil) || c1 != c2 {
				t.Fatalf("seed %d step %d: list (%v, %v), reducer (%v, %v)", seed, step, c1, err1, c2, err2)
			}
			if err1 != nil {
				if err1.Error() != err2.Error() {
					t.Fatalf("seed %d step %d: list says %q, reducer %q", seed, step, err1, err2)
				}
				// A failed step fails the run; go on from the reducer's
				// state, as a resumed run would from its checkpoint.
				b, _, _ := want.save()
				if err := got.load(b); err != nil {
					t.Fatal(err)
				}
				if err := want.load(b); err != nil {
					t.Fatal(err)
				}
			}
			v1, ok1 := got.get()
			v2, ok2 := want.get()
			if ok1 != ok2 || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("seed %d step %d: list %v %v, reducer %v %v", seed, step, v1, ok1, v2, ok2)
			}
			if l, ok := v1.([]int); ok {
				out = append(out, handed{l, slices.Clone(l)})
				if r.IntN(3) == 0 { // a reader appending to what it got
					_ = append(l, -1)
				}
			}
			if r.IntN(10) == 0 {
				pairs = append(pairs, [2]channel{got.copy(), want.copy()})
			}
			for _, h := range out {
				if !slices.Equal(h.v, h.want) {
					t.Fatalf("seed %d step %d: a value handed out changed from %v to %v", seed, step, h.want, h.v)
				}
			}
		}
	}
}

// TestListChannelCopiesWhatItAdds: a list grown by one item a step for
// 2,000 steps allocates about as many bytes as it ends up holding, not a
// copy of itself every step (32 MB for this one with Append).
func TestListChannelCopiesWhatItAdds(t *testing.T) {
	c := List[string]("l").s.newCh()
	add := []any{[]string{"x"}}
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range 2000 {
		if _, err := c.update(add); err != nil {
			t.Fatal(err)
		}
	}
	goruntime.ReadMemStats(&after)
	if v, _ := c.get(); len(v.([]string)) != 2000 {
		t.Fatalf("%d items", len(v.([]string)))
	}
	// The list itself is 32 KB; growing by doubling copies about as much
	// again, and each step boxes the new value (24 bytes).
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("2,000 appends allocated %d bytes", n)
	}
}
