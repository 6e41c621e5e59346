package policy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
)

// opFamily is how a condition operator compares.
type opFamily uint8

const (
	famString opFamily = iota
	famStringIgnoreCase
	famStringLike
	famNumeric
	famDate
	famBool
	famBinary
	famIP
	famArn
	famArnLike
	famNull
)

// cmp is the comparison of numeric and date operators.
type cmp uint8

const (
	cmpEq cmp = iota
	cmpLt
	cmpLe
	cmpGt
	cmpGe
)

type operatorDef struct {
	family opFamily
	negate bool
	cmp    cmp
}

// operators are the condition operators, by lower-cased name.
var operators = map[string]operatorDef{
	"stringequals":              {family: famString},
	"stringnotequals":           {family: famString, negate: true},
	"stringequalsignorecase":    {family: famStringIgnoreCase},
	"stringnotequalsignorecase": {family: famStringIgnoreCase, negate: true},
	"stringlike":                {family: famStringLike},
	"stringnotlike":             {family: famStringLike, negate: true},
	"numericequals":             {family: famNumeric, cmp: cmpEq},
	"numericnotequals":          {family: famNumeric, cmp: cmpEq, negate: true},
	"numericlessthan":           {family: famNumeric, cmp: cmpLt},
	"numericlessthanequals":     {family: famNumeric, cmp: cmpLe},
	"numericgreaterthan":        {family: famNumeric, cmp: cmpGt},
	"numericgreaterthanequals":  {family: famNumeric, cmp: cmpGe},
	"dateequals":                {family: famDate, cmp: cmpEq},
	"datenotequals":             {family: famDate, cmp: cmpEq, negate: true},
	"datelessthan":              {family: famDate, cmp: cmpLt},
	"datelessthanequals":        {family: famDate, cmp: cmpLe},
	"dategreaterthan":           {family: famDate, cmp: cmpGt},
	"dategreaterthanequals":     {family: famDate, cmp: cmpGe},
	"bool":                      {family: famBool},
	"binaryequals":              {family: famBinary},
	"ipaddress":                 {family: famIP},
	"notipaddress":              {family: famIP, negate: true},
	"arnequals":                 {family: famArn},
	"arnnotequals":              {family: famArn, negate: true},
	"arnlike":                   {family: famArnLike},
	"arnnotlike":                {family: famArnLike, negate: true},
	"null":                      {family: famNull},
}

// s3ConditionKeys are the S3-specific condition keys a policy may name
// (lower-cased); any aws:* global key is accepted.
var s3ConditionKeys = map[string]bool{
	"s3:prefix": true, "s3:delimiter": true, "s3:max-keys": true,
	"s3:x-amz-acl": true, "s3:x-amz-content-sha256": true, "s3:x-amz-copy-source": true,
	"s3:x-amz-metadata-directive": true, "s3:x-amz-server-side-encryption": true,
	"s3:x-amz-server-side-encryption-aws-kms-key-id": true, "s3:x-amz-storage-class": true,
	"s3:x-amz-server-side-encryption-customer-algorithm": true,
	"s3:x-amz-website-redirect-location":                 true, "s3:versionid": true,
	"s3:locationconstraint": true, "s3:signatureversion": true, "s3:signatureage": true,
	"s3:authtype": true, "s3:tlsversion": true, "s3:objectcreationoperation": true,
	"s3:x-amz-grant-read": true, "s3:x-amz-grant-write": true, "s3:x-amz-grant-read-acp": true,
	"s3:x-amz-grant-write-acp": true, "s3:x-amz-grant-full-control": true,
	"s3:x-amz-object-ownership": true, "s3:requestobjecttagkeys": true,
	"s3:object-lock-mode": true, "s3:object-lock-retain-until-date": true,
	"s3:object-lock-remaining-retention-days": true, "s3:object-lock-legal-hold": true,
	"s3:checksumalgorithm": true, "s3:if-match": true, "s3:if-none-match": true,
}

