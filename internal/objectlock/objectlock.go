// Package objectlock is the model of S3 Object Lock (write once, read
// many): a bucket's ObjectLockConfiguration with its default retention
// (Parse, Config.Default), and the rules that decide whether a version's
// retention or legal hold lets it be removed (Lock.CheckRemove) or its
// retention changed (CheckChange). It does no I/O: the S3 layer parses
// requests with it, the engine stores the canonical configuration in the
// bucket record, records each version's Lock in its metadata and calls
// these checks on every path that removes or rewrites a version.
//
// The rules, as the S3 documentation states them:
//   - A version under legal hold cannot be removed by anyone until the
//     hold is released (s3:PutObjectLegalHold); a hold has no expiry.
//   - A version in COMPLIANCE mode cannot be removed, and its retention
//     cannot be shortened, removed or turned into GOVERNANCE, by any
//     user, the root user included, until its retain-until date passes.
//     It can be extended.
//   - A version in GOVERNANCE mode can be removed, and its retention
//     shortened, removed or changed, only by a request that sets
//     x-amz-bypass-governance-retention (and whose caller holds
//     s3:BypassGovernanceRetention, which the S3 layer checks). It can be
//     extended without bypass. Turning it into COMPLIANCE changes its
//     lock settings, which governance mode reserves to the bypass too
//     ("users can't overwrite or delete an object version or alter its
//     lock settings unless they have special permissions"), as AWS
//     answers it: AccessDenied without the bypass.
//   - Once the retain-until date has passed the retention no longer
//     protects the version (it stays recorded).
package objectlock

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Retention modes.
const (
	Governance = "GOVERNANCE"
	Compliance = "COMPLIANCE"
)

// Legal hold states as S3 spells them.
const (
	HoldOn  = "ON"
	HoldOff = "OFF"
)

// Limits on a default retention period (S3 accepts up to 100 years).
const (
	MaxDays  = 36500
	MaxYears = 100
)

// Error is a validation failure with S3's error code and message.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func malformed() *Error {
	return &Error{"MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema"}
}

// InvalidArgument makes an InvalidArgument error.
func InvalidArgument(msg string) *Error { return &Error{"InvalidArgument", msg} }

// ErrLocked is returned (wrapped, with the reason) when a retention or a
// legal hold forbids removing a version or changing its retention. S3
// answers it with 403 AccessDenied.
var ErrLocked = errors.New("object is protected by object lock")

// ValidMode reports whether m is a retention mode.
func ValidMode(m string) bool { return m == Governance || m == Compliance }

// Lock is the object lock state of one version: its retention (Mode ""
// means none) and its legal hold ("" when never set, HoldOn or HoldOff).
type Lock struct {
	Mode        string
	RetainUntil time.Time
	LegalHold   string
}

// IsZero reports whether l asks for nothing: no retention, no legal hold.
func (l Lock) IsZero() bool {
	return l.Mode == "" && l.RetainUntil.IsZero() && l.LegalHold == ""
}

// Retained reports whether the retention protects the version at now.
func (l Lock) Retained(now time.Time) bool {
	return l.Mode != "" && now.Before(l.RetainUntil)
}

// Held reports whether a legal hold is on.
func (l Lock) Held() bool { return l.LegalHold == HoldOn }

// Protected reports whether anything forbids removing the version at now
// (GOVERNANCE counts: it yields only to a bypass).
func (l Lock) Protected(now time.Time) bool { return l.Held() || l.Retained(now) }

// CheckRemove says whether a request may remove the version at now:
// nil, or ErrLocked with the reason. bypass is a request that set
// x-amz-bypass-governance-retention with the permission to do so.
func (l Lock) CheckRemove(now time.Time, bypass bool) error {
	if l.Held() {
		return fmt.Errorf("%w: the version is under legal hold", ErrLocked)
	}
	if !l.Retained(now) {
		return nil
	}
	if l.Mode == Governance && bypass {
		return nil
	}
	return fmt.Errorf("%w: %s retention until %s", ErrLocked, l.Mode, l.RetainUntil.UTC().Format(time.RFC3339))
}

// CheckChange says whether a version's retention may go from old to
// next (next.Mode "" removes it) at now, with or without a governance
// bypass: extending in the same mode is always allowed, anything that
// weakens COMPLIANCE or changes its mode never is, and weakening
// GOVERNANCE or changing its mode (to COMPLIANCE) needs the bypass.
func CheckChange(old, next Lock, now time.Time, bypass bool) error {
	if next.Mode != "" && !ValidMode(next.Mode) {
		return InvalidArgument("Unknown retention mode " + next.Mode)
	}
	if !old.Retained(now) {
		return nil
	}
	weaker := next.Mode == "" || next.RetainUntil.Before(old.RetainUntil)
	switch old.Mode {
	case Compliance:
		if weaker || next.Mode != Compliance {
			return fmt.Errorf("%w: COMPLIANCE retention until %s cannot be shortened, removed or changed to GOVERNANCE",
				ErrLocked, old.RetainUntil.UTC().Format(time.RFC3339))
		}
	case Governance:
		if (weaker || next.Mode != Governance) && !bypass {
			return fmt.Errorf("%w: shortening, removing or changing the mode of GOVERNANCE retention needs x-amz-bypass-governance-retention",
				ErrLocked)
		}
	}
	return nil
}

