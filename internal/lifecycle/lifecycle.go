// Package lifecycle is the model of an S3 bucket lifecycle configuration
// and the runner that applies it.
//
// The model (this file) parses and validates a LifecycleConfiguration
// document as S3 does (Parse), and decides which action applies to an
// object or a multipart upload at a given time (Configuration.Expiry,
// Configuration.AbortDue). It does no I/O: the S3 layer (internal/s3api)
// stores the validated document in the bucket record and answers
// x-amz-expiration from it.
//
// The runner (runner.go) acts on it: a pass lists each configured
// bucket through the engine's public calls (Store, which *engine.Engine
// satisfies) and deletes or aborts what the rules have made due.
// shardstore runs a pass after every scanner cycle.
//
// Supported rule elements: ID, Status, Filter (Prefix, Tag,
// ObjectSizeGreaterThan, ObjectSizeLessThan, And of those) or the legacy
// rule-level Prefix, Expiration (Days, Date, ExpiredObjectDeleteMarker),
// NoncurrentVersionExpiration (NoncurrentDays, NewerNoncurrentVersions)
// and AbortIncompleteMultipartUpload (DaysAfterInitiation). Transitions
// are validated as S3 validates them (a bad date is 400 as in S3) and
// then refused with NotImplemented: shardstore has one storage tier.
//
// Days count as S3 counts them: an object expires at the first midnight
// UTC after its creation time plus Days (S3 rounds up to the next
// midnight UTC), an upload is aborted at the first midnight UTC after its
// initiation plus DaysAfterInitiation.
//
// ExpiredObjectDeleteMarker and NoncurrentVersionExpiration act on
// versioned buckets only (delete markers and noncurrent versions); they
// are accepted and kept, and have nothing to act on in a bucket without
// versioning, as in S3.
package lifecycle

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// Limits S3 applies.
const (
	MaxRules   = 1000
	MaxIDLen   = 255
	maxTagKey  = 128
	maxTagVal  = 256
	maxAndTags = 10 // the most tags an object can carry
)

// Error is a validation failure with S3's error code (MalformedXML,
// InvalidArgument or InvalidRequest) and message.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func malformed() *Error {
	return &Error{"MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema"}
}

func invalidArgument(msg string) *Error { return &Error{"InvalidArgument", msg} }
func invalidRequest(msg string) *Error  { return &Error{"InvalidRequest", msg} }

// Configuration is a LifecycleConfiguration document. Its XML form is
// both what a request sends and, with NS empty, the canonical stored form.
type Configuration struct {
	XMLName xml.Name `xml:"LifecycleConfiguration"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Rules   []Rule   `xml:"Rule"`
}

// Rule is one lifecycle rule. Pointers tell a missing element from an
// empty one.
type Rule struct {
	ID     string  `xml:"ID,omitempty"`
	Prefix *string `xml:"Prefix"` // legacy, instead of Filter
	Filter *Filter `xml:"Filter"`
	Status string  `xml:"Status"`

	Expiration                     *Expiration                     `xml:"Expiration"`
	NoncurrentVersionExpiration    *NoncurrentVersionExpiration    `xml:"NoncurrentVersionExpiration"`
	AbortIncompleteMultipartUpload *AbortIncompleteMultipartUpload `xml:"AbortIncompleteMultipartUpload"`

	// Transitions are validated as S3 validates them, then refused:
	// a configuration with one is never stored.
	Transitions           []Transition           `xml:"Transition"`
	NoncurrentTransitions []NoncurrentTransition `xml:"NoncurrentVersionTransition"`
}

// Transition moves current objects to StorageClass by age (Days) or on
// a date (Date, midnight UTC). shardstore has one storage class: a rule
// with one is refused (NotImplemented) once it is otherwise valid.
type Transition struct {
	Days         *int64  `xml:"Days"`
	Date         *string `xml:"Date"`
	StorageClass *string `xml:"StorageClass"`
}

// NoncurrentTransition moves noncurrent versions to StorageClass;
// refused as Transition is.
type NoncurrentTransition struct {
	NoncurrentDays          *int64  `xml:"NoncurrentDays"`
	NewerNoncurrentVersions *int64  `xml:"NewerNoncurrentVersions"`
	StorageClass            *string `xml:"StorageClass"`
}

// transitionClasses are the storage classes S3's schema allows as a
// transition's target.
var transitionClasses = map[string]bool{
	"GLACIER": true, "STANDARD_IA": true, "ONEZONE_IA": true, "INTELLIGENT_TIERING": true,
	"DEEP_ARCHIVE": true, "GLACIER_IR": true,
}

// Filter selects the objects a rule applies to: at most one of its
// elements may be set (And combines several).
type Filter struct {
	Prefix                *string `xml:"Prefix"`
	Tag                   *Tag    `xml:"Tag"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan"`
	And                   *And    `xml:"And"`
}

