// Package policy parses and evaluates AWS IAM policy documents for S3:
// Version, Statement, Sid, Effect, Principal / NotPrincipal (AWS users,
// canonical users and the Service principals of services that exist;
// NotPrincipal only with Deny, as IAM requires), Action /
// NotAction, Resource / NotResource with wildcards and policy variables,
// and Condition blocks. Parse validates a document the way S3 does for a
// bucket policy and compiles it; Policy.Evaluate answers one request in
// memory without allocation-heavy work, so a compiled policy can sit on
// the GET/PUT path. It knows nothing about HTTP or storage: the caller
// says which action, resource, principal and condition values a request
// has.
package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxBucketPolicySize is S3's limit on a bucket policy document.
const MaxBucketPolicySize = 20 << 10

// Versions of the policy language. Policy variables are substituted only
// in 2012-10-17 documents, as in AWS.
const (
	Version2012 = "2012-10-17"
	Version2008 = "2008-10-17"
)

// Error is a policy document S3 would refuse (MalformedPolicy).
type Error struct{ Message string }

func (e *Error) Error() string { return "malformed policy: " + e.Message }

func malformed(format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}

// Effect of a statement.
type Effect bool

const (
	Deny  Effect = false
	Allow Effect = true
)

// Decision is the outcome of evaluating a policy for one request.
type Decision int

const (
	// NotApplicable: no statement matched; other grants (ACLs) decide.
	NotApplicable Decision = iota
	// Allowed: an Allow statement matched and no Deny did.
	Allowed
	// Denied: a Deny statement matched, which no grant overrides.
	Denied
)

func (d Decision) String() string {
	switch d {
	case Allowed:
		return "allow"
	case Denied:
		return "deny"
	}
	return "not-applicable"
}

// Policy is a parsed, validated policy.
type Policy struct {
	Version    string
	ID         string
	Statements []Statement
}

// Statement is one compiled statement.
type Statement struct {
	Sid    string
	Effect Effect
	// principals: nil when the statement has none (identity policies);
	// notPrincipal inverts the set.
	principals   *principalSet
	notPrincipal bool
	actions      []pattern // lower-cased
	notAction    bool
	resources    []pattern
	notResource  bool
	conditions   []condition
}

// ParseOptions says what kind of document is parsed.
type ParseOptions struct {
	// Bucket, when set, parses a bucket policy of that bucket: each
	// statement needs a Principal or NotPrincipal, and every resource
	// must be the bucket or objects in it.
	Bucket string
	// Identity parses an identity policy (attached to users and groups,
	// or narrowing an access key or a session): no Principal, and the
	// server's "admin:" actions are allowed beside S3's.
	Identity bool
	// Stored re-reads a bucket policy stored by an earlier release, which
	// accepted NotPrincipal with Allow: such a statement keeps meaning
	// what it meant then (everyone but the principals named) instead of
	// making the stored document unreadable. PutBucketPolicy never sets it.
	Stored bool
}

