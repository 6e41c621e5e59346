package migrate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Version ids the target cannot keep (issue 43). shardstore keeps a
// version id it could have made (32 hex digits, the first 16 the
// version's time in Unix nanoseconds) or a lower-case UUID as MinIO
// makes them; AWS S3's ids (opaque, up to 1,024 bytes), Ceph RGW's and
// most others are neither. Such a version is imported with a new id of
// shardstore's form whose time is the version's (so the key's versions
// keep their order, newest first, and their times) and whose second
// half is derived from the source version: the first 8 bytes of
// SHA-256 over bucket, key and source id, each preceded by its length
// (8 bytes, big-endian), in hex. That derivation is what
// makes re-runs incremental without any state: a target version whose
// id ends in a source version's derived half is that version, imported
// before. The ids are recorded in the id map file as well (idMap), for
// people and scripts that must translate the source's ids.

// keptID reports whether the target keeps the version id id of a
// version listed with time mod: "null", a lower-case UUID, or an id of
// shardstore's form whose time is mod's to the millisecond (listings
// give milliseconds).
func keptID(id string, mod time.Time) bool {
	if id == "null" {
		return true
	}
	if len(id) == 36 && strings.ToLower(id) == id {
		if _, err := uuid.Parse(id); err == nil {
			return true
		}
	}
	_, ok := shardstoreIDTime(id, mod)
	return ok
}

// shardstoreIDTime is the time an id of shardstore's form carries, when
// it is one and that time is mod's to the millisecond.
func shardstoreIDTime(id string, mod time.Time) (time.Time, bool) {
	if len(id) != 32 || strings.ToLower(id) != id {
		return time.Time{}, false
	}
	if _, err := hex.DecodeString(id); err != nil {
		return time.Time{}, false
	}
	ns, err := strconv.ParseUint(id[:16], 16, 64)
	if err != nil || ns == 0 || ns > 1<<62 {
		return time.Time{}, false
	}
	t := time.Unix(0, int64(ns)).UTC()
	if !t.Truncate(time.Millisecond).Equal(mod.Truncate(time.Millisecond)) {
		return time.Time{}, false
	}
	return t, true
}

// idSuffix is the second half of the id a version of bucket/key whose
// source id is srcID gets on the target when its id is not kept.
func idSuffix(bucket, key, srcID string) string {
	h := sha256.New()
	for _, s := range []string{bucket, key, srcID} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// newTargetID is that id for a version imported at t.
func newTargetID(t time.Time, suffix string) string {
	return fmt.Sprintf("%016x", uint64(t.UnixNano())) + suffix
}

// remappedSuffix is the derived half of a target id of shardstore's
// form ("" for another id).
func remappedSuffix(id string) string {
	if len(id) != 32 {
		return ""
	}
	return id[16:]
}

// IDMapEntry is one line of the id map file: a source version imported
// under a new id.
type IDMapEntry struct {
	Bucket   string `json:"bucket"`
	Key      string `json:"key"`
	SourceID string `json:"source_version_id"`
	TargetID string `json:"version_id"`
	// ModTime is the version's time on the target (RFC 3339, ns).
	ModTime string `json:"mod_time"`
	Marker  bool   `json:"delete_marker,omitempty"`
}

// maxIDMapLine bounds one line of the id map file: a key is at most
// 1,024 bytes and an AWS version id as much, both JSON-escaped (x6).
const maxIDMapLine = 64 << 10

// readIDMap reads an id map file written by writeIDMap (JSON lines). A
// missing file is an empty map; a line that is not an entry, or an
// entry whose fields are empty or whose target id is not of
// shardstore's form, is an error naming its line, so a damaged file is
// never silently dropped by the rewrite that follows.
func readIDMap(r io.Reader) ([]IDMapEntry, error) {
	var out []IDMapEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxIDMapLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e IDMapEntry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: more than one entry", n)
		}
		if e.Bucket == "" || e.Key == "" || e.SourceID == "" {
			return nil, fmt.Errorf("line %d: an entry needs bucket, key and source_version_id", n)
		}
		t, err := time.Parse(time.RFC3339Nano, e.ModTime)
		if err != nil {
			return nil, fmt.Errorf("line %d: mod_time: %w", n, err)
		}
		if _, ok := shardstoreIDTime(e.TargetID, t); !ok {
			return nil, fmt.Errorf("line %d: version_id %q is not shardstore's id of a version of %s", n, e.TargetID, e.ModTime)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("a line longer than %d bytes: %w", maxIDMapLine, err)
		}
		return nil, err
	}
	return out, nil
}

// writeIDMap rewrites the id map file at path for bucket: its entries
// of other buckets stay, its entries of bucket stay where still(entry)
// says the target holds that version yet, and fresh's are added (one
// entry per bucket, key and source id). The file is written to a
// temporary file, synced, renamed over the old one and the directory
// synced, so a crash leaves the old file or the new one. Nothing is
// written when there is nothing to record and no file.
func writeIDMap(path, bucket string, fresh []IDMapEntry, still func(IDMapEntry) bool) error {
	var kept []IDMapEntry
	f, err := os.Open(path)
	switch {
	case err == nil:
		kept, err = readIDMap(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("id map %s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		return fmt.Errorf("id map: %w", err)
	}
	type id struct{ bucket, key, src string }
	seen := map[id]bool{}
	var all []IDMapEntry
	for _, e := range fresh {
		if !seen[id{e.Bucket, e.Key, e.SourceID}] {
			seen[id{e.Bucket, e.Key, e.SourceID}] = true
			all = append(all, e)
		}
	}
	for _, e := range kept {
		if seen[id{e.Bucket, e.Key, e.SourceID}] || (e.Bucket == bucket && !still(e)) {
			continue
		}
		seen[id{e.Bucket, e.Key, e.SourceID}] = true
		all = append(all, e)
	}
	if len(all) == 0 && len(kept) == 0 {
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Bucket != b.Bucket {
			return a.Bucket < b.Bucket
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.TargetID < b.TargetID // the time comes first in the id
	})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, e := range all {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("id map: %w", err)
		}
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, buf.Bytes()); err != nil {
		return fmt.Errorf("id map: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("id map: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("id map: sync its directory: %w", err)
		}
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
