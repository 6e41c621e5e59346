package jepsen

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kind names an operation of the workloads.
type Kind string

const (
	OpGet         Kind = "get"               // GET key → value, or absent (404)
	OpPut         Kind = "put"               // PUT key value
	OpPutIfAbsent Kind = "put-if-none-match" // PUT with If-None-Match: *
	OpPutIfMatch  Kind = "put-if-match"      // PUT with If-Match: ETag of Match
	OpDelete      Kind = "delete"            // DELETE key (no version id)
	OpList        Kind = "list"              // ListObjectsV2 of the run's keys
	OpVPut        Kind = "vput"              // PUT on the versioned bucket, records the version id
	OpVList       Kind = "vlist"             // ListObjectVersions on the versioned bucket
)

// Outcome is what the client learnt of an operation.
type Outcome string

const (
	// Ok: the node answered success (for a read, with what it read).
	Ok Outcome = "ok"
	// Fail: the operation certainly had no effect: a precondition
	// refused it (412, or 404 for If-Match on a missing key: Refused is
	// set, and the refusal is itself an observation), a read failed, or
	// the request never reached a node (connection refused).
	Fail Outcome = "fail"
	// Unknown: a write that timed out or got an error after it was
	// sent; it may or may not have taken effect, now or later.
	Unknown Outcome = "unknown"
)

// Op is one operation of the history, with its invocation (Call) and
// completion (Return) times since the run's start.
type Op struct {
	Client  int           `json:"client"`
	Node    int           `json:"node"` // the node the client talked to (0-based)
	Kind    Kind          `json:"kind"`
	Key     string        `json:"key"`             // for lists: the prefix
	Value   string        `json:"value,omitempty"` // written, or read ("" = absent)
	Match   string        `json:"match,omitempty"` // put-if-match: the value whose ETag was sent
	Outcome Outcome       `json:"outcome"`
	Refused bool          `json:"refused,omitempty"` // a precondition refused it (412/404)
	Call    time.Duration `json:"call"`
	Return  time.Duration `json:"return"`
	Err     string        `json:"err,omitempty"`
	// VersionID is what a vput's answer named.
	VersionID string `json:"version_id,omitempty"`
	// Listed: a list's keys and the values their ETags name.
	Listed map[string]string `json:"listed,omitempty"`
	// Versions: a vlist's versions, per key newest first as listed.
	Versions map[string][]ListedVersion `json:"versions,omitempty"`
}

// ListedVersion is one entry of ListObjectVersions.
type ListedVersion struct {
	VersionID string `json:"id"`
	Value     string `json:"value"` // from the ETag; "?<etag>" when no write had it
	Latest    bool   `json:"latest,omitempty"`
	// Page is the index of the response page that listed it (a listing
	// of more than one page is no snapshot: a version may move between
	// pages as writes go on, so duplicates and order are judged within
	// one page).
	Page int `json:"page,omitempty"`
}

func (o Op) String() string {
	s := fmt.Sprintf("[%9.3fs %9.3fs] c%-2d n%d %-17s %s", o.Call.Seconds(), o.Return.Seconds(), o.Client, o.Node+1, o.Kind, o.Key)
	switch o.Kind {
	case OpPutIfMatch:
		s += fmt.Sprintf(" %q (if %q)", o.Value, o.Match)
	case OpList:
		s += fmt.Sprintf(" (%d keys)", len(o.Listed))
	case OpVList:
		n := 0
		for _, vs := range o.Versions {
			n += len(vs)
		}
		s += fmt.Sprintf(" (%d versions)", n)
	default:
		s += fmt.Sprintf(" %q", o.Value)
	}
	if o.VersionID != "" {
		s += " version " + o.VersionID
	}
	s += " → " + string(o.Outcome)
	if o.Refused {
		s += " (precondition)"
	}
	if o.Err != "" {
		s += ": " + o.Err
	}
	return s
}

// History collects the operations of a run; safe for concurrent use.
type History struct {
	start time.Time

	mu     sync.Mutex
	ops    []Op
	byETag map[string]string // ETag (hex MD5, no quotes) → the value written with it
	faults []FaultEvent
}

// FaultEvent is one nemesis action: what, on which nodes, from when to when.
type FaultEvent struct {
	Name  string        `json:"name"`
	Nodes string        `json:"nodes"`
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	Err   string        `json:"err,omitempty"`
}

func NewHistory() *History {
	return &History{start: time.Now(), byETag: map[string]string{}}
}

// Now is the time since the history started.
func (h *History) Now() time.Duration { return time.Since(h.start) }

// Written registers a value before it is sent, so an ETag seen in a
// listing can be traced to its write.
func (h *History) Written(v string) {
	h.mu.Lock()
	h.byETag[etagOf(v)] = v
	h.mu.Unlock()
}

// ValueOfETag is the value written with ETag e (quotes allowed), or
// "?e" when no write of this history had it (a phantom).
func (h *History) ValueOfETag(e string) string {
	e = strings.Trim(e, `"`)
	h.mu.Lock()
	defer h.mu.Unlock()
	if v, ok := h.byETag[e]; ok {
		return v
	}
	return "?" + e
}

func (h *History) Add(o Op) {
	h.mu.Lock()
	h.ops = append(h.ops, o)
	h.mu.Unlock()
}

func (h *History) AddFault(f FaultEvent) {
	h.mu.Lock()
	h.faults = append(h.faults, f)
	h.mu.Unlock()
}

// Ops is a copy of the operations, ordered by invocation.
func (h *History) Ops() []Op {
	h.mu.Lock()
	out := append([]Op(nil), h.ops...)
	h.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Call < out[j].Call })
	return out
}

func (h *History) Faults() []FaultEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]FaultEvent(nil), h.faults...)
}

// etagOf is the ETag S3 gives a single-part object whose body is v.
func etagOf(v string) string {
	sum := md5.Sum([]byte(v))
	return hex.EncodeToString(sum[:])
}
