package auth

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Browser form uploads (S3's POST object) authenticate by form fields
// instead of headers: the client signs a base64 "policy" document that
// says until when the form may be used and which values its fields may
// take. SigV4 forms carry x-amz-algorithm, x-amz-credential, x-amz-date
// and x-amz-signature = hex(HMAC-SHA256(signing key, policy)); SigV2
// forms carry AWSAccessKeyId and signature = base64(HMAC-SHA1(secret,
// policy)). A form without a policy is anonymous (and may carry no
// signature); a form with a policy must carry its signature (400
// InvalidArgument naming the missing field, as S3 answers). The
// policy's own keys ("expiration", "conditions") are case-sensitive;
// the field names its conditions test are not.

// Codes only POST object uses.
const (
	CodeInvalidPolicyDocument = "InvalidPolicyDocument"
)

// maxPolicyConditions bounds the work a policy document can ask for.
const maxPolicyConditions = 1000

// PostForm holds a POST object form's fields, names lower-cased, values
// as sent. The caller sets "bucket" to the bucket the request targets,
// whatever the form said, so the policy's bucket condition is checked
// against where the object will really go.
type PostForm map[string]string

// PostUpload is what a verified form allows.
type PostUpload struct {
	Anonymous bool
	Identity  Identity
	// MinLength and MaxLength bound the uploaded file's size when the
	// policy has a content-length-range condition; MaxLength is -1
	// when it has none.
	MinLength, MaxLength int64
}

// postCondition is one policy condition: the form field Field (lower
// case, without "$") must equal Value ("eq") or start with it
// ("starts-with").
type postCondition struct {
	op, field, value string
	text             string // as S3 quotes it in errors
}

// postPolicy is a parsed policy document.
type postPolicy struct {
	expiration           time.Time
	conditions           []postCondition
	minLength, maxLength int64 // maxLength -1: no content-length-range
}

// exemptPostFields are the fields the policy need not mention: the
// signature and policy themselves, and the target bucket (this server
// takes it from the URL).
var exemptPostFields = map[string]bool{
	"policy": true, "x-amz-signature": true, "signature": true,
	"awsaccesskeyid": true, "file": true, "bucket": true,
}

func policyError(format string, args ...any) *Error {
	return newErr(CodeInvalidPolicyDocument, "Invalid Policy: "+format, args...)
}

func policyDenied(format string, args ...any) *Error {
	return newErr(CodeAccessDenied, "Invalid according to Policy: "+format, args...)
}

// parsePostPolicy decodes and parses a base64 policy document.
func parsePostPolicy(b64 string) (*postPolicy, *Error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, policyError("Invalid base64 encoding.")
	}
	// The document's own keys are case-sensitive, as in S3 ("EXPIRATION"
	// is no expiration); encoding/json would match struct tags without
	// case, so the top level is read as a map.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, policyError("Invalid JSON.")
	}
	var expiration string
	rawExp, ok := top["expiration"]
	if !ok || string(rawExp) == "null" {
		return nil, policyError("Policy missing expiration.")
	}
	if err := json.Unmarshal(rawExp, &expiration); err != nil {
		return nil, policyError("Invalid 'expiration' value: '%s'", truncate(string(rawExp)))
	}
	exp, err := time.Parse(time.RFC3339Nano, expiration)
	if err != nil {
		return nil, policyError("Invalid 'expiration' value: '%s'", truncate(expiration))
	}
	var conditions []json.RawMessage
	rawConds, ok := top["conditions"]
	if ok && string(rawConds) != "null" {
		if err := json.Unmarshal(rawConds, &conditions); err != nil {
			return nil, policyError("Invalid JSON.")
		}
	}
	if conditions == nil {
		return nil, policyError("Policy missing conditions.")
	}
	if len(conditions) > maxPolicyConditions {
		return nil, policyError("Too many conditions.")
	}
	p := &postPolicy{expiration: exp, maxLength: -1}
	for _, c := range conditions {
		if err := p.addCondition(c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// addCondition parses one condition: {"field": "value"} (an exact match)
// or ["eq"|"starts-with", "$field", "value"] or
// ["content-length-range", min, max].
func (p *postPolicy) addCondition(raw json.RawMessage) *Error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil || len(m) != 1 {
			return policyError("Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.")
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return policyError("Invalid Simple-Condition: value of %q must be a string.", truncate(k))
			}
			field := strings.ToLower(strings.TrimPrefix(k, "$"))
			p.conditions = append(p.conditions, postCondition{op: "eq", field: field, value: s,
				text: fmt.Sprintf(`["eq", "$%s", "%s"]`, k, s)})
		}
		return nil
	}
	var arr []any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&arr); err != nil || len(arr) != 3 {
		return policyError("Invalid Condition: each condition must be an object or an array of three elements.")
	}
	op, ok := arr[0].(string)
	if !ok {
		return policyError("Invalid Condition: the operation must be a string.")
	}
	op = strings.ToLower(op)
	if op == "content-length-range" {
		lo, okLo := policyInt(arr[1])
		hi, okHi := policyInt(arr[2])
		if !okLo || !okHi || lo > hi {
			return policyError("Invalid content-length-range: the bounds must be integers, the lower one first.")
		}
		p.minLength, p.maxLength = lo, hi
		return nil
	}
	name, okName := arr[1].(string)
	value, okValue := arr[2].(string)
	if !okName || !okValue || !strings.HasPrefix(name, "$") {
		return policyError("Invalid Condition: %q needs a \"$field\" and a string value.", truncate(op))
	}
	switch op {
	case "eq", "starts-with":
	default:
		return policyError("Invalid Condition: unknown operation %q.", truncate(op))
	}
	p.conditions = append(p.conditions, postCondition{op: op, field: strings.ToLower(name[1:]), value: value,
		text: fmt.Sprintf(`["%s", "%s", "%s"]`, op, name, value)})
	return nil
}

