package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// slowHeader and slowMetadata are the reference decoders the fast paths
// must agree with.
func slowHeader(b []byte) (Header, error) {
	var h Header
	err := json.Unmarshal(b, &h)
	return h, err
}

func slowMetadata(b []byte) (checkpoint.Metadata, error) {
	var md checkpoint.Metadata
	err := json.Unmarshal(b, &md)
	return md, err
}

var headerInputs = []string{
	`{"v":4,"channel_versions":{"messages":12,"step":12},"versions_seen":{"node":{"messages":11}},"updated_channels":["messages","step"]}`,
	`{"v":4,"channel_versions":{},"versions_seen":{},"updated_channels":null}`,
	`{"v":4,"channel_versions":null,"versions_seen":null,"updated_channels":[]}`,
	`{"v":1,"channel_versions":{"a":-3,"b":9007199254740993},"versions_seen":{"x":null,"__input__":{}},"updated_channels":["a"]}`,
	` { "v" : 4 , "channel_versions" : { "a" : 1 } } `,
	`{"v":4,"channel_versions":{"caf\u00e9":1,"a\"b":2}}`,
	`{"v":4,"channel_versions":{"a":1.5}}`,
	`{"V":4}`,
	`{"v":4,"extra":[1,2,{"a":"}"}]}`,
	`{"v":4,"channel_versions":{"a":1e3}}`,
	`{"v":4,"channel_versions":{"a":1}`,
	`{"v":4}garbage`,
	`[]`,
	``,
}

func TestFastHeaderAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range headerInputs {
		checkHeader(t, []byte(in))
	}
}

func checkHeader(t *testing.T, in []byte) {
	t.Helper()
	want, werr := slowHeader(in)
	got, gerr := DecodeHeader(in, "id", time.Time{})
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%q: encoding/json err %v, DecodeHeader err %v", in, werr, gerr)
	}
	if werr != nil {
		return
	}
	if want.ChannelVersions == nil {
		want.ChannelVersions = map[string]int64{}
	}
	if want.VersionsSeen == nil {
		want.VersionsSeen = map[string]map[string]int64{}
	}
	g := Header{V: got.V, ChannelVersions: got.ChannelVersions, VersionsSeen: got.VersionsSeen, UpdatedChannels: got.UpdatedChannels}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("%q:\nfast %#v\njson %#v", in, g, want)
	}
}

var metadataInputs = []string{
	`{"source":"loop","step":11,"parents":{},"tasks":["node"]}`,
	`{"source":"input","step":-1,"parents":null}`,
	`{"source":"update","step":2,"parents":{"":"abc","a:1":"def"},"run_id":"r1","extra":{"score":42,"tags":{"a":[1,"x",null,true]},"none":null}}`,
	`{"source":"fork","step":0,"extra":null}`,
	`{"source":"loop","step":0,"extra":{}}`,
	`{"source":"lo\nop","step":0}`,
	`{"Source":"loop","step":0}`,
	`{"source":"loop","step":1.5}`,
	`{"source":"loop","step":0,"tasks":[]}`,
	`{"source":"loop","step":0,"extra":{"x":"\u003c"}}`,
	`{"source":"loop","step":3,"extra":{"graph":"loop","user":"ann"}}`,
	`{"source":"loop","step":3,"extra":{"a":"x","a":"y"}}`,
	`{"source":"loop","step":3,"extra":{"a":"x","b":1}}`,
	`{"source":"loop","step":3,"extra":{"a":"x\"y"}}`,
	`{"source":"loop","step":3,"extra":{"a":"x",}}`,
	`{"source":"loop","step":3,"extra":{ "a" : "x" } }`,
	`{"source":5}`,
	`{`,
	`null`,
}

func TestFastMetadataAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range metadataInputs {
		checkMetadata(t, []byte(in))
	}
}

func checkMetadata(t *testing.T, in []byte) {
	t.Helper()
	want, werr := slowMetadata(in)
	got, gerr := DecodeMetadata(in)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%q: encoding/json err %v, DecodeMetadata err %v", in, werr, gerr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nfast %#v\njson %#v", in, got, want)
	}
}

func FuzzDecodeHeader(f *testing.F) {
	for _, in := range headerInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkHeader(t, in); checkHeaderVersions(t, in) })
}

func TestHeaderVersionsAgreeWithDecodeHeader(t *testing.T) {
	for _, in := range headerInputs {
		checkHeaderVersions(t, []byte(in))
	}
}

// checkHeaderVersions: wherever DecodeHeader succeeds, AppendHeaderVersions
// gives the same versions (after what dst held).
func checkHeaderVersions(t *testing.T, in []byte) {
	t.Helper()
	cp, err := DecodeHeader(in, "", time.Time{})
	if err != nil {
		return
	}
	got, err := AppendHeaderVersions([]int64{-7}, in)
	if err != nil {
		t.Fatalf("%q: DecodeHeader succeeds, AppendHeaderVersions: %v", in, err)
	}
	var want []int64
	for _, v := range cp.ChannelVersions {
		want = append(want, v)
	}
	slices.Sort(want)
	if got[0] != -7 {
		t.Fatalf("%q: dst overwritten: %v", in, got)
	}
	got = got[1:]
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%q: versions %v, DecodeHeader has %v", in, got, want)
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	for _, in := range metadataInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkMetadata(t, in) })
}

