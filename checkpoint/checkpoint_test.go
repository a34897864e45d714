package checkpoint

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Ids are UUIDv7, strictly increasing within a process and never repeated,
// across many refills of the pooled random buffer.
func TestNewIDIncreasingV7(t *testing.T) {
	const n = 5000 // 160 refills of the 512-byte buffer
	prev := ""
	seen := make(map[string]bool, n)
	for i := range n {
		id := NewID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("id %d = %q: not a UUIDv7 (%v)", i, id, err)
		}
		if id <= prev || seen[id] {
			t.Fatalf("id %d = %q after %q", i, id, prev)
		}
		seen[id] = true
		prev = id
	}
}

// The pooled reader never serves the same bits twice, including reads that
// straddle a refill, and leaves no served bits in its buffer.
func TestPooledRandomServesFreshBits(t *testing.T) {
	var r pooledRandom
	var all [][]byte
	for _, size := range []int{16, 500, 16, 1000, 7} {
		p := make([]byte, size)
		if n, err := r.Read(p); n != size || err != nil {
			t.Fatalf("Read(%d) = %d, %v", size, n, err)
		}
		all = append(all, p)
	}
	joined := bytes.Join(all, nil)
	for i := 0; i+16 <= len(joined); i += 16 {
		if bytes.Contains(joined[i+16:], joined[i:i+16]) {
			t.Fatalf("16 bytes at %d are served twice", i)
		}
	}
	if !bytes.Equal(r.buf[:r.off], make([]byte, r.off)) {
		t.Fatal("served bytes are still in the buffer")
	}
}

// NewIDAfter sorts after its parent whatever the clock: a parent minted a
// minute ahead, a UUIDv6 parent (LangGraph's), and a parent whose time bits
// carry over all get children that sort after them and are valid UUIDs of
// the parent's version.
// Ids minted one after another sort in that order, even within one
// clock tick: the thread list's "newest first" depends on it.
func TestNewIDsGrow(t *testing.T) {
	prev := NewID()
	now := time.Now()
	for i := range 10000 {
		var id string
		if i%2 == 0 {
			id = NewID()
		} else {
			id = NewIDAfter("", now) // the same instant every time
		}
		if id <= prev {
			t.Fatalf("id %d %s does not sort after %s", i, id, prev)
		}
		prev = id
	}
}

func TestNewIDAfterSortsAfterParent(t *testing.T) {
	now := time.Now()
	// Before anything ahead was minted: this process's ids only grow.
	if id := NewIDAfter(NewIDAfter("", now.Add(-time.Minute)), now); id[:13] != NewIDAfter("", now)[:13] {
		t.Errorf("a parent in the past: id %s is not of now", id)
	}
	ahead := NewIDAfter("", now.Add(time.Minute))
	for _, parent := range []string{ahead, "1ef8c1a4-2b3c-6d4e-8f00-112233445566", "01a23710-5823-7fff-96d5-3f90c270af8a"} {
		prev := parent
		for range 5 {
			id := NewIDAfter(prev, now)
			if id <= prev {
				t.Fatalf("NewIDAfter(%s) = %s, which does not sort after it", prev, id)
			}
			u, err := uuid.Parse(id)
			p, _ := uuid.Parse(parent)
			if err != nil || u.Version() != p.Version() || u.Variant() != uuid.RFC4122 {
				t.Fatalf("NewIDAfter(%s) = %s: not a UUID of version %d (%v)", prev, id, p.Version(), err)
			}
			prev = id
		}
	}
}
