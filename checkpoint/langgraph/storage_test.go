package langgraph

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
)

// The storage report's numbers are checked against what the databases
// themselves sum: SQL over the raw tables, through another connection.

// wantSizes are a store's sizes as SQL computes them.
type wantSizes struct {
	threads, checkpoints, writes int64
	writeBytes                   int64
	rowBytes                     int64 // ids, bodies and metadata of the checkpoint rows
	blobs, blobBytes             int64 // PostgreSQL's checkpoint_blobs
	inRow, inRowBytes, dupBytes  int64 // values inside rows; -1 when SQL cannot walk the body
	// the newest checkpoint of each thread and namespace: its rows (with
	// the values inside), the blobs its versions name, its writes
	latestRows, latestBlobs, latestWrites int64
}

func checkStorage(t *testing.T, r *Reader, want wantSizes) *Storage {
	t.Helper()
	ctx := context.Background()
	s, err := r.StorageReport(ctx, checkpoint.StorageOptions{Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Threads != want.threads || s.Checkpoints != want.checkpoints || s.Writes != want.writes || s.Bytes.Writes != want.writeBytes {
		t.Errorf("threads %d, checkpoints %d, writes %d of %d bytes; SQL: %d, %d, %d of %d",
			s.Threads, s.Checkpoints, s.Writes, s.Bytes.Writes, want.threads, want.checkpoints, want.writes, want.writeBytes)
	}
	if got := s.Bytes.Headers + s.State.Bytes; got != want.rowBytes {
		t.Errorf("headers %d + values in rows %d = %d; SQL sums the rows to %d", s.Bytes.Headers, s.State.Bytes, got, want.rowBytes)
	}
	if got := s.Bytes.Values - s.State.Bytes; got != want.blobBytes || s.Values-s.State.Values != want.blobs {
		t.Errorf("values outside rows: %d of %d bytes; SQL: %d blobs of %d bytes", s.Values-s.State.Values, got, want.blobs, want.blobBytes)
	}
	if want.inRow >= 0 && (s.State.Values != want.inRow || s.State.Bytes != want.inRowBytes || s.State.DuplicatedBytes != want.dupBytes) {
		t.Errorf("state in rows: %d values of %d bytes, %d duplicated; SQL: %d of %d, %d duplicated",
			s.State.Values, s.State.Bytes, s.State.DuplicatedBytes, want.inRow, want.inRowBytes, want.dupBytes)
	}
	if got := s.Latest.Headers + s.Latest.Values; got != want.latestRows+want.latestBlobs || s.Latest.Writes != want.latestWrites || s.Latest.Total() >= s.Bytes.Total() {
		t.Errorf("latest checkpoints: %+v; SQL: rows and their values %d, writes %d", s.Latest, want.latestRows+want.latestBlobs, want.latestWrites)
	}
	if s.Layout != r.Kind() || len(s.Notes) == 0 || !strings.Contains(strings.Join(s.Notes, " "), "only reads") {
		t.Errorf("layout %q, notes %q", s.Layout, s.Notes)
	}
	// The channels add up to the totals.
	var ch checkpoint.ChannelBytes
	for _, c := range s.Channels {
		ch.ValueBytes += c.ValueBytes
		ch.WriteBytes += c.WriteBytes
	}
	if ch.ValueBytes != s.Bytes.Values || ch.WriteBytes != s.Bytes.Writes {
		t.Errorf("channels hold %d value and %d write bytes; totals %d and %d", ch.ValueBytes, ch.WriteBytes, s.Bytes.Values, s.Bytes.Writes)
	}
	// large-value holds the most, its 1 MiB string the largest value.
	if len(s.LargestThreads) == 0 || s.LargestThreads[0].ThreadID != "large-value" ||
		len(s.LargestValues) == 0 || s.LargestValues[0].Channel != "blob" || s.LargestValues[0].Bytes < 1<<20 {
		t.Errorf("largest threads %+v, values %+v", s.LargestThreads, s.LargestValues)
	}
	// checkpoint.StorageReporter answers the same.
	sum, err := r.StorageSummary(ctx, checkpoint.StorageOptions{Deep: true})
	if err != nil || !reflect.DeepEqual(*sum, s.StorageSummary) {
		t.Errorf("StorageSummary differs from StorageReport's (%v)", err)
	}

	// A thread's report: its checkpoints add up to it.
	for _, thread := range []string{"large-value", "update-fork", "subgraph-interrupt"} {
		tr, err := r.ThreadStorageReport(ctx, thread, checkpoint.StorageOptions{Checkpoints: -1})
		if err != nil {
			t.Fatal(err)
		}
		var b checkpoint.ByteCounts
		for _, c := range tr.Newest {
			b = b.Add(c.Bytes)
		}
		b.Values += tr.Unreferenced.Bytes
		if b != tr.Bytes || int64(len(tr.Newest)) != tr.Checkpoints {
			t.Errorf("%s: checkpoints add to %+v (+%d unreferenced), thread %+v", thread, b, tr.Unreferenced.Bytes, tr.Bytes)
		}
		if thread == "subgraph-interrupt" && tr.Namespaces != 2 {
			t.Errorf("%s: %d namespaces, want the root and review's", thread, tr.Namespaces)
		}
	}
	if _, err := r.ThreadStorage(ctx, "no-such-thread", checkpoint.StorageOptions{}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("a missing thread: %v", err)
	}
	return s
}

func TestStorageSQLite(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"py-sqlite", "js-sqlite"} {
		t.Run(name, func(t *testing.T) {
			path := gunzip(t, t.TempDir(), name+".sqlite")
			db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var w wantSizes
			if err := db.QueryRow(`SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints), (SELECT count(*) FROM checkpoints),
				(SELECT count(*) FROM writes), (SELECT ifnull(sum(length(value)), 0) FROM writes),
				(SELECT sum(length(checkpoint_id) + ifnull(length(parent_checkpoint_id), 0) + length(checkpoint) + length(metadata)) FROM checkpoints)`).
				Scan(&w.threads, &w.checkpoints, &w.writes, &w.writeBytes, &w.rowBytes); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`WITH h AS (SELECT thread_id, checkpoint_ns, max(checkpoint_id) AS id FROM checkpoints GROUP BY 1, 2)
				SELECT (SELECT sum(length(c.checkpoint_id) + ifnull(length(c.parent_checkpoint_id), 0) + length(c.checkpoint) + length(c.metadata))
					FROM checkpoints c JOIN h ON c.thread_id = h.thread_id AND c.checkpoint_ns = h.checkpoint_ns AND c.checkpoint_id = h.id),
				(SELECT ifnull(sum(length(w.value)), 0) FROM writes w JOIN h ON w.thread_id = h.thread_id AND w.checkpoint_ns = h.checkpoint_ns AND w.checkpoint_id = h.id)`).
				Scan(&w.latestRows, &w.latestWrites); err != nil {
				t.Fatal(err)
			}
			w.inRow = -1
			if name == "js-sqlite" {
				// JS bodies are JSON: SQLite's json_each walks them.
				// A value is duplicated when the parent's row has the
				// channel at the same version.
				err := db.QueryRow(`WITH v AS (SELECT c.thread_id t, c.checkpoint_ns ns, c.checkpoint_id id, c.parent_checkpoint_id par, e.key k,
					json_extract(CAST(c.checkpoint AS TEXT), '$.channel_versions."' || e.key || '"') ver,
					CASE e.type WHEN 'null' THEN 4 WHEN 'true' THEN 4 WHEN 'false' THEN 5
						WHEN 'text' THEN length(CAST(json_quote(e.value) AS BLOB)) ELSE length(CAST(e.value AS BLOB)) END n
					FROM checkpoints c, json_each(CAST(c.checkpoint AS TEXT), '$.channel_values') e)
				SELECT count(*), sum(n), (SELECT ifnull(sum(a.n), 0) FROM v a JOIN v b ON b.t = a.t AND b.ns = a.ns AND b.id = a.par AND b.k = a.k AND b.ver IS a.ver) FROM v`).
					Scan(&w.inRow, &w.inRowBytes, &w.dupBytes)
				if err != nil {
					t.Fatal(err)
				}
			}
			r, err := OpenSQLite(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s := checkStorage(t, r, w)
			if s.State.DuplicatedBytes == 0 || s.MostDuplicated[0].ThreadID != "large-value" {
				t.Errorf("duplicated state %d, most in %+v", s.State.DuplicatedBytes, s.MostDuplicated)
			}

			// The 1 MiB string: its write and each row's copy are the
			// same bytes, and every row after the one it first appears
			// in is a copy.
			var rows, write int64
			if err := db.QueryRow(`SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = 'large-value' AND length(checkpoint) > 1048576),
				(SELECT length(value) FROM writes WHERE thread_id = 'large-value' AND channel = 'blob')`).Scan(&rows, &write); err != nil {
				t.Fatal(err)
			}
			tr, err := r.ThreadStorageReport(ctx, "large-value", checkpoint.StorageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var blob ChannelState
			for _, c := range tr.DuplicatedChannels {
				if c.Channel == "blob" {
					blob = c
				}
			}
			if rows < 2 || blob.Values != rows || blob.Bytes != rows*write || blob.DuplicatedBytes != (rows-1)*write {
				t.Errorf("blob in rows: %+v; SQL: %d rows carry it, its write is %d bytes", blob, rows, write)
			}
		})
	}
}

func TestStoragePostgres(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"py-postgres", "js-postgres"} {
		t.Run(name, func(t *testing.T) {
			dsn := restoreDump(t, name)
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var w wantSizes
			err = conn.QueryRow(ctx, `WITH v AS (SELECT c.thread_id t, c.checkpoint_ns ns, c.checkpoint_id id, c.parent_checkpoint_id par, e.key k,
					c.checkpoint->'channel_versions'->>e.key ver, octet_length(e.value::text) n
					FROM checkpoints c, jsonb_each(coalesce(c.checkpoint->'channel_values', '{}')) e)
				SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints), (SELECT count(*) FROM checkpoints),
				(SELECT count(*) FROM checkpoint_writes), (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes),
				(SELECT sum(octet_length(checkpoint_id) + coalesce(octet_length(parent_checkpoint_id), 0) + octet_length(checkpoint::text) + octet_length(metadata::text)) FROM checkpoints),
				(SELECT count(*) FROM checkpoint_blobs), (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs),
				(SELECT count(*) FROM v), (SELECT coalesce(sum(n), 0) FROM v),
				(SELECT coalesce(sum(a.n), 0) FROM v a JOIN v b ON b.t = a.t AND b.ns = a.ns AND b.id = a.par AND b.k = a.k AND b.ver IS NOT DISTINCT FROM a.ver)`).
				Scan(&w.threads, &w.checkpoints, &w.writes, &w.writeBytes, &w.rowBytes, &w.blobs, &w.blobBytes, &w.inRow, &w.inRowBytes, &w.dupBytes)
			if err != nil {
				t.Fatal(err)
			}
			// The newest checkpoints' rows, the blobs their versions name
			// (those of channels not inline), their writes.
			err = conn.QueryRow(ctx, `WITH h AS (SELECT c.* FROM checkpoints c WHERE c.checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints m
					WHERE m.thread_id = c.thread_id AND m.checkpoint_ns = c.checkpoint_ns))
				SELECT (SELECT sum(octet_length(checkpoint_id) + coalesce(octet_length(parent_checkpoint_id), 0) + octet_length(checkpoint::text) + octet_length(metadata::text)) FROM h),
				(SELECT coalesce(sum(octet_length(b.blob)), 0) FROM h, jsonb_each_text(h.checkpoint->'channel_versions') v
					JOIN checkpoint_blobs b ON b.channel = v.key AND b.version = v.value
					WHERE b.thread_id = h.thread_id AND b.checkpoint_ns = h.checkpoint_ns AND NOT coalesce(h.checkpoint->'channel_values', '{}') ? v.key),
				(SELECT coalesce(sum(octet_length(w.blob)), 0) FROM checkpoint_writes w JOIN h ON w.thread_id = h.thread_id AND w.checkpoint_ns = h.checkpoint_ns AND w.checkpoint_id = h.checkpoint_id)`).
				Scan(&w.latestRows, &w.latestBlobs, &w.latestWrites)
			if err != nil {
				t.Fatal(err)
			}
			if name == "js-postgres" && w.inRow != 0 || name == "py-postgres" && w.inRow == 0 {
				t.Fatalf("%s: %d values inline in checkpoint rows", name, w.inRow)
			}
			r, err := OpenPostgres(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			s := checkStorage(t, r, w)
			if len(s.Tables) < 3 || s.FileBytes == 0 {
				t.Errorf("tables %+v, file bytes %d", s.Tables, s.FileBytes)
			}
		})
	}
}

// The JSON scanner measures each value as encoding/json delimits it, and
// refuses what is not JSON.
func TestMeasureJSON(t *testing.T) {
	body := `{ "v": 4, "channel_values" : { "a\u00e9": "x\"y\\z", "b": [1, -2.5e3, {"c": [true, false, null]}] , "e": {} , "f": [], "g": "q\\" },
		"channel_versions": {"a\u00e9": "00000000000000000000000000000002.0.5", "b": 3}, "versions_seen": {"n": {"a": 1}} }`
	vals, versions, err := measureJSON([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Values map[string]json.RawMessage `json:"channel_values"`
	}
	if err := json.Unmarshal([]byte(body), &ref); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, v := range vals {
		got[v.channel] = v.bytes
	}
	for ch, raw := range ref.Values {
		if got[ch] != int64(len(raw)) {
			t.Errorf("%q: %d bytes, encoding/json %d", ch, got[ch], len(raw))
		}
	}
	if len(got) != len(ref.Values) || versions["aé"] != "00000000000000000000000000000002.0.5" || versions["b"] != "3" {
		t.Errorf("values %v, versions %v", got, versions)
	}
	for _, bad := range []string{`{"channel_values": {"a": tru}}`, `{"channel_values": {"a": 1,}}`, `{"a": "x`, `{"a": 1} 2`, `[1]`, `{"a": 01x}`, `{"a": "x\"}`, `{"a": "x\\\"}`} {
		if _, _, err := measureJSON([]byte(bad)); err == nil {
			t.Errorf("measureJSON(%q) accepted it", bad)
		}
	}
}
