package langgraph

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weftstudio/weft/checkpoint"
)

// ext builds one of LangGraph's msgpack extension values as its
// JsonPlusSerializer writes them: code, then the msgpack of the tuple.
func ext(t *testing.T, code int8, parts ...any) []byte {
	t.Helper()
	payload, err := msgpack.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	if err := e.EncodeExtHeader(code, len(payload)); err != nil {
		t.Fatal(err)
	}
	buf.Write(payload)
	return buf.Bytes()
}

// mpMap writes a msgpack map of raw msgpack keys and values.
func mpMap(t *testing.T, kv ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := msgpack.NewEncoder(&buf).EncodeMapLen(len(kv) / 2); err != nil {
		t.Fatal(err)
	}
	for _, b := range kv {
		buf.Write(b)
	}
	return buf.Bytes()
}

func mp(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPythonValues(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"datetime", ext(t, 3, "datetime", "datetime", "2024-01-02T03:04:05+00:00", "fromisoformat"), `{"$datetime":"2024-01-02T03:04:05+00:00"}`},
		{"date", ext(t, 1, "datetime", "date", []any{2024, 1, 2}), `{"$date":"2024-01-02"}`},
		{"time", ext(t, 2, "datetime", "time", map[string]any{"hour": 3, "minute": 4, "second": 5, "microsecond": 6, "tzinfo": nil, "fold": 0}), `{"$time":"03:04:05.000006"}`},
		{"timedelta", ext(t, 1, "datetime", "timedelta", []any{1, 30, 500000}), `{"$timedelta":86430.5}`},
		{"uuid", ext(t, 0, "uuid", "UUID", "0123456789abcdef0123456789abcdef"), `{"$uuid":"01234567-89ab-cdef-0123-456789abcdef"}`},
		{"decimal", ext(t, 0, "decimal", "Decimal", "1.10"), `{"$decimal":"1.10"}`},
		{"set", ext(t, 0, "builtins", "set", []any{"b", "a"}), `{"$set":["a","b"]}`},
		{"frozenset", ext(t, 0, "builtins", "frozenset", []any{2, 1}), `{"$frozenset":[1,2]}`},
		{"deque", ext(t, 0, "collections", "deque", []any{2, 1}), `{"$deque":[2,1]}`},
		{"enum", ext(t, 0, "app.models", "Color", "red"), `{"$enum":"app.models.Color","value":"red"}`},
		{"pydantic v2", ext(t, 5, "app.models", "User", map[string]any{"name": "Ada"}, "model_validate_json"), `{"$pydantic":"app.models.User","value":{"name":"Ada"}}`},
		{"pydantic v1", ext(t, 4, "app.models", "Old", map[string]any{"n": 1}), `{"$pydantic":"app.models.Old","value":{"n":1}}`},
		{"dataclass", ext(t, 2, "app.models", "Point", map[string]any{"x": 1, "y": 2}), `{"$dataclass":"app.models.Point","value":{"x":1,"y":2}}`},
		{"interrupt", ext(t, 2, "langgraph.types", "Interrupt", map[string]any{"value": "ok?", "id": "abc"}), `{"id":"abc","value":"ok?"}`},
		{"send", ext(t, 1, "langgraph.types", "Send", []any{"square", map[string]any{"n": 2}}), `{"arg":{"n":2},"node":"square"}`},
		{"message", ext(t, 5, "langchain_core.messages.human", "HumanMessage", map[string]any{"content": "hi", "id": "h1", "type": "human", "additional_kwargs": map[string]any{}}, "model_validate_json"),
			`{"content":"hi","id":"h1","langchain":{"class":"HumanMessage"},"role":"user"}`},
		{"bytes", mp(t, []byte{1, 2, 3}), `{"$bytes":"AQID"}`},
		{"non-string keys", mpMap(t, mp(t, 1), mp(t, "one"), mp(t, "two"), mp(t, 2)), `{"$dict":[[1,"one"],["two",2]]}`},
		{"unknown extension", ext(t, 42, "x", "Y", 1), `{"$note":"LangGraph extension 42 (x.Y) this reader does not know"}`},
	}
	for _, c := range cases {
		v, err := decodeMsgpack(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, _ := encodeJSON(v)
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := decodeMsgpack([]byte{0x92, 0x01}); err == nil {
		t.Error("a truncated msgpack array decoded")
	}
}

func TestJSValues(t *testing.T) {
	v, err := decodeJSValue([]byte(`{"a":{"lc":2,"type":"undefined"},"b":[1,{"lc":2,"type":"undefined"}],"m":{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":"","id":"ai-1","tool_calls":[{"id":"c1","name":"f","args":{"x":1},"type":"tool_call"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := encodeJSON(v)
	want := `{"b":[1,null],"m":{"content":"","id":"ai-1","langchain":{"class":"AIMessage"},"role":"assistant","tool_calls":[{"args":"{\"x\":1}","id":"c1","name":"f"}]}}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestNotDecoded(t *testing.T) {
	r := &Reader{}
	v, err := r.decodeValue("pickle", []byte("\x80\x04K\x01."))
	if err != nil || !reflect.DeepEqual(v, note("pickled, not decoded (5 bytes)")) {
		t.Errorf("pickle: %v, %v", v, err)
	}
	v, err = r.decodeValue("msgpack+aes", make([]byte, 40))
	if err != nil || !strings.Contains(v.(map[string]any)["$note"].(string), "LANGGRAPH_AES_KEY") {
		t.Errorf("encrypted without a key: %v, %v", v, err)
	}
	r.aesKey = []byte("0123456789abcdef")
	if _, err := r.decodeValue("msgpack+aes", make([]byte, 40)); err == nil {
		t.Error("a value the key does not open decoded")
	}
}

// EAX against the test vectors of its authors (Bellare, Rogaway, Wagner).
func TestEAX(t *testing.T) {
	for _, v := range []struct{ key, nonce, header, ct, tag, msg string }{
		{"233952DEE4D5ED5F9B9C6D6FF80FF478", "62EC67F9C3A4A407FCB2A8C49031A8B3", "6BFB914FD07EAE6B", "", "E037830E8389F27B025A2D6527E79D01", ""},
		{"91945D3F4DCBEE0BF45EF52255F095A4", "BECAF043B0A23D843194BA972C66DEBD", "FA3BFD4806EB53FA", "19DD", "5C4C9331049D0BDAB0277408F67967E5", "F7FB"},
		{"01F74AD64077F2E704C0F60ADA3DD523", "70C3DB4F0D26368400A10ED05D2BFF5E", "234A3463C1264AC6", "D851D5BAE0", "3A59F238A23E39199DC9266626C40F80", "1A47CB4933"},
	} {
		h := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
		block, _ := aes.NewCipher(h(v.key))
		got, err := eaxOpen(block, h(v.nonce), h(v.header), h(v.ct), h(v.tag))
		if err != nil || !bytes.Equal(got, h(v.msg)) {
			t.Errorf("EAX %s: %x, %v; want %s", v.key, got, err, v.msg)
		}
		bad := h(v.tag)
		bad[0] ^= 1
		if _, err := eaxOpen(block, h(v.nonce), h(v.header), h(v.ct), bad); err == nil {
			t.Errorf("EAX %s: a wrong tag was accepted", v.key)
		}
	}
	// The layout LangGraph stores: nonce + tag + ciphertext, no header.
	key := []byte("0123456789abcdef0123456789abcdef")
	block, _ := aes.NewCipher(key)
	nonce := bytes.Repeat([]byte{7}, 16)
	plain := mp(t, "hello")
	ct := make([]byte, len(plain))
	n := omac(block, 0, nonce)
	ctrXOR(block, n, ct, plain)
	c := omac(block, 2, ct)
	hh := omac(block, 1, nil)
	tag := make([]byte, 16)
	for i := range tag {
		tag[i] = n[i] ^ hh[i] ^ c[i]
	}
	r := &Reader{aesKey: key}
	v, err := r.decodeValue("msgpack+aes", append(append(append([]byte{}, nonce...), tag...), ct...))
	if err != nil || v != "hello" {
		t.Errorf("encrypted value: %v, %v", v, err)
	}
}

// A damaged checkpoint row marks that checkpoint unreadable with the
// reason; the rest of the thread and the store still read.
func TestDamagedRow(t *testing.T) {
	ctx := context.Background()
	path := gunzip(t, t.TempDir(), "py-sqlite.sqlite")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	if err := db.QueryRow(`SELECT checkpoint_id FROM checkpoints WHERE thread_id = 'chain' AND checkpoint_ns = '' ORDER BY checkpoint_id LIMIT 1 OFFSET 1`).Scan(&victim); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE checkpoints SET checkpoint = x'92c1' WHERE thread_id = 'chain' AND checkpoint_id = ?`, victim); err != nil {
		t.Fatal(err)
	}
	// The head of another thread: metadata that is not JSON, and a write
	// whose msgpack is cut short.
	if _, err := db.Exec(`UPDATE checkpoints SET metadata = x'7b2273' WHERE thread_id = 'bulk-007' AND checkpoint_ns = ''
		AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 'bulk-007')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE writes SET value = x'93a3' WHERE thread_id = 'node-error' AND channel = 'results'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.Remove(filepath.Join(filepath.Dir(path), "py-sqlite.sqlite-wal"))
	r, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	th, err := r.ReadThread(ctx, "chain")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range th.Checkpoints {
		if c.Err != nil {
			bad++
			if c.ID != victim || !strings.Contains(c.Err.Error(), "msgpack") {
				t.Errorf("checkpoint %s: %v", c.ID, c.Err)
			}
		}
	}
	if bad != 1 || len(th.History(false)) != 5 {
		t.Errorf("%d unreadable checkpoints, %d in history; want 1 of 5", bad, len(th.History(false)))
	}
	if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "chain", CheckpointID: victim}); err == nil {
		t.Error("Get of the damaged checkpoint succeeded")
	}
	if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "chain"}); err != nil {
		t.Errorf("the thread's head: %v", err)
	}
	threads, err := r.ListThreads(ctx, 0)
	if err != nil || len(threads) != 214 {
		t.Errorf("%d threads, %v", len(threads), err)
	}
	for _, ti := range threads {
		if (ti.Err != nil) != (ti.ThreadID == "bulk-007") {
			t.Errorf("thread %s: listing error %v", ti.ThreadID, ti.Err)
		}
	}
	ne, err := r.ReadThread(ctx, "node-error")
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, c := range ne.Checkpoints {
		for _, w := range c.Writes {
			if w.Channel == "results" {
				if m, ok := w.Value.(map[string]any); !ok || !strings.Contains(fmt.Sprint(m["$note"]), "unreadable") {
					t.Errorf("a damaged write reads as %v", w.Value)
				}
				notes++
			}
		}
		if c.Err != nil {
			t.Errorf("checkpoint %s of node-error: %v", c.ID, c.Err)
		}
	}
	if notes == 0 {
		t.Error("no damaged write found")
	}
}

