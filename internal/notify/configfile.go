package notify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Bounds of a configuration file.
const (
	maxConfigFile = 1 << 20
	maxConfigLine = 64 << 10
	maxFileSpecs  = 1000
)

// FromConfigFile reads targets from a configuration file in the format
// of `mc admin config export` (so a MinIO deployment's export can be
// given as it is):
//
//	# comment
//	notify_webhook:primary endpoint="https://h.example/e" auth_token="T" queue_limit="10000"
//	notify_kafka:1 brokers="k1:9092,k2:9092" topic="events" enable="on"
//	audit_webhook:siem endpoint="https://siem.example/in"
//
// A line is a subsystem (notify_<kind> or audit_<kind>, the kind's
// configuration name as in MINIO_NOTIFY_<KIND>), an optional
// ":<target ID>" (none is the default target "_"), and key=value
// settings, a value in double or single quotes when it has spaces. A
// target counts unless enable is off, or every value is empty (the
// disabled defaults an export lists). Lines of other subsystems, of
// kinds this server does not have, and settings a kind does not have
// are returned in ignored (line numbers and names, never values) for a
// warning. An error names the line and the setting, never a value.
func FromConfigFile(data []byte, kinds []Kind) (specs []Spec, ignored []string, err error) {
	if len(data) > maxConfigFile {
		return nil, nil, fmt.Errorf("notify: configuration file larger than %d bytes", maxConfigFile)
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxConfigLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, rest, _ := strings.Cut(line, " ")
		sub, id, hasID := strings.Cut(head, ":")
		audit := false
		switch {
		case strings.HasPrefix(sub, "notify_"):
			sub = strings.TrimPrefix(sub, "notify_")
		case strings.HasPrefix(sub, "audit_"):
			sub, audit = strings.TrimPrefix(sub, "audit_"), true
		default:
			ignored = append(ignored, fmt.Sprintf("line %d: subsystem %.64q", n, sub))
			continue
		}
		kind := kindNamed(kinds, sub)
		if kind.Name == "" {
			ignored = append(ignored, fmt.Sprintf("line %d: kind %.64q", n, sub))
			continue
		}
		if !hasID {
			id = DefaultID
		} else if !validName(id) {
			return nil, nil, fmt.Errorf("notify: configuration line %d: the target ID must be 1-64 letters, digits, '-' or '_'", n)
		}
		kvs, err := splitSettings(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("notify: configuration line %d: %w", n, err)
		}
		settings := map[string]string{}
		enable, anyValue := "", false
		for _, kv := range kvs {
			switch {
			case kv[0] == "enable":
				enable = kv[1]
			case hasField(kind, kv[0]):
				settings[kv[0]] = kv[1]
				anyValue = anyValue || strings.TrimSpace(kv[1]) != ""
			default:
				ignored = append(ignored, fmt.Sprintf("line %d: setting %.64q of %s", n, kv[0], kind.Name))
			}
		}
		if enable != "" {
			on, err := parseSwitch(enable)
			if err != nil {
				return nil, nil, fmt.Errorf("notify: configuration line %d: enable: %w", n, err)
			}
			if !on {
				continue
			}
		} else if !anyValue {
			continue
		}
		for _, f := range kind.Fields {
			if f.Required && strings.TrimSpace(settings[f.Name]) == "" {
				return nil, nil, fmt.Errorf("notify: configuration line %d: target %s of kind %s is enabled without %s", n, id, kind.Name, f.Name)
			}
		}
		key := TargetKey(id, kind.Name, audit)
		if prev, dup := seen[key]; dup {
			return nil, nil, fmt.Errorf("notify: configuration line %d: target %s of kind %s is already on line %d", n, id, kind.Name, prev)
		}
		seen[key] = n
		if len(specs) >= maxFileSpecs {
			return nil, nil, fmt.Errorf("notify: configuration file has more than %d targets", maxFileSpecs)
		}
		specs = append(specs, Spec{Kind: kind.Name, ID: id, Settings: settings, Audit: audit})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("notify: configuration file has a line longer than %d bytes", maxConfigLine)
		}
		return nil, nil, fmt.Errorf("notify: configuration file: %w", err)
	}
	return specs, ignored, nil
}

func hasField(k Kind, name string) bool {
	for _, f := range k.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// splitSettings splits `a=1 b="two words" c='x'` into pairs. Keys are
// lower-case names; a quoted value runs to its closing quote (no
// escapes, as MinIO writes them); control characters are refused.
func splitSettings(s string) ([][2]string, error) {
	var out [][2]string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out, nil
		}
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, errors.New("a setting without key=value")
		}
		key := s[:eq]
		for _, c := range key {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return nil, fmt.Errorf("setting name %.64q is not a lower-case name", key)
			}
		}
		s = s[eq+1:]
		var val string
		if s != "" && (s[0] == '"' || s[0] == '\'') {
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return nil, fmt.Errorf("setting %s: quote not closed", key)
			}
			val, s = s[1:1+end], s[2+end:]
			if s != "" && s[0] != ' ' && s[0] != '\t' {
				return nil, fmt.Errorf("setting %s: text after the closing quote", key)
			}
		} else {
			sp := strings.IndexAny(s, " \t")
			if sp < 0 {
				sp = len(s)
			}
			val, s = s[:sp], s[sp:]
		}
		for _, c := range val {
			if c < 0x20 || c == 0x7f {
				return nil, fmt.Errorf("setting %s: control character in the value", key)
			}
		}
		out = append(out, [2]string{key, val})
	}
}