// s3ConditionKeyPrefixes are S3 keys with a name after a slash.
var s3ConditionKeyPrefixes = []string{"s3:existingobjecttag/", "s3:requestobjecttag/", "s3:resourceaccount"}

func validConditionKey(k string) bool {
	switch {
	case strings.HasPrefix(k, "aws:") && len(k) > len("aws:"):
		return true
	case s3ConditionKeys[k]:
		return true
	}
	for _, p := range s3ConditionKeyPrefixes {
		if strings.HasPrefix(k, p) && len(k) > len(p) {
			return true
		}
	}
	return false
}

// setQualifier is ForAllValues / ForAnyValue, for multi-valued keys.
type setQualifier uint8

const (
	single setQualifier = iota
	forAllValues
	forAnyValue
)

// condition is one (operator, key, values) test.
type condition struct {
	op       operatorDef
	ifExists bool
	set      setQualifier
	key      string // lower-cased
	values   []string
	patterns []pattern      // string-like and arn-like families
	nums     []float64      // numeric
	dates    []time.Time    // date
	nets     []netip.Prefix // ip
}

func parseConditions(v json.RawMessage, vars bool) ([]condition, *Error) {
	var blocks map[string]map[string]json.RawMessage
	if err := json.Unmarshal(v, &blocks); err != nil {
		return nil, malformed("Condition must be an object of operator blocks")
	}
	// A stable order keeps evaluation and errors deterministic.
	ops := make([]string, 0, len(blocks))
	for op := range blocks {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var out []condition
	for _, opName := range ops {
		name := strings.ToLower(opName)
		c := condition{}
		switch {
		case strings.HasPrefix(name, "forallvalues:"):
			c.set, name = forAllValues, strings.TrimPrefix(name, "forallvalues:")
		case strings.HasPrefix(name, "foranyvalue:"):
			c.set, name = forAnyValue, strings.TrimPrefix(name, "foranyvalue:")
		}
		if n, ok := strings.CutSuffix(name, "ifexists"); ok && n != "null" {
			c.ifExists, name = true, n
		}
		def, ok := operators[name]
		if !ok {
			return nil, malformed("Invalid Condition type : %s", truncate(opName))
		}
		c.op = def
		keys := make([]string, 0, len(blocks[opName]))
		for k := range blocks[opName] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			kc := c
			kc.key = strings.ToLower(key)
			if !validConditionKey(kc.key) {
				return nil, malformed("Policy has an invalid condition key")
			}
			vals, err := stringOrList(blocks[opName][key])
			if err != nil || len(vals) == 0 {
				return nil, malformed("Invalid Condition value for %s", truncate(key))
			}
			kc.values = vals
			if perr := kc.compile(vars); perr != nil {
				return nil, perr
			}
			out = append(out, kc)
		}
	}
	return out, nil
}

func (c *condition) compile(vars bool) *Error {
	bad := func() *Error { return malformed("Invalid Condition value for %s", c.key) }
	switch c.op.family {
	case famStringLike, famArnLike:
		for _, v := range c.values {
			c.patterns = append(c.patterns, compilePattern(v, vars))
		}
	case famString, famStringIgnoreCase, famArn:
		for _, v := range c.values {
			c.patterns = append(c.patterns, compilePattern(v, vars && c.op.family != famArn))
		}
	case famNumeric:
		for _, v := range c.values {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return bad()
			}
			c.nums = append(c.nums, n)
		}
	case famDate:
		for _, v := range c.values {
			t, ok := parseDate(v)
			if !ok {
				return bad()
			}
			c.dates = append(c.dates, t)
		}
	case famBool, famNull:
		for _, v := range c.values {
			if _, err := strconv.ParseBool(v); err != nil {
				return bad()
			}
		}
	case famBinary:
		for _, v := range c.values {
			if _, err := base64.StdEncoding.DecodeString(v); err != nil {
				return bad()
			}
		}
	case famIP:
		for _, v := range c.values {
			p, err := parseCIDR(v)
			if err != nil {
				return bad()
			}
			c.nets = append(c.nets, p)
		}
	}
	return nil
}

