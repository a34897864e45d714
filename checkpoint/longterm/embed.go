package longterm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Embedder turns texts into vectors for semantic search: a model's
// embeddings endpoint, or HashEmbedder offline. Every vector of one
// Embedder has the same length.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HashEmbedder is a deterministic, offline Embedder: a bag of words hashed
// into Dims buckets (lower-cased letters and digits; each word's bucket gets
// +1 or -1 by a second hash bit), normalized to length 1. Texts that share
// words score higher; it knows no synonyms. Meant for tests and demos. Dims
// 0 means 256.
type HashEmbedder struct{ Dims int }

// Embed hashes each text's words.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	dims := h.Dims
	if dims <= 0 {
		dims = 256
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dims)
		words := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		for _, w := range words {
			f := fnv.New64a()
			f.Write([]byte(w))
			s := f.Sum64()
			if s>>63 == 1 {
				v[s%uint64(dims)]--
			} else {
				v[s%uint64(dims)]++
			}
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for j := range v {
				v[j] *= inv
			}
		}
		out[i] = v
	}
	return out, nil
}

// checkField checks an embedded field's path.
func checkField(f string) error {
	if f == "" {
		return invalid("index field is empty (use \"$\" for the whole value)")
	}
	if f != "$" {
		for _, p := range strings.Split(f, ".") {
			if p == "" {
				return invalid("index field %q has an empty part", f)
			}
		}
	}
	return nil
}

// TextsAt returns the texts to embed for value at the field path: "$" is
// the whole value's JSON; "a.b" the field b of the object at a. A string
// is its text, an array gives one text per element, anything else its
// JSON. A missing field gives none.
func TextsAt(value map[string]any, field string) []string {
	var cur any = value
	if field != "$" {
		for _, k := range strings.Split(field, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			if cur, ok = m[k]; !ok {
				return nil
			}
		}
	}
	text := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if arr, ok := cur.([]any); ok && field != "$" {
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			out = append(out, text(e))
		}
		return out
	}
	return []string{text(cur)}
}

// Embed returns the vectors of value's fields (for implementations), none
// when fields is nil.
func Embed(ctx context.Context, e Embedder, value map[string]any, fields []string) ([][]float32, error) {
	if len(fields) == 0 || e == nil {
		return nil, nil
	}
	var texts []string
	for _, f := range fields {
		texts = append(texts, TextsAt(value, f)...)
	}
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding the value: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embedding the value: the embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// EmbedQuery returns the vector of a search's query.
func EmbedQuery(ctx context.Context, e Embedder, query string) ([]float32, error) {
	if e == nil {
		return nil, fmt.Errorf("search query %q: %w (give one in the store's Config)", query, ErrNoEmbedder)
	}
	vecs, err := e.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embedding the search query: %w", err)
	}
	if len(vecs) != 1 {
		return nil, errors.New("embedding the search query: the embedder did not return one vector")
	}
	return vecs[0], nil
}

// BestScore is the best cosine similarity of q to any of vecs (max
// pooling); ok is false when vecs is empty.
func BestScore(q []float32, vecs [][]float32) (score float64, ok bool) {
	for i, v := range vecs {
		s := Cosine(q, v)
		if i == 0 || s > score {
			score = s
		}
	}
	return score, len(vecs) > 0
}