// policyInt reads a content-length-range bound: a JSON number or a
// string of digits, as some signers write it.
func policyInt(v any) (int64, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = x
	default:
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt64 {
			return 0, false
		}
		n = int64(f)
	}
	return n, true
}

// check enforces the policy on the form: not expired, every condition
// met, and every field the client sent named by some condition.
func (p *postPolicy) check(form PostForm, now time.Time) *Error {
	if !now.Before(p.expiration) {
		return policyDenied("Policy expired.")
	}
	named := map[string]bool{}
	for _, c := range p.conditions {
		named[c.field] = true
		v := form[c.field]
		ok := v == c.value
		if c.op == "starts-with" {
			ok = strings.HasPrefix(v, c.value)
		}
		if !ok {
			return policyDenied("Policy Condition failed: %s", c.text)
		}
	}
	var extra []string
	for name := range form {
		if exemptPostFields[name] || named[name] || strings.HasPrefix(name, "x-ignore-") {
			continue
		}
		extra = append(extra, name)
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return policyDenied("Extra input fields: %s", strings.Join(extra, ", "))
	}
	return nil
}

// VerifyPost authenticates a browser form upload: it checks the form's
// signature (SigV4 or SigV2) over its policy, then the policy itself. A
// form with neither is anonymous; a signature without a policy, or a
// policy without a signature, is refused. All failures are *Error values.
func (v *Verifier) VerifyPost(form PostForm) (*PostUpload, error) {
	up, err := v.verifyPost(form)
	if err != nil {
		return nil, err
	}
	if err := up.Identity.Refusal; err != nil {
		return nil, err
	}
	return up, nil
}