// And is the conjunction of a prefix, tags and a size range.
type And struct {
	Prefix                *string `xml:"Prefix"`
	Tags                  []Tag   `xml:"Tag"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan"`
}

// Tag is a key-value pair an object must carry.
type Tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// Expiration expires current objects by age (Days) or on a date (Date,
// midnight UTC), or removes expired delete markers.
type Expiration struct {
	Days                      *int64  `xml:"Days"`
	Date                      *string `xml:"Date"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker"`
}

// NoncurrentVersionExpiration removes noncurrent versions (versioned
// buckets only).
type NoncurrentVersionExpiration struct {
	NoncurrentDays          *int64 `xml:"NoncurrentDays"`
	NewerNoncurrentVersions *int64 `xml:"NewerNoncurrentVersions"`
}

// AbortIncompleteMultipartUpload aborts uploads not completed within
// DaysAfterInitiation days.
type AbortIncompleteMultipartUpload struct {
	DaysAfterInitiation *int64 `xml:"DaysAfterInitiation"`
}

// Parse decodes and validates a LifecycleConfiguration as S3 does. The
// result keeps the document's structure; Marshal gives its canonical form.
func Parse(body []byte) (*Configuration, error) {
	var c Configuration
	if err := xml.Unmarshal(body, &c); err != nil {
		return nil, malformed()
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Marshal is c's canonical form: no namespace, as stored.
func (c *Configuration) Marshal() string {
	out := *c
	out.NS = ""
	b, err := xml.Marshal(&out)
	if err != nil { // every field marshals
		panic(fmt.Sprintf("lifecycle: marshal: %v", err))
	}
	return string(b)
}

// Validate checks c as S3 checks a PutBucketLifecycleConfiguration body.
func (c *Configuration) Validate() error {
	if len(c.Rules) == 0 || len(c.Rules) > MaxRules {
		return malformed()
	}
	ids := make(map[string]bool, len(c.Rules))
	transitions := false
	for i := range c.Rules {
		r := &c.Rules[i]
		if len(r.ID) > MaxIDLen {
			return invalidArgument("ID length should not exceed allowed limit of 255")
		}
		if r.ID != "" {
			if ids[r.ID] {
				return invalidArgument("Rule ID must be unique. Found same ID for more than one rule")
			}
			ids[r.ID] = true
		}
		if err := r.validate(); err != nil {
			return err
		}
		transitions = transitions || r.hasTransitions()
	}
	if transitions {
		// Only a configuration S3 would accept gets this far: a bad
		// transition date is 400 as in S3, not 501.
		return &Error{"NotImplemented", "Transition actions are not supported: shardstore has a single storage class"}
	}
	return nil
}

func (r *Rule) hasTransitions() bool {
	return len(r.Transitions) > 0 || len(r.NoncurrentTransitions) > 0
}

// validateTransitions checks a rule's transitions as S3 does: one of
// Days (zero or more) and Date (ISO 8601, midnight UTC) and a storage
// class S3 knows for Transition; NoncurrentDays and a storage class for
// NoncurrentVersionTransition.
func (r *Rule) validateTransitions() error {
	for _, t := range r.Transitions {
		if (t.Days == nil) == (t.Date == nil) || t.StorageClass == nil || !transitionClasses[*t.StorageClass] {
			return malformed()
		}
		if t.Days != nil && *t.Days < 0 {
			return invalidArgument("'Days' for Transition action must be nonnegative")
		}
		if t.Date != nil {
			if _, err := parseDate(*t.Date); err != nil {
				return err
			}
		}
	}
	for _, t := range r.NoncurrentTransitions {
		if t.NoncurrentDays == nil || t.StorageClass == nil || !transitionClasses[*t.StorageClass] {
			return malformed()
		}
		if *t.NoncurrentDays < 0 {
			return invalidArgument("'NoncurrentDays' for NoncurrentVersionTransition action must be nonnegative")
		}
		if n := t.NewerNoncurrentVersions; n != nil && (*n <= 0 || *n > 100) {
			return invalidArgument("'NewerNoncurrentVersions' for NoncurrentVersionTransition action must be a positive integer up to 100")
		}
	}
	return nil
}

func (r *Rule) validate() error {
	if r.Status != "Enabled" && r.Status != "Disabled" {
		return malformed()
	}
	// Exactly one of the legacy Prefix and Filter.
	if (r.Prefix == nil) == (r.Filter == nil) {
		return malformed()
	}
	if r.Expiration == nil && r.NoncurrentVersionExpiration == nil && r.AbortIncompleteMultipartUpload == nil && !r.hasTransitions() {
		return invalidRequest("At least one action needs to be specified in a rule")
	}
	if err := r.validateTransitions(); err != nil {
		return err
	}
	if r.Filter != nil {
		if err := r.Filter.validate(); err != nil {
			return err
		}
	}
	f := r.match()
	if x := r.Expiration; x != nil {
		n := 0
		if x.Days != nil {
			n++
		}
		if x.Date != nil {
			n++
		}
		if x.ExpiredObjectDeleteMarker != nil {
			n++
		}
		if n != 1 {
			// Days, Date and ExpiredObjectDeleteMarker exclude each other.
			return malformed()
		}
		if x.Days != nil && *x.Days <= 0 {
			return invalidArgument("'Days' for Expiration action must be a positive integer")
		}
		if x.Date != nil {
			if _, err := parseDate(*x.Date); err != nil {
				return err
			}
		}
	}
	if x := r.NoncurrentVersionExpiration; x != nil {
		if x.NoncurrentDays == nil {
			return malformed()
		}
		if *x.NoncurrentDays <= 0 {
			return invalidArgument("'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		if x.NewerNoncurrentVersions != nil && (*x.NewerNoncurrentVersions <= 0 || *x.NewerNoncurrentVersions > 100) {
			return invalidArgument("'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer up to 100")
		}
	}
	if x := r.AbortIncompleteMultipartUpload; x != nil {
		if x.DaysAfterInitiation == nil {
			return malformed()
		}
		if *x.DaysAfterInitiation <= 0 {
			return invalidArgument("'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		// An upload has no tags or size yet: S3 refuses such filters.
		if len(f.tags) > 0 {
			return invalidRequest("AbortIncompleteMultipartUpload cannot be specified with Tags.")
		}
		if f.gt != nil || f.lt != nil {
			return invalidRequest("AbortIncompleteMultipartUpload cannot be specified with an object size filter.")
		}
	}
	return nil
}

func (f *Filter) validate() error {
	n := 0
	for _, set := range []bool{f.Prefix != nil, f.Tag != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil, f.And != nil} {
		if set {
			n++
		}
	}
	if n > 1 {
		// Several conditions need And.
		return malformed()
	}
	if f.Tag != nil {
		if err := checkTag(*f.Tag); err != nil {
			return err
		}
	}
	gt, lt := f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	if a := f.And; a != nil {
		if a.Prefix == nil && len(a.Tags) == 0 && a.ObjectSizeGreaterThan == nil && a.ObjectSizeLessThan == nil {
			return malformed()
		}
		if len(a.Tags) > maxAndTags {
			return invalidRequest("Object tags cannot be greater than 10")
		}
		seen := map[string]bool{}
		for _, t := range a.Tags {
			if err := checkTag(t); err != nil {
				return err
			}
			if seen[t.Key] {
				return invalidRequest("Duplicate Tag Keys are not allowed.")
			}
			seen[t.Key] = true
		}
		gt, lt = a.ObjectSizeGreaterThan, a.ObjectSizeLessThan
	}
	if (gt != nil && *gt < 0) || (lt != nil && *lt <= 0) {
		return invalidArgument("'ObjectSizeGreaterThan' and 'ObjectSizeLessThan' must be non-negative, and 'ObjectSizeLessThan' greater than 0")
	}
	if gt != nil && lt != nil && *gt >= *lt {
		return invalidArgument("'ObjectSizeLessThan' must be greater than 'ObjectSizeGreaterThan'")
	}
	return nil
}

func checkTag(t Tag) error {
	if t.Key == "" || len([]rune(t.Key)) > maxTagKey {
		return &Error{"InvalidTag", "The TagKey you have provided is invalid"}
	}
	if len([]rune(t.Value)) > maxTagVal {
		return &Error{"InvalidTag", "The TagValue you have provided is invalid"}
	}
	return nil
}

// parseDate reads an Expiration Date: ISO 8601, midnight UTC.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err = time.Parse(layout, s); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, invalidArgument("'Date' must be in ISO 8601 format")
	}
	t = t.UTC()
	if !t.Equal(midnight(t)) {
		return time.Time{}, invalidArgument("'Date' must be at midnight GMT")
	}
	return t, nil
}

// midnight is the start of t's day in UTC.
func midnight(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// afterDays is the first midnight UTC after t plus days: S3 adds the days
// to the creation (or initiation) time and rounds up to the next midnight
// UTC; a sum exactly at midnight still moves to the next one.
func afterDays(t time.Time, days int64) time.Time {
	return midnight(t.UTC().AddDate(0, 0, int(days)+1))
}

// matcher is a rule's filter, flattened.
type matcher struct {
	prefix string
	tags   []Tag
	gt, lt *int64
}

func (r *Rule) match() matcher {
	var m matcher
	if r.Prefix != nil {
		m.prefix = *r.Prefix
		return m
	}
	f := r.Filter
	if f == nil {
		return m
	}
	if f.Prefix != nil {
		m.prefix = *f.Prefix
	}
	if f.Tag != nil {
		m.tags = []Tag{*f.Tag}
	}
	m.gt, m.lt = f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	if a := f.And; a != nil {
		if a.Prefix != nil {
			m.prefix = *a.Prefix
		}
		m.tags = a.Tags
		m.gt, m.lt = a.ObjectSizeGreaterThan, a.ObjectSizeLessThan
	}
	return m
}

func (m matcher) matches(o Object) bool {
	if !strings.HasPrefix(o.Key, m.prefix) {
		return false
	}
	for _, t := range m.tags {
		if v, ok := o.Tags[t.Key]; !ok || v != t.Value {
			return false
		}
	}
	if m.gt != nil && !(o.Size > *m.gt) {
		return false
	}
	if m.lt != nil && !(o.Size < *m.lt) {
		return false
	}
	return true
}

// Object is what a rule looks at: a current object.
type Object struct {
	Key     string
	Size    int64
	ModTime time.Time
	Tags    map[string]string
}

// Action is a lifecycle action due on a date, by the rule named RuleID.
type Action struct {
	RuleID string
	Due    time.Time
}

// Expiry is the earliest expiration the configuration's enabled rules
// set for o (a current object of a bucket without versioning): the
// first matching rule with the earliest date wins. ok is false when no
// enabled rule expires o. The object is due once now is not before Due.
func (c *Configuration) Expiry(o Object) (a Action, ok bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		x := r.Expiration
		if r.Status != "Enabled" || x == nil || (x.Days == nil && x.Date == nil) || !r.match().matches(o) {
			continue
		}
		var due time.Time
		if x.Days != nil {
			due = afterDays(o.ModTime, *x.Days)
		} else {
			d, err := parseDate(*x.Date)
			if err != nil {
				continue
			}
			due = d
		}
		if !ok || due.Before(a.Due) {
			a, ok = Action{RuleID: r.ID, Due: due}, true
		}
	}
	return a, ok
}

// ExpiredAt reports whether o is due to expire at now, and by which rule.
func (c *Configuration) ExpiredAt(o Object, now time.Time) (Action, bool) {
	a, ok := c.Expiry(o)
	if !ok || now.Before(a.Due) {
		return Action{}, false
	}
	return a, true
}

// AbortDue is the earliest date the enabled rules abort an upload of key
// initiated at initiated; ok is false when no rule aborts it.
func (c *Configuration) AbortDue(key string, initiated time.Time) (a Action, ok bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		x := r.AbortIncompleteMultipartUpload
		if r.Status != "Enabled" || x == nil || x.DaysAfterInitiation == nil {
			continue
		}
		m := r.match()
		if !strings.HasPrefix(key, m.prefix) {
			continue
		}
		due := afterDays(initiated, *x.DaysAfterInitiation)
		if !ok || due.Before(a.Due) {
			a, ok = Action{RuleID: r.ID, Due: due}, true
		}
	}
	return a, ok
}

// NoncurrentExpiredAt reports whether noncurrent version o is due to
// expire at now, and by which enabled NoncurrentVersionExpiration rule:
// o became noncurrent at since (when its successor was made), and newer
// noncurrent versions of its key are newer than it. A rule with
// NewerNoncurrentVersions N keeps the N newest noncurrent versions
// whatever their age; NoncurrentDays counts from since, rounded to
// midnight UTC as for Expiration.
func (c *Configuration) NoncurrentExpiredAt(o Object, since time.Time, newer int, now time.Time) (a Action, ok bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		x := r.NoncurrentVersionExpiration
		if r.Status != "Enabled" || x == nil || x.NoncurrentDays == nil || !r.match().matches(o) {
			continue
		}
		if x.NewerNoncurrentVersions != nil && int64(newer) < *x.NewerNoncurrentVersions {
			continue
		}
		due := afterDays(since, *x.NoncurrentDays)
		if now.Before(due) {
			continue
		}
		if !ok || due.Before(a.Due) {
			a, ok = Action{RuleID: r.ID, Due: due}, true
		}
	}
	return a, ok
}

// RemovesDeleteMarker reports whether an enabled rule with
// ExpiredObjectDeleteMarker removes a delete marker of key that is its
// key's only version (an expired object delete marker). Tag and size
// filters never match a delete marker, which has neither.
func (c *Configuration) RemovesDeleteMarker(key string) (a Action, ok bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		x := r.Expiration
		if r.Status != "Enabled" || x == nil || x.ExpiredObjectDeleteMarker == nil || !*x.ExpiredObjectDeleteMarker {
			continue
		}
		m := r.match()
		if len(m.tags) > 0 || m.gt != nil || m.lt != nil || !strings.HasPrefix(key, m.prefix) {
			continue
		}
		return Action{RuleID: r.ID}, true
	}
	return Action{}, false
}