// Parse validates and compiles a policy document.
func Parse(doc []byte, opts ParseOptions) (*Policy, error) {
	p, err := parse(doc, opts)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func parse(doc []byte, opts ParseOptions) (*Policy, *Error) {
	trimmed := bytes.TrimSpace(doc)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, malformed("Policies must be valid JSON and the first byte must be '{'")
	}
	if opts.Bucket != "" && len(doc) > MaxBucketPolicySize {
		return nil, malformed("Policy exceeds the maximum allowed document size.")
	}
	var raw map[string]json.RawMessage
	if err := strictDecode(trimmed, &raw); err != nil {
		return nil, malformed("This policy contains invalid Json")
	}
	p := &Policy{Version: Version2008}
	var stmts []json.RawMessage
	for k, v := range raw {
		switch k {
		case "Version":
			if err := json.Unmarshal(v, &p.Version); err != nil || (p.Version != Version2012 && p.Version != Version2008) {
				return nil, malformed("The policy must contain a valid version string")
			}
		case "Id":
			if err := json.Unmarshal(v, &p.ID); err != nil {
				return nil, malformed("Id must be a string")
			}
		case "Statement":
			list, err := objectOrList(v)
			if err != nil {
				return nil, malformed("Statement must be an object or a list of objects")
			}
			stmts = list
		default:
			return nil, malformed("Unknown field %s", truncate(k))
		}
	}
	if len(stmts) == 0 {
		return nil, malformed("Missing required field Statement")
	}
	sids := map[string]bool{}
	for _, s := range stmts {
		st, err := parseStatement(s, p.Version, opts)
		if err != nil {
			return nil, err
		}
		if st.Sid != "" {
			if sids[st.Sid] {
				return nil, malformed("Statement IDs (SID) in a single policy must be unique")
			}
			sids[st.Sid] = true
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

// strictDecode decodes one JSON value and refuses trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err == nil {
		return fmt.Errorf("trailing data")
	}
	return nil
}

func objectOrList(v json.RawMessage) ([]json.RawMessage, error) {
	t := bytes.TrimSpace(v)
	if len(t) > 0 && t[0] == '{' {
		return []json.RawMessage{t}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(t, &list); err != nil {
		return nil, err
	}
	for _, e := range list {
		if e = bytes.TrimSpace(e); len(e) == 0 || e[0] != '{' {
			return nil, fmt.Errorf("not an object")
		}
	}
	return list, nil
}

// stringOrList reads a JSON string or list of strings (numbers and bools
// are taken as their text, as AWS does in conditions).
func stringOrList(v json.RawMessage) ([]string, error) {
	t := bytes.TrimSpace(v)
	if len(t) > 0 && t[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(t, &items); err != nil {
			return nil, err
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, err := scalar(it)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalar(t)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func scalar(v json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return "", err
	}
	switch t := x.(type) {
	case string:
		return t, nil
	case json.Number:
		return t.String(), nil
	case bool:
		return strconv.FormatBool(t), nil
	}
	return "", fmt.Errorf("not a scalar")
}

func parseStatement(data json.RawMessage, version string, opts ParseOptions) (Statement, *Error) {
	var raw map[string]json.RawMessage
	if err := strictDecode(data, &raw); err != nil {
		return Statement{}, malformed("This policy contains invalid Json")
	}
	var st Statement
	var hasEffect, hasAction, hasResource, hasPrincipal bool
	var actions, resources []string
	for k, v := range raw {
		var err error
		switch k {
		case "Sid":
			if json.Unmarshal(v, &st.Sid) != nil {
				return st, malformed("Sid must be a string")
			}
		case "Effect":
			var e string
			if json.Unmarshal(v, &e) != nil || (e != "Allow" && e != "Deny") {
				return st, malformed("Invalid effect: %s", truncate(string(v)))
			}
			st.Effect, hasEffect = e == "Allow", true
		case "Principal", "NotPrincipal":
			if hasPrincipal {
				return st, malformed("A statement may have Principal or NotPrincipal, not both")
			}
			st.principals, err = parsePrincipal(v)
			if err != nil {
				return st, malformed("Invalid principal in policy")
			}
			st.notPrincipal, hasPrincipal = k == "NotPrincipal", true
		case "Action", "NotAction":
			if hasAction {
				return st, malformed("A statement may have Action or NotAction, not both")
			}
			if actions, err = stringOrList(v); err != nil || len(actions) == 0 {
				return st, malformed("Policy has invalid action")
			}
			st.notAction, hasAction = k == "NotAction", true
		case "Resource", "NotResource":
			if hasResource {
				return st, malformed("A statement may have Resource or NotResource, not both")
			}
			if resources, err = stringOrList(v); err != nil || len(resources) == 0 {
				return st, malformed("Policy has invalid resource")
			}
			st.notResource, hasResource = k == "NotResource", true
		case "Condition":
			var cerr *Error
			if st.conditions, cerr = parseConditions(v, version == Version2012); cerr != nil {
				return st, cerr
			}
		default:
			return st, malformed("Unknown field %s", truncate(k))
		}
	}
	switch {
	case !hasEffect:
		return st, malformed("Missing required field Effect")
	case !hasAction:
		return st, malformed("Missing required field Action")
	case opts.Bucket != "" && !hasPrincipal:
		return st, malformed("Missing required field Principal")
	case opts.Bucket != "" && !hasResource:
		return st, malformed("Missing required field Resource")
	case opts.Identity && hasPrincipal:
		return st, malformed("Policy document should not specify a principal.")
	case st.notPrincipal && st.Effect == Allow && !opts.Stored:
		// IAM: "NotPrincipal must be used with "Effect":"Deny". Using it
		// with "Effect":"Allow" is not supported."
		return st, malformed("NotPrincipal is supported only with Effect Deny")
	}
	vars := version == Version2012
	adminOnly := !st.notAction
	for _, a := range actions {
		if !validAction(a, opts.Identity) {
			return st, malformed("Policy has invalid action")
		}
		adminOnly = adminOnly && isAdminAction(a)
	}
	// An identity policy's S3 statements name their resources, as in
	// IAM; admin actions act on the server and need none.
	if !hasResource && !adminOnly {
		return st, malformed("Missing required field Resource")
	}
	for _, a := range actions {
		st.actions = append(st.actions, compilePattern(strings.ToLower(a), false))
	}
	for _, r := range resources {
		if err := checkResource(r, opts.Bucket); err != nil {
			return st, err
		}
		st.resources = append(st.resources, compilePattern(r, vars))
	}
	if opts.Bucket != "" && !st.notAction && !st.notResource {
		if err := actionsApply(actions, resources); err != nil {
			return st, err
		}
	}
	return st, nil
}

// checkResource accepts S3 ARNs; in a bucket policy, only the bucket
// itself and objects in it.
func checkResource(r, bucket string) *Error {
	if r == "*" {
		if bucket != "" {
			return malformed("Policy has invalid resource")
		}
		return nil
	}
	rest, ok := strings.CutPrefix(r, "arn:aws:s3:::")
	if !ok || rest == "" {
		return malformed("Policy has invalid resource")
	}
	if bucket == "" {
		return nil
	}
	b, _, _ := strings.Cut(rest, "/")
	if !compilePattern(b, false).match(bucket, nil) {
		return malformed("Policy has invalid resource")
	}
	return nil
}

// actionsApply refuses, as S3 does, a statement with an action that
// none of its resources can be the subject of (s3:GetObject on the
// bucket ARN alone).
func actionsApply(actions, resources []string) *Error {
	var bucketRes, objectRes bool
	for _, r := range resources {
		rest := strings.TrimPrefix(r, "arn:aws:s3:::")
		if _, key, ok := strings.Cut(rest, "/"); ok && key != "" {
			objectRes = true
		} else {
			bucketRes = true
			if strings.ContainsAny(rest, "*?") {
				objectRes = true // a wildcard bucket part may span objects
			}
		}
	}
	for _, a := range actions {
		kind := actionKind(a)
		if (kind == onObject && !objectRes) || (kind == onBucket && !bucketRes) {
			return malformed("Action does not apply to any resource(s) in statement")
		}
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