func (v *Verifier) verifyPost(form PostForm) (*PostUpload, *Error) {
	up := &PostUpload{Anonymous: true, MaxLength: -1}
	b64, hasPolicy := form["policy"]
	_, v4 := form["x-amz-signature"]
	_, v2 := form["signature"]
	switch {
	case v4 && v2:
		return nil, newErr(CodeInvalidArgument, "only one auth mechanism allowed; the form has both x-amz-signature and signature")
	case (v4 || v2) && !hasPolicy:
		return nil, missingPostField("policy")
	case hasPolicy && !v4 && !v2:
		// A policy is only ever checked for its signer: S3 requires the
		// signature fields with it (400), rather than treating the form
		// as anonymous.
		return nil, missingPostField(missingSigner(form))
	case v4:
		id, err := v.postSignatureV4(form)
		if err != nil {
			return nil, err
		}
		up.Anonymous, up.Identity = false, id
	case v2:
		id, err := v.postSignatureV2(form)
		if err != nil {
			return nil, err
		}
		up.Anonymous, up.Identity = false, id
	}
	if !hasPolicy {
		return up, nil
	}
	p, err := parsePostPolicy(b64)
	if err != nil {
		return nil, err
	}
	if err := p.check(form, v.now()); err != nil {
		return nil, err
	}
	up.MinLength, up.MaxLength = p.minLength, p.maxLength
	return up, nil
}

// missingSigner names the first signature field a form with a policy
// lacks: SigV4's when it has any SigV4 field, else SigV2's.
func missingSigner(form PostForm) string {
	for _, name := range []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date"} {
		if _, ok := form[name]; ok {
			return "X-Amz-Signature"
		}
	}
	if form["awsaccesskeyid"] == "" {
		return "AWSAccessKeyId"
	}
	return "Signature"
}

// missingPostField is S3's answer for a form without a required field.
func missingPostField(name string) *Error {
	return newErr(CodeInvalidArgument, "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", name)
}

// postSignatureV4 checks x-amz-signature over the policy.
func (v *Verifier) postSignatureV4(form PostForm) (Identity, *Error) {
	for _, name := range []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date"} {
		if form[name] == "" {
			return Identity{}, missingPostField(name)
		}
	}
	if form["x-amz-algorithm"] != algorithm {
		return Identity{}, newErr(CodeInvalidArgument, "Unsupported algorithm %q in x-amz-algorithm; only %s is supported", truncate(form["x-amz-algorithm"]), algorithm)
	}
	ak, s, err := parseCredential(form["x-amz-credential"], CodeInvalidArgument)
	if err != nil {
		return Identity{}, err
	}
	if err := v.checkRegion(s, CodeInvalidArgument); err != nil {
		return Identity{}, err
	}
	amzDate := form["x-amz-date"]
	if _, ok := parseAmzDate(amzDate); !ok {
		return Identity{}, newErr(CodeInvalidArgument, "x-amz-date must be in the ISO8601 basic format YYYYMMDD'T'HHMMSS'Z'")
	}
	if s.date != amzDate[:8] {
		return Identity{}, newErr(CodeInvalidArgument, "invalid credential date %q; it is not the same as x-amz-date %q", s.date, amzDate[:8])
	}
	id, lerr := v.lookup(ak, form["x-amz-security-token"])
	if lerr != nil {
		return Identity{}, lerr
	}
	want := hex.EncodeToString(hmacSHA256(signingKey(id.SecretKey, s), form["policy"]))
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(form["x-amz-signature"]))) != 1 {
		return Identity{}, signatureMismatch()
	}
	return id, nil
}

// postSignatureV2 checks signature over the policy.
func (v *Verifier) postSignatureV2(form PostForm) (Identity, *Error) {
	ak := form["awsaccesskeyid"]
	if ak == "" {
		return Identity{}, missingPostField("AWSAccessKeyId")
	}
	id, lerr := v.lookup(ak, form["x-amz-security-token"])
	if lerr != nil {
		return Identity{}, lerr
	}
	want := signV2([]byte(id.SecretKey), form["policy"])
	if subtle.ConstantTimeCompare([]byte(want), []byte(form["signature"])) != 1 {
		return Identity{}, signatureMismatch()
	}
	return id, nil
}