// VersionPrefixes are the key prefixes under which an enabled rule acts
// on noncurrent versions or delete markers (nil when none does).
func (c *Configuration) VersionPrefixes() []string {
	var out []string
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Status != "Enabled" {
			continue
		}
		if x := r.Expiration; r.NoncurrentVersionExpiration != nil || (x != nil && x.ExpiredObjectDeleteMarker != nil && *x.ExpiredObjectDeleteMarker) {
			out = append(out, r.match().prefix)
		}
	}
	return minimalPrefixes(out)
}

// HasObjectActions reports whether an enabled rule can expire current
// objects or abort uploads, so a runner can skip a bucket that has none.
func (c *Configuration) HasObjectActions() (expire, abort bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		if r.Status != "Enabled" {
			continue
		}
		if x := r.Expiration; x != nil && (x.Days != nil || x.Date != nil) {
			expire = true
		}
		if r.AbortIncompleteMultipartUpload != nil {
			abort = true
		}
	}
	return expire, abort
}

// Prefixes are the key prefixes an object must have for some enabled
// expiration rule to apply (a runner lists only these); nil when none
// applies, [""] when a rule covers every key.
func (c *Configuration) Prefixes() []string {
	var out []string
	for i := range c.Rules {
		r := &c.Rules[i]
		if x := r.Expiration; r.Status != "Enabled" || x == nil || (x.Days == nil && x.Date == nil) {
			continue
		}
		out = append(out, r.match().prefix)
	}
	return minimalPrefixes(out)
}

// minimalPrefixes drops prefixes that another one covers, so a walk over
// them visits each key once.
func minimalPrefixes(ps []string) []string {
	var out []string
	for i, p := range ps {
		covered := false
		for j, q := range ps {
			if i != j && strings.HasPrefix(p, q) && (q != p || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, p)
		}
	}
	return out
}