func TestEncodeHeaderMatchesEncodingJSON(t *testing.T) {
	for _, cp := range []checkpoint.Checkpoint{
		{V: 4, ChannelVersions: map[string]int64{"b": 2, "a": 1}, VersionsSeen: map[string]map[string]int64{"n": {"a": 1}, "m": nil, "": {}}, UpdatedChannels: []string{"a", "b"}},
		{},
		{V: 1, ChannelVersions: map[string]int64{}, UpdatedChannels: []string{}},
		{V: 4, ChannelVersions: map[string]int64{"<tag>&\"quote\"\\": -5, "café": 1, "\u2028": 3, "ctl\x01": 4}},
	} {
		got, err := EncodeHeader(&cp)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(Header{V: cp.V, ChannelVersions: cp.ChannelVersions, VersionsSeen: cp.VersionsSeen, UpdatedChannels: cp.UpdatedChannels})
		if string(got) != string(want) {
			t.Errorf("EncodeHeader:\n got %s\nwant %s", got, want)
		}
		checkHeader(t, got)
	}
}

func TestEncodeMetadataIsCanonical(t *testing.T) {
	type pair struct {
		Z int `json:"z"`
		A int `json:"a"`
	}
	md := checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: 1, Extra: map[string]any{"p": pair{1, 2}, "big": int64(1) << 60}}
	b, err := EncodeMetadata(&md)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"source":"loop","step":1,"parents":null,"extra":{"big":1152921504606846976,"p":{"a":2,"z":1}}}`
	if string(b) != want {
		t.Fatalf("EncodeMetadata = %s, want %s", b, want)
	}
	if _, err := EncodeMetadata(&checkpoint.Metadata{Source: "x", Extra: map[string]any{"f": func() {}}}); err == nil {
		t.Fatal("EncodeMetadata of a func: no error")
	}
}

func TestParseTSBytes(t *testing.T) {
	for _, ts := range []time.Time{
		time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.FixedZone("x", 3600)),
	} {
		s := FormatTS(ts)
		got, err := ParseTSBytes([]byte(s))
		if err != nil || !got.Equal(ts) || got.Location() != time.UTC {
			t.Errorf("ParseTSBytes(%s) = %v, %v", s, got, err)
		}
		slow, _ := ParseTS(s)
		if got != slow {
			t.Errorf("ParseTSBytes(%s) = %#v, ParseTS = %#v", s, got, slow)
		}
	}
	for _, s := range []string{"2025-02-30T00:00:00.000000000Z", "2025-13-01T00:00:00.000000000Z", "garbage", "2025-01-02T03:04:05Z"} {
		fast, ferr := ParseTSBytes([]byte(s))
		slow, serr := ParseTS(s)
		if (ferr != nil) != (serr != nil) || fast != slow {
			t.Errorf("%s: fast %v %v, slow %v %v", s, fast, ferr, slow, serr)
		}
	}
}

func TestFilters(t *testing.T) {
	md := checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: 3, RunID: "r", Extra: map[string]any{
		"score": 42, "tags": map[string]any{"a": []any{1, "x"}}, "none": nil, "flag": true, `q"k`: "v",
	}}
	b, err := EncodeMetadata(&md)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		filter map[string]any
		want   bool
	}{
		{nil, true},
		{map[string]any{}, true},
		{map[string]any{"source": "loop"}, true},
		{map[string]any{"source": checkpoint.SourceLoop, "step": 3}, true},
		{map[string]any{"step": 3.0}, true},
		{map[string]any{"step": "3"}, false},
		{map[string]any{"run_id": "r"}, true},
		{map[string]any{"score": int8(42)}, true},
		{map[string]any{"tags": map[string][]any{"a": {1.0, "x"}}}, true},
		{map[string]any{"tags": map[string]any{}}, false},
		{map[string]any{"none": nil}, true},
		{map[string]any{"missing": nil}, true},
		{map[string]any{"score": nil}, false},
		{map[string]any{"flag": true}, true},
		{map[string]any{"flag": 1}, false},
		{map[string]any{`q"k`: "v"}, true},
		{map[string]any{"source": "loop", "missing": 1}, false},
	} {
		conds, err := CompileFilter(tc.filter)
		if err != nil {
			t.Fatalf("%v: %v", tc.filter, err)
		}
		decoded, err := DecodeMetadata(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := MatchMetadata(&decoded, conds); got != tc.want {
			t.Errorf("MatchMetadata(%v) = %v, want %v", tc.filter, got, tc.want)
		}
	}
	if _, err := CompileFilter(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("CompileFilter of a channel: no error")
	}
	if _, ok := SQLPath(Cond{Key: `q"k`}); ok {
		t.Error(`SQLPath accepted a key with a quote`)
	}
	if p, ok := SQLPath(Cond{Key: "a.b"}); !ok || p != `$.extra."a.b"` {
		t.Errorf("SQLPath(a.b) = %q, %v", p, ok)
	}
}