func parseCIDR(v string) (netip.Prefix, error) {
	if strings.Contains(v, "/") {
		p, err := netip.ParsePrefix(v)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// parseDate reads ISO 8601 (with or without time) or epoch seconds.
func parseDate(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

// holds evaluates the condition against the request's values.
func (c *condition) holds(r *Request) bool {
	vals, present := r.Conditions[c.key]
	if c.op.family == famNull {
		want, _ := strconv.ParseBool(c.values[0])
		return want == !present
	}
	if !present || len(vals) == 0 {
		switch {
		case c.ifExists, c.set == forAllValues:
			return true
		case c.set == forAnyValue:
			return false
		}
		// A missing key matches no value: positive operators fail and
		// negated ones hold, as in AWS.
		return c.op.negate
	}
	match := func(v string) bool { return c.matchOne(v, r) }
	switch c.set {
	case forAllValues:
		for _, v := range vals {
			if match(v) == c.op.negate {
				return false
			}
		}
		return true
	case forAnyValue:
		for _, v := range vals {
			if match(v) != c.op.negate {
				return true
			}
		}
		return false
	}
	found := false
	for _, v := range vals {
		if match(v) {
			found = true
			break
		}
	}
	return found != c.op.negate
}

// matchOne reports whether request value v matches any policy value
// (the positive sense of the operator).
func (c *condition) matchOne(v string, r *Request) bool {
	switch c.op.family {
	case famString, famArn:
		for _, p := range c.patterns {
			if !p.plain {
				if lit, ok := p.literal(r.Conditions); ok && lit == v {
					return true
				}
				continue
			}
			if p.text == v {
				return true
			}
		}
	case famStringIgnoreCase:
		for _, p := range c.patterns {
			if lit, ok := p.literal(r.Conditions); ok && strings.EqualFold(lit, v) {
				return true
			}
		}
	case famStringLike, famArnLike:
		for _, p := range c.patterns {
			if p.match(v, r.Conditions) {
				return true
			}
		}
	case famNumeric:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return false
		}
		for _, want := range c.nums {
			if compare(c.op.cmp, cmpFloat(n, want)) {
				return true
			}
		}
	case famDate:
		t, ok := parseDate(v)
		if !ok {
			return false
		}
		for _, want := range c.dates {
			if compare(c.op.cmp, t.Compare(want)) {
				return true
			}
		}
	case famBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false
		}
		for _, want := range c.values {
			if w, _ := strconv.ParseBool(want); w == b {
				return true
			}
		}
	case famBinary:
		for _, want := range c.values {
			w, _ := base64.StdEncoding.DecodeString(want)
			if bytes.Equal(w, []byte(v)) {
				return true
			}
		}
	case famIP:
		a, err := netip.ParseAddr(v)
		if err != nil {
			return false
		}
		a = a.Unmap()
		for _, n := range c.nets {
			if n.Contains(a) {
				return true
			}
		}
	}
	return false
}

// literal is the pattern's text with variables substituted and no
// wildcard meaning (string equality operators treat * literally).
func (p pattern) literal(vars map[string][]string) (string, bool) {
	if p.plain {
		return p.text, true
	}
	var b strings.Builder
	for _, t := range p.tokens {
		switch t.kind {
		case literal:
			b.WriteString(t.text)
		case star:
			b.WriteByte('*')
		case question:
			b.WriteByte('?')
		case variable:
			v := vars[t.text]
			if len(v) != 1 {
				return "", false
			}
			b.WriteString(v[0])
		}
	}
	return b.String(), true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compare(op cmp, c int) bool {
	switch op {
	case cmpEq:
		return c == 0
	case cmpLt:
		return c < 0
	case cmpLe:
		return c <= 0
	case cmpGt:
		return c > 0
	case cmpGe:
		return c >= 0
	}
	return false
}