// Config is a bucket's ObjectLockConfiguration: object lock is enabled
// on every bucket that has one; DefaultMode, with Days or Years, is the
// retention new versions get when their request names none.
type Config struct {
	DefaultMode string
	Days        int
	Years       int
}

// HasDefault reports whether the configuration has a default retention.
func (c Config) HasDefault() bool { return c.DefaultMode != "" }

// Default is the retention a version created at t gets from the
// bucket's default rule (Mode "" when there is none). A year is a
// calendar year, as S3 counts it.
func (c Config) Default(t time.Time) Lock {
	if !c.HasDefault() {
		return Lock{}
	}
	until := t.UTC().AddDate(c.Years, 0, c.Days)
	return Lock{Mode: c.DefaultMode, RetainUntil: until}
}

// document is the XML form of an ObjectLockConfiguration; with XMLNS
// empty it is also the canonical form the bucket record stores.
type document struct {
	XMLName xml.Name      `xml:"ObjectLockConfiguration"`
	XMLNS   string        `xml:"xmlns,attr,omitempty"`
	Enabled string        `xml:"ObjectLockEnabled,omitempty"`
	Rule    *documentRule `xml:"Rule,omitempty"`
}

type documentRule struct {
	DefaultRetention *documentRetention `xml:"DefaultRetention,omitempty"`
}

type documentRetention struct {
	Mode  string `xml:"Mode,omitempty"`
	Days  *int   `xml:"Days,omitempty"`
	Years *int   `xml:"Years,omitempty"`
}

// Parse reads and validates an ObjectLockConfiguration document as S3
// does: ObjectLockEnabled must be "Enabled"; a Rule needs a
// DefaultRetention with a mode and exactly one of Days and Years, a
// positive number.
func Parse(doc []byte) (Config, error) {
	var d document
	if err := xml.Unmarshal(doc, &d); err != nil {
		return Config{}, malformed()
	}
	if d.Enabled != "Enabled" {
		return Config{}, malformed()
	}
	if d.Rule == nil {
		return Config{}, nil
	}
	r := d.Rule.DefaultRetention
	if r == nil {
		return Config{}, malformed()
	}
	if (r.Days == nil) == (r.Years == nil) {
		return Config{}, malformed()
	}
	if !ValidMode(r.Mode) {
		return Config{}, malformed()
	}
	c := Config{DefaultMode: r.Mode}
	if r.Days != nil {
		if err := checkPeriod(*r.Days, MaxDays, "days"); err != nil {
			return Config{}, err
		}
		c.Days = *r.Days
	} else {
		if err := checkPeriod(*r.Years, MaxYears, "years"); err != nil {
			return Config{}, err
		}
		c.Years = *r.Years
	}
	return c, nil
}

// checkPeriod validates a default retention's Days or Years (unit) as
// AWS answers it: InvalidArgument with its message for zero or less
// (AWS observed; the API reference names no code), and InvalidArgument
// above S3's 100-year limit. Ceph's s3-tests expect InvalidRetentionPeriod
// here, which is RGW's code; docs/conformance.md has the evidence.
func checkPeriod(n, limit int, unit string) error {
	switch {
	case n <= 0:
		return InvalidArgument("Default retention period must be a positive integer value.")
	case n > limit:
		return InvalidArgument(fmt.Sprintf("Default retention period must be a positive integer value of at most %d %s.", limit, unit))
	}
	return nil
}

// ParseStored reads the canonical form Marshal wrote; a bucket record
// holds only documents Parse accepted, so an error means a damaged record.
func ParseStored(doc string) (Config, error) {
	c, err := Parse([]byte(doc))
	if err != nil {
		return Config{}, fmt.Errorf("stored object lock configuration: %w", err)
	}
	return c, nil
}

// Marshal is the canonical document of c (no namespace), as stored in
// the bucket record; with ns set, as sent to clients.
func (c Config) Marshal(ns string) string {
	d := document{XMLNS: ns, Enabled: "Enabled"}
	if c.HasDefault() {
		r := &documentRetention{Mode: c.DefaultMode}
		if c.Years > 0 {
			y := c.Years
			r.Years = &y
		} else {
			days := c.Days
			r.Days = &days
		}
		d.Rule = &documentRule{DefaultRetention: r}
	}
	out, err := xml.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("objectlock: marshal: %v", err)) // plain strings and ints always encode
	}
	return string(out)
}

// ParseRetainUntil reads a retain-until date as S3 sends and accepts it
// (ISO 8601, e.g. 2030-01-02T03:04:05.000Z, with or without fraction).
func ParseRetainUntil(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, InvalidArgument("The retain until date must be provided in ISO 8601 format")
	}
	return t.UTC(), nil
}

// FormatRetainUntil spells t as S3 returns retain-until dates.
func FormatRetainUntil(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
