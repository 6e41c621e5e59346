package notify

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ConfigError is a bucket notification configuration S3 refuses: Code
// is the S3 error code (InvalidArgument, MalformedXML), Message S3's
// text. It never echoes more than the offending name.
type ConfigError struct {
	Code    string
	Message string
}

func (e *ConfigError) Error() string { return e.Code + ": " + e.Message }

func invalid(format string, args ...any) error {
	return &ConfigError{Code: "InvalidArgument", Message: fmt.Sprintf(format, args...)}
}

func malformed() error {
	return &ConfigError{Code: "MalformedXML", Message: "The XML you provided was not well-formed or did not validate against our published schema"}
}

// ErrUnknownDestination is the message S3 answers for a configuration
// naming a destination it cannot validate (an ARN no target has).
const ErrUnknownDestination = "Unable to validate the following destination configurations"

// Limits of a configuration document.
const (
	maxRules     = 100
	maxFilterLen = 1024
)

// Rule is one Queue, Topic or CloudFunction configuration: the events
// it subscribes (patterns, "s3:ObjectCreated:*" or a full name), its key
// filter and its destination.
type Rule struct {
	// Kind is the element it came in: "Queue", "Topic" or "CloudFunction".
	Kind   string
	ID     string
	Events []string
	Prefix string
	Suffix string
	// ARN is the destination as written; Target is its target's key
	// ("<ID>:<kind>"), the same for every accepted spelling.
	ARN    string
	Target string
}

// Config is a bucket's parsed notification configuration.
type Config struct {
	Rules []Rule
}

// XML documents. Elements are matched in any namespace.
type xmlConfig struct {
	XMLName xml.Name  `xml:"NotificationConfiguration"`
	NS      string    `xml:"xmlns,attr,omitempty"`
	Queues  []xmlRule `xml:"QueueConfiguration"`
	Topics  []xmlRule `xml:"TopicConfiguration"`
	Lambdas []xmlRule `xml:"CloudFunctionConfiguration"`
	// EventBridgeConfiguration is accepted and ignored on input (no
	// EventBridge here); it is not stored.
	EventBridge []struct{} `xml:"EventBridgeConfiguration"`
}

type xmlRule struct {
	ID            string     `xml:"Id,omitempty"`
	Filter        *xmlFilter `xml:"Filter,omitempty"`
	Queue         string     `xml:"Queue,omitempty"`
	Topic         string     `xml:"Topic,omitempty"`
	CloudFunction string     `xml:"CloudFunction,omitempty"`
	Events        []string   `xml:"Event"`
}

type xmlFilter struct {
	S3Key xmlS3Key `xml:"S3Key"`
}

type xmlS3Key struct {
	Rules []xmlFilterRule `xml:"FilterRule"`
}

type xmlFilterRule struct {
	Name  string `xml:"Name"`
	Value string `xml:"Value"`
}

// ParseConfig decodes and validates a NotificationConfiguration as S3
// does. known reports whether a target key ("<ID>:<kind>", see
// ParseARN) exists; a destination it does not know is refused with
// InvalidArgument ErrUnknownDestination. A nil known skips that check
// (a stored document, validated when it was put).
func ParseConfig(doc []byte, known func(target string) bool) (*Config, error) {
	var x xmlConfig
	dec := xml.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&x); err != nil {
		return nil, malformed()
	}
	// Nothing but white space may follow the document.
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, malformed()
		}
		if cd, ok := tok.(xml.CharData); !ok || len(bytes.TrimSpace(cd)) != 0 {
			if _, ok := tok.(xml.Comment); !ok {
				return nil, malformed()
			}
		}
	}
	c := &Config{}
	add := func(kind string, rs []xmlRule, arnOf func(xmlRule) string) error {
		for _, r := range rs {
			rule, err := parseRule(kind, r, arnOf(r))
			if err != nil {
				return err
			}
			c.Rules = append(c.Rules, rule)
		}
		return nil
	}
	if err := add("Queue", x.Queues, func(r xmlRule) string { return r.Queue }); err != nil {
		return nil, err
	}
	if err := add("Topic", x.Topics, func(r xmlRule) string { return r.Topic }); err != nil {
		return nil, err
	}
	if err := add("CloudFunction", x.Lambdas, func(r xmlRule) string { return r.CloudFunction }); err != nil {
		return nil, err
	}
	if len(c.Rules) > maxRules {
		return nil, invalid("A notification configuration holds at most %d configurations", maxRules)
	}
	ids := map[string]bool{}
	var unknown []string
	for i, r := range c.Rules {
		if r.ID != "" {
			if ids[r.ID] {
				return nil, invalid("Configurations must have unique IDs: %q is repeated", r.ID)
			}
			ids[r.ID] = true
		}
		if known != nil && !known(r.Target) {
			unknown = append(unknown, r.ARN)
		}
		for _, o := range c.Rules[:i] {
			if o.Target == r.Target && sharesEvent(o.Events, r.Events) && overlaps(o, r) {
				return nil, invalid("Configurations overlap. Configurations on the same bucket cannot share a common event type.")
			}
		}
	}
	if len(unknown) > 0 {
		return nil, invalid("%s", ErrUnknownDestination)
	}
	return c, nil
}