// EncodeVector is v as little-endian float32s, as stores keep vectors.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector appends the float32s of an EncodeVector result to into.
func DecodeVector(b []byte, into []float32) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("stored vector of %d bytes is not float32s", len(b))
	}
	into = slices.Grow(into, len(b)/4)
	for i := 0; i < len(b); i += 4 {
		into = append(into, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return into, nil
}

// Ranking collects a semantic search's matches as a store reads them, one
// row per embedded field of an item, and keeps each item's best score:
// what every store's semantic search shares. The zero value is empty and
// ready.
type Ranking struct {
	at      map[string]int // prefix NUL key → index in ranked
	ranked  []ranked
	vec     []float32
	keyBuf  []byte
	rawBlob []byte
}

// ranked is an item of a Ranking: a search reads thousands, so it is
// kept compact and made an Item only for the page.
type ranked struct {
	prefix, key string
	updated     int64 // Unix nanoseconds
	score       float64
}

// Add scores the item (namespace prefix, key, updated at) by the stored
// vector blob against the query's vector qv. A blob that does not decode
// is an error naming the item.
func (r *Ranking) Add(qv []float32, prefix, key string, updated time.Time, blob []byte) error {
	return r.AddBytes(qv, []byte(prefix), []byte(key), updated.UnixNano(), blob)
}

// AddBytes is Add on bytes a row's scan lends (database/sql's RawBytes),
// updated in Unix nanoseconds: prefix and key are copied only for an item
// not seen before, and none is kept after it returns, so a search that
// reads thousands of vectors need not copy them.
func (r *Ranking) AddBytes(qv []float32, prefix, key []byte, updated int64, blob []byte) error {
	vec, err := DecodeVector(blob, r.vec[:0])
	if err != nil {
		return fmt.Errorf("item %s/%s: %w", prefix, key, err)
	}
	r.vec = vec
	s := Cosine(qv, vec)
	r.keyBuf = append(append(append(r.keyBuf[:0], prefix...), 0), key...)
	if i, ok := r.at[string(r.keyBuf)]; ok { // no allocation for the lookup
		if s > r.ranked[i].score {
			r.ranked[i].score = s
		}
		return nil
	}
	if r.at == nil {
		r.at = map[string]int{}
	}
	r.at[string(r.keyBuf)] = len(r.ranked)
	r.ranked = append(r.ranked, ranked{prefix: string(prefix), key: string(key), updated: updated, score: s})
	return nil
}

// Page returns the items best first (as SortItems orders scored items),
// from offset, at most limit of them: namespace, key, updated time and
// score, no value (the store reads the values of the page alone).
func (r *Ranking) Page(offset, limit int) []Item {
	if offset >= len(r.ranked) || limit <= 0 {
		return nil
	}
	slices.SortFunc(r.ranked, func(a, b ranked) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if a.updated != b.updated {
			if a.updated > b.updated {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	page := r.ranked[offset:min(offset+limit, len(r.ranked))]
	out := make([]Item, len(page))
	for i, e := range page {
		s := e.score
		out[i] = Item{Namespace: ParseNamespace(e.prefix), Key: e.key, UpdatedAt: time.Unix(0, e.updated).UTC(), Score: &s}
	}
	return out
}

// AddRow reads one row of a store's vector query with scan (the prefix,
// the key, updated_at in Unix nanoseconds, the vector blob: the columns in
// that order) and adds it.
func (r *Ranking) AddRow(qv []float32, scan func(dest ...any) error) error {
	var prefix, key string
	var updated int64
	if err := scan(&prefix, &key, &updated, &r.rawBlob); err != nil {
		return err
	}
	return r.AddBytes(qv, []byte(prefix), []byte(key), updated, r.rawBlob)
}

// Rows is the part of a query's rows that AddRows reads; database/sql's
// *sql.Rows and pgx's Rows both have it. The caller still closes them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// AddRows adds every row of a store's vector query (columns as AddRow's)
// and returns the first error, of a row or of the query.
func (r *Ranking) AddRows(qv []float32, rows Rows) error {
	for rows.Next() {
		if err := r.AddRow(qv, rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Fetch reads each item of a page (from Page) with get, which returns the
// stored item of a namespace and key, and gives it the page's score: a
// store reads the values of the page alone, in the page's order.
func Fetch(page []Item, get func(ns Namespace, key string) (Item, error)) ([]Item, error) {
	if len(page) == 0 {
		return nil, nil
	}
	out := make([]Item, 0, len(page))
	for _, c := range page {
		it, err := get(c.Namespace, c.Key)
		if err != nil {
			return nil, err
		}
		it.Score = c.Score
		out = append(out, it)
	}
	return out, nil
}
