package s3api

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// The import path of PutObject (`shardstore migrate from-s3`): a PUT with
// these headers writes a version another store made, keeping its version
// id and modification time (engine.ImportVersion). Only a caller allowed
// the admin action ImportAction may send them, as access.Decide answers
// for every admin action (root, or an identity whose policy allows it);
// anyone else is refused the whole request, not served a plain PUT.
// The header names are engine's (engine.ImportVersionIDHeader...), so
// that internal/migrate, which sends them, need not import this package.
const (
	ImportVersionIDHeader    = engine.ImportVersionIDHeader
	ImportModTimeHeader      = engine.ImportModTimeHeader
	ImportDeleteMarkerHeader = engine.ImportDeleteMarkerHeader
	ImportETagHeader         = engine.ImportETagHeader
	ImportPartsHeader        = engine.ImportPartsHeader
	ImportChecksumHeader     = engine.ImportChecksumHeader
	// ImportAction is the admin action the import path needs.
	ImportAction = "admin:ImportObject"
)

var importHeaders = []string{ImportVersionIDHeader, ImportModTimeHeader, ImportDeleteMarkerHeader, ImportETagHeader,
	ImportPartsHeader, ImportChecksumHeader}

// importEarliest is the earliest modification time an import accepts.
var importEarliest = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

// ParseImport reads the import headers of h: nil when there are none.
// Every value is checked strictly: one value per header, the version id
// "null" or an id the engine accepts (engine.CheckImport), the time
// RFC 3339 with nanoseconds, after 1990 and at most a day ahead of now,
// the delete marker "true" or "false", the ETag an MD5 in hex with an
// optional "-<parts>" (1 to 10000); the part sizes (parseImportParts)
// as many as the ETag's parts, and the checksum "ALGORITHM TYPE VALUE"
// only with them (engine.CheckImport checks both).
func ParseImport(h http.Header, now time.Time) (*engine.ImportVersion, error) {
	present := false
	for _, name := range importHeaders {
		vals := h.Values(name)
		if len(vals) > 1 {
			return nil, errInvalidArgument("%s is given more than once", name)
		}
		if len(vals) == 1 {
			present = true
		}
	}
	if !present {
		return nil, nil
	}
	vid, hasID := h[http.CanonicalHeaderKey(ImportVersionIDHeader)]
	mt := h.Get(ImportModTimeHeader)
	if !hasID || mt == "" {
		return nil, errInvalidArgument("an import needs %s and %s", ImportVersionIDHeader, ImportModTimeHeader)
	}
	imp := &engine.ImportVersion{}
	switch id := vid[0]; id {
	case "null":
	case "":
		return nil, errInvalidArgument("%s is empty (the null version is \"null\")", ImportVersionIDHeader)
	default:
		imp.VersionID = id
	}
	t, err := time.Parse(time.RFC3339Nano, mt)
	if err != nil || t.Before(importEarliest) || t.After(now.Add(24*time.Hour)) {
		return nil, errInvalidArgument("%s %q is not an RFC 3339 time between 1990 and now", ImportModTimeHeader, mt)
	}
	imp.ModTime = t.UnixNano()
	switch dm := h.Get(ImportDeleteMarkerHeader); dm {
	case "", "false":
	case "true":
		imp.DeleteMarker = true
	default:
		return nil, errInvalidArgument("%s %q is not true or false", ImportDeleteMarkerHeader, dm)
	}
	if etag := h.Get(ImportETagHeader); etag != "" {
		if imp.DeleteMarker {
			return nil, errInvalidArgument("a delete marker has no ETag")
		}
		etag = strings.Trim(etag, `"`)
		if !validImportETag(etag) {
			return nil, errInvalidArgument("%s %q is not an S3 ETag", ImportETagHeader, etag)
		}
		imp.ETag = etag
	}
	if v := h.Get(ImportPartsHeader); v != "" {
		parts, err := parseImportParts(v)
		if err != nil {
			return nil, errInvalidArgument("%s: %v", ImportPartsHeader, err)
		}
		imp.Parts = parts
	}
	if v := h.Get(ImportChecksumHeader); v != "" {
		f := strings.Split(v, " ")
		if len(f) != 3 {
			return nil, errInvalidArgument("%s %q is not ALGORITHM TYPE VALUE", ImportChecksumHeader, v)
		}
		imp.Checksum = engine.ImportChecksum{Algorithm: f[0], Type: f[1], Value: f[2]}
	}
	if err := engine.CheckImport(imp); err != nil {
		if len(imp.Parts) > 0 || imp.Checksum != (engine.ImportChecksum{}) {
			return nil, errInvalidArgument("%v", err)
		}
		return nil, errInvalidArgument("%s %q: not a version id this server keeps for a version of that time", ImportVersionIDHeader, imp.VersionID)
	}
	return imp, nil
}

// parseImportParts reads the part sizes of ImportPartsHeader: items
// "SIZE" or "SIZE*COUNT" separated by commas, numbers in plain decimal
// (no sign, no leading zero), SIZE 1 to engine.MaxPutSize, COUNT 1 to
// engine.MaxPartNumber, at most engine.MaxPartNumber parts in all.
func parseImportParts(v string) ([]int64, error) {
	num := func(s string, max int64) (int64, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && n >= 1 && n <= max && strconv.FormatInt(n, 10) == s
	}
	var parts []int64
	for _, item := range strings.Split(v, ",") {
		sz, cnt, rep := strings.Cut(item, "*")
		size, ok := num(sz, engine.MaxPutSize)
		if !ok {
			return nil, fmt.Errorf("part size %q is not 1 to %d", sz, int64(engine.MaxPutSize))
		}
		count := int64(1)
		if rep {
			if count, ok = num(cnt, engine.MaxPartNumber); !ok {
				return nil, fmt.Errorf("part count %q is not 1 to %d", cnt, engine.MaxPartNumber)
			}
		}
		if int64(len(parts))+count > engine.MaxPartNumber {
			return nil, fmt.Errorf("more than %d parts", engine.MaxPartNumber)
		}
		for range count {
			parts = append(parts, size)
		}
	}
	return parts, nil
}

// validImportETag: 32 lower-case hex digits, optionally "-N", N 1-10000.
func validImportETag(etag string) bool {
	sum, parts, multi := strings.Cut(etag, "-")
	if len(sum) != 32 || strings.ToLower(sum) != sum {
		return false
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return false
	}
	if !multi {
		return true
	}
	n, err := strconv.Atoi(parts)
	return err == nil && n >= 1 && n <= 10000 && strconv.Itoa(n) == parts
}

// importVersion reads a PUT's import headers and, when there are any,
// asks access.Decide whether the caller may import (ImportAction).
func (q *request) importVersion() (*engine.ImportVersion, error) {
	imp, err := ParseImport(q.r.Header, time.Now())
	if err != nil || imp == nil {
		return nil, err
	}
	d := access.Decide(access.Request{Caller: q.caller.AccessCaller(), Op: access.AdminAction, Action: ImportAction})
	if !d.Allowed {
		return nil, errAccessDenied()
	}
	return imp, nil
}