func parseRule(kind string, r xmlRule, arn string) (Rule, error) {
	if arn == "" || len(r.Events) == 0 {
		return Rule{}, malformed()
	}
	if len(r.ID) > 255 {
		return Rule{}, invalid("The Id of a configuration is at most 255 characters")
	}
	target, err := ParseARN(arn)
	if err != nil {
		return Rule{}, invalid("%s", ErrUnknownDestination)
	}
	rule := Rule{Kind: kind, ID: r.ID, ARN: arn, Target: target}
	seen := map[string]bool{}
	for _, e := range r.Events {
		e = strings.TrimSpace(e)
		if !validPattern(e) {
			return Rule{}, invalid("The event %q is not supported for notifications", clip(e))
		}
		if !seen[e] {
			seen[e] = true
			rule.Events = append(rule.Events, e)
		}
	}
	if r.Filter != nil {
		var havePrefix, haveSuffix bool
		for _, fr := range r.Filter.S3Key.Rules {
			if len(fr.Value) > maxFilterLen {
				return Rule{}, invalid("The filter value cannot be longer than %d characters", maxFilterLen)
			}
			switch strings.ToLower(fr.Name) {
			case "prefix":
				if havePrefix {
					return Rule{}, invalid("Cannot specify more than one prefix rule in a filter.")
				}
				havePrefix, rule.Prefix = true, fr.Value
			case "suffix":
				if haveSuffix {
					return Rule{}, invalid("Cannot specify more than one suffix rule in a filter.")
				}
				haveSuffix, rule.Suffix = true, fr.Value
			default:
				return Rule{}, invalid("filter rule name must be either prefix or suffix")
			}
		}
	}
	return rule, nil
}

// clip shortens a hostile name for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// ParseARN reads a destination ARN and returns its target's key,
// "<ID>:<kind>". Accepted: arn:minio:sqs:<region>:<ID>:<kind> (MinIO's
// form, region usually empty), the same with arn:shardstore, and sns
// or lambda for the service (Topic and CloudFunction configurations).
func ParseARN(arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || (parts[1] != "minio" && parts[1] != "shardstore") {
		return "", fmt.Errorf("notify: ARN %q is not arn:minio:sqs::<ID>:<type>", clip(arn))
	}
	switch parts[2] {
	case "sqs", "sns", "lambda":
	default:
		return "", fmt.Errorf("notify: ARN %q names service %q", clip(arn), clip(parts[2]))
	}
	id, kind := parts[4], parts[5]
	if !validName(id) || !validName(kind) {
		return "", fmt.Errorf("notify: ARN %q has a bad ID or type", clip(arn))
	}
	return id + ":" + kind, nil
}

// ARN is a target's ARN in MinIO's form.
func ARN(id, kind string) string { return "arn:minio:sqs::" + id + ":" + kind }

// validName: a target ID or kind: 1-64 of [A-Za-z0-9_-].
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// sharesEvent reports whether two event pattern lists can match one
// event name.
func sharesEvent(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			for _, n := range eventNames {
				if patternMatches(x, n) && patternMatches(y, n) {
					return true
				}
			}
		}
	}
	return false
}

// overlaps reports whether some key can pass both rules' filters.
func overlaps(a, b Rule) bool {
	prefixes := strings.HasPrefix(a.Prefix, b.Prefix) || strings.HasPrefix(b.Prefix, a.Prefix)
	suffixes := strings.HasSuffix(a.Suffix, b.Suffix) || strings.HasSuffix(b.Suffix, a.Suffix)
	return prefixes && suffixes
}

// Match is the rules of c an event name on key fires: one per target,
// with the spelling of the name the rule subscribed (see Event names in
// the package comment).
func (c *Config) Match(ev Name, key string) []Matched {
	if c == nil {
		return nil
	}
	var out []Matched
	seen := map[string]bool{}
	for _, r := range c.Rules {
		if seen[r.Target] || !strings.HasPrefix(key, r.Prefix) || !strings.HasSuffix(key, r.Suffix) {
			continue
		}
		if name, ok := r.fires(ev); ok {
			seen[r.Target] = true
			out = append(out, Matched{Target: r.Target, ID: r.ID, EventName: name})
		}
	}
	return out
}

// Matched is one target an event goes to, the rule's ID and the name
// the event is sent with.
type Matched struct {
	Target    string
	ID        string
	EventName string
}

func (r Rule) fires(ev Name) (string, bool) {
	info, ok := names[ev]
	if !ok {
		return "", false
	}
	for _, spelled := range append([]string{string(ev)}, info.aliases...) {
		for _, p := range r.Events {
			if patternMatches(p, spelled) {
				return spelled, true
			}
		}
	}
	return "", false
}

// Marshal is c's canonical document (with S3's namespace when ns is
// set): the rules as they were put, in Queue, Topic, CloudFunction
// order.
func (c *Config) Marshal(ns string) []byte {
	x := xmlConfig{NS: ns}
	for _, r := range c.Rules {
		xr := xmlRule{ID: r.ID, Events: r.Events}
		if r.Prefix != "" || r.Suffix != "" {
			xr.Filter = &xmlFilter{}
			if r.Prefix != "" {
				xr.Filter.S3Key.Rules = append(xr.Filter.S3Key.Rules, xmlFilterRule{Name: "Prefix", Value: r.Prefix})
			}
			if r.Suffix != "" {
				xr.Filter.S3Key.Rules = append(xr.Filter.S3Key.Rules, xmlFilterRule{Name: "Suffix", Value: r.Suffix})
			}
		}
		switch r.Kind {
		case "Topic":
			xr.Topic = r.ARN
			x.Topics = append(x.Topics, xr)
		case "CloudFunction":
			xr.CloudFunction = r.ARN
			x.Lambdas = append(x.Lambdas, xr)
		default:
			xr.Queue = r.ARN
			x.Queues = append(x.Queues, xr)
		}
	}
	out, err := xml.Marshal(x)
	if err != nil {
		// Only strings and slices of them: cannot fail.
		panic(fmt.Sprintf("notify: marshal configuration: %v", err))
	}
	return out
}