func TestReadOnly(t *testing.T) {
	r := &Reader{}
	ctx := context.Background()
	_, err1 := r.Put(ctx, checkpoint.Ref{ThreadID: "t"}, checkpoint.Checkpoint{}, checkpoint.Metadata{}, nil)
	err2 := r.PutWrites(ctx, checkpoint.Ref{ThreadID: "t"}, nil, "x", "")
	err3 := r.DeleteThread(ctx, "t")
	for _, err := range []error{err1, err2, err3} {
		if !errors.Is(err, ErrReadOnly) || !errors.Is(err, checkpoint.ErrReadOnly) || !strings.Contains(err.Error(), "LangGraph server") {
			t.Errorf("write: %v", err)
		}
	}
}

func ctrXOR(block cipher.Block, iv, dst, src []byte) { cipher.NewCTR(block, iv).XORKeyStream(dst, src) }

// Watch tells of a commit another connection (a LangGraph process) makes.
func TestWatchSQLite(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchEvery = 20 * time.Millisecond
	path := gunzip(t, t.TempDir(), "js-sqlite.sqlite")
	r, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("a change was told before anything changed")
	case <-time.After(100 * time.Millisecond):
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO writes VALUES ('chain', '', 'x', 't', 0, 'c', 'json', '1')`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the change was not told")
	}
}

// Get reads one checkpoint (and its parent); it gives what the whole
// thread gives, for every checkpoint of both SQLite fixtures (the
// PostgreSQL ones: TestGetMatchesThreadPostgres).
func TestGetMatchesThread(t *testing.T) {
	for _, name := range []string{"py-sqlite", "js-sqlite"} {
		r, err := OpenSQLite(context.Background(), gunzip(t, t.TempDir(), name+".sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		getMatchesThread(t, name, r)
		r.Close()
	}
}

func getMatchesThread(t *testing.T, name string, r *Reader) {
	t.Helper()
	ctx := context.Background()
	if _, ok := r.b.(pointReader); !ok {
		t.Fatalf("%s: Get reads the whole thread", name)
	}
	threads, err := r.ListThreads(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, shared := 0, 0
	for _, ti := range threads {
		th, err := r.ReadThread(ctx, ti.ThreadID)
		if err != nil {
			t.Fatal(err)
		}
		heads := map[string]bool{}
		for _, c := range th.Checkpoints {
			want, err := c.Tuple(th.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c.Shared != nil {
				shared++
			}
			refs := []checkpoint.Ref{want.Ref}
			if !heads[c.NS] { // the newest of its namespace
				heads[c.NS] = true
				refs = append(refs, checkpoint.Ref{ThreadID: th.ID, NS: c.NS})
			}
			for _, ref := range refs {
				got, err := r.Get(ctx, ref)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: Get(%+v) = %+v, %v\nthe thread has %+v", name, ref, got, err, want)
				}
				n++
			}
		}
	}
	if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "chain", CheckpointID: "no-such"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("%s: Get of a missing checkpoint: %v", name, err)
	}
	if _, err := r.Get(ctx, checkpoint.Ref{ThreadID: "no-such-thread"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("%s: Get of a missing thread: %v", name, err)
	}
	if n < 672+214 { // every checkpoint, and every thread's head
		t.Errorf("%s: only %d checkpoints compared", name, n)
	}
	if r.Kind() == JSPostgres && shared == 0 {
		t.Errorf("%s: no checkpoint reads a sibling's blob; update-fork's fork does", name)
	}
}

// TestPlainJSONIsTheDecoders checks the short cut for plain strings and
// integers against encoding/json on the forms around its edges: whatever
// it takes must decode as the decoder decodes it, and what it declines
// (escapes, bad UTF-8, fractions, leading zeros, spaces) goes to the
// decoder.
func TestPlainJSONIsTheDecoders(t *testing.T) {
	for _, in := range []string{
		`"note 1 note 1"`, `""`, `"héllo ✓"`, `"a\"b"`, `"a\\b"`, `"\u00e9"`, "\"tab\there\"", "\"\xff\xfe\"",
		`"`, `"a`, `a"`, `0`, `-0`, `7`, `-42`, `123456789012345678`, `1234567890123456789`, `01`, `-`, `1.5`,
		`1e3`, `-01`, ` 5`, `5 `, `true`, `null`, `[1]`, `{"lc":2,"type":"undefined"}`,
	} {
		fast, took := plainJSON([]byte(in))
		d := json.NewDecoder(strings.NewReader(in))
		d.UseNumber()
		var slow any
		err := d.Decode(&slow)
		if took {
			if err != nil || d.More() {
				t.Errorf("%q: taken as %#v, which the decoder refuses (%v)", in, fast, err)
			} else if !reflect.DeepEqual(fast, slow) {
				t.Errorf("%q: taken as %#v, the decoder says %#v", in, fast, slow)
			}
		}
		got, gerr := decodeJSValue([]byte(in))
		if err == nil && !d.More() {
			if want := reviveJS(slow); gerr != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%q: decodeJSValue %#v (%v), want %#v", in, got, gerr, want)
			}
		} else if gerr == nil {
			t.Errorf("%q: decodeJSValue took %#v, the decoder refuses it", in, got)
		}
	}
	if _, took := plainJSON([]byte(`"note"`)); !took {
		t.Error("a plain string went to the decoder")
	}
}
