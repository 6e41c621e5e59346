package s3api

import (
	"encoding/hex"
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
	// ImportAction is the admin action the import path needs.
	ImportAction = "admin:ImportObject"
)

var importHeaders = []string{ImportVersionIDHeader, ImportModTimeHeader, ImportDeleteMarkerHeader, ImportETagHeader}

// importEarliest is the earliest modification time an import accepts.
var importEarliest = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)

// ParseImport reads the import headers of h: nil when there are none.
// Every value is checked strictly: one value per header, the version id
// "null" or an id the engine accepts (engine.CheckImport), the time
// RFC 3339 with nanoseconds, after 1990 and at most a day ahead of now,
// the delete marker "true" or "false", the ETag an MD5 in hex with an
// optional "-<parts>" (1 to 10000).
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
	if err := engine.CheckImport(imp); err != nil {
		return nil, errInvalidArgument("%s %q: not a version id this server keeps for a version of that time", ImportVersionIDHeader, imp.VersionID)
	}
	return imp, nil
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