func TestWriteIndex(t *testing.T) {
	for ch, idx := range checkpoint.SpecialIndex {
		if got, special := WriteIndex(7, ch); got != idx || !special {
			t.Errorf("WriteIndex(7, %s) = %d, %v", ch, got, special)
		}
	}
	if got, special := WriteIndex(7, "messages"); got != 7 || special {
		t.Errorf("WriteIndex(7, messages) = %d, %v", got, special)
	}
}

func BenchmarkDecodeHeader(b *testing.B) {
	in := []byte(headerInputs[0])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeHeader(in, "id", time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMetadata(b *testing.B) {
	in := []byte(metadataInputs[0])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeMetadata(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeHeader(b *testing.B) {
	cp := checkpoint.Checkpoint{V: 4, ChannelVersions: map[string]int64{"messages": 12, "step": 12}, VersionsSeen: map[string]map[string]int64{"node": {"messages": 11}}, UpdatedChannels: []string{"messages", "step"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeHeader(&cp); err != nil {
			b.Fatal(err)
		}
	}
}

// Arena copies keep nil and empty apart, hold the bytes given (a value
// larger than a chunk included), and appending to one copy never changes
// the next.
func TestArenaCopies(t *testing.T) {
	var a Arena
	if a.Copy(nil) != nil || a.Copy([]byte{}) == nil {
		t.Fatal("nil and empty not kept apart")
	}
	big := bytes.Repeat([]byte("z"), 100<<10)
	var got [][]byte
	var want [][]byte
	for i := range 300 {
		v := []byte(fmt.Sprintf("value-%d", i))
		if i == 150 {
			v = big
		}
		got = append(got, a.Copy(v))
		want = append(want, v)
	}
	_ = append(got[0], "overflow"...) // capped: must not reach got[1]
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("copy %d = %.20q, want %.20q", i, got[i], want[i])
		}
	}
}

// A repeated key is left to encoding/json, which merges the objects; the
// fast decoders must not take the last one alone.
func TestFastDecodersRefuseRepeatedKeys(t *testing.T) {
	var h Header
	if err := fastHeader([]byte(`{"v":1,"v":2}`), &h, nil); err != errSlow {
		t.Errorf("header with a repeated key: %v, want errSlow", err)
	}
	var md metadataFields
	if err := fastMetadata([]byte(`{"step":1,"step":2}`), &md, nil); err != errSlow {
		t.Errorf("metadata with a repeated key: %v, want errSlow", err)
	}
	if err := fastHeader([]byte(`{"v":1,"V":2}`), &h, nil); err != errSlow {
		t.Errorf("header with a key in other case: %v, want errSlow", err)
	}
}

// TestCanonicalFastPath checks that Extra values json.Marshal writes as they
// are (maps, slices, scalars) come out exactly as the decode-and-encode
// path writes them, including text that is not valid UTF-8 and numbers of
// every kind.
func TestCanonicalFastPath(t *testing.T) {
	slow := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var g any
		if err := dec.Decode(&g); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "a", "b", "<&>", "é", "\u2028", "\xff", "a\xffb", "\x00", `"q"`, "zz", "日本"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(12); {
		case k == 0:
			return nil
		case k == 1:
			return rng.IntN(2) == 0
		case k == 2:
			return rng.Int64() - rng.Int64()
		case k == 3:
			return rng.NormFloat64() * 1e22
		case k == 4:
			return float32(rng.Float64())
		case k == 5:
			return json.Number("1e3")
		case k == 6:
			return []string{texts[rng.IntN(len(texts))], texts[rng.IntN(len(texts))]}
		case k < 9 || depth > 3:
			return texts[rng.IntN(len(texts))]
		case k == 9:
			l := make([]any, rng.IntN(4))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		default:
			m := map[string]any{}
			for range rng.IntN(5) {
				m[texts[rng.IntN(len(texts))]+texts[rng.IntN(len(texts))]] = gen(depth + 1)
			}
			return m
		}
	}
	fast := 0
	for range 3000 {
		v := map[string]any{}
		for range 1 + rng.IntN(4) {
			v[texts[rng.IntN(len(texts))]] = gen(0)
		}
		got, err := canonical(v)
		if err != nil {
			t.Fatal(err)
		}
		if want := slow(v); !bytes.Equal(got, want) {
			t.Fatalf("canonical(%#v)\n got %s\nwant %s", v, got, want)
		}
		if marshalsCanonical(v, 0) {
			fast++
		}
	}
	if fast < 1000 {
		t.Fatalf("only %d of 3000 values took the fast path", fast)
	}
}
