package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shardstore/shardstore/internal/policy"
)

// translatePolicy turns a MinIO identity policy (or a service account's
// session policy) into one shardstore stores, never granting more than
// MinIO did: actions shardstore does not have (admin:ConfigUpdate,
// kms:*, ...) are taken out of Action lists, an Allow statement left
// with no action or that shardstore cannot read is dropped (access only
// narrows), and a Deny statement shardstore cannot read refuses the
// whole policy, since dropping it would widen access. Taking an action
// shardstore lacks out of a Deny or a NotAction changes nothing here: no
// request of this server is that action. notes say what was changed; an
// error says why the policy cannot be carried at all.
func translatePolicy(doc []byte) (out []byte, notes []string, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var stmts []map[string]json.RawMessage
	raw := bytes.TrimSpace(top["Statement"])
	switch {
	case len(raw) == 0:
		return nil, nil, errors.New("no Statement")
	case raw[0] == '{':
		var one map[string]json.RawMessage
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, nil, fmt.Errorf("statement: %w", err)
		}
		stmts = append(stmts, one)
	default:
		if err := json.Unmarshal(raw, &stmts); err != nil {
			return nil, nil, fmt.Errorf("statements: %w", err)
		}
	}
	version := top["Version"]
	if len(version) == 0 {
		version = json.RawMessage(`"2012-10-17"`)
	}
	var kept []map[string]json.RawMessage
	for i, st := range stmts {
		name := fmt.Sprintf("statement %d", i+1)
		if sid, ok := st["Sid"]; ok {
			var s string
			if json.Unmarshal(sid, &s) == nil && s != "" {
				name = fmt.Sprintf("statement %q", s)
			}
		}
		var effect string
		json.Unmarshal(st["Effect"], &effect)
		deny := effect == "Deny"
		field := "Action"
		if _, ok := st["NotAction"]; ok {
			field = "NotAction"
		}
		actions, err := stringList(st[field])
		if err != nil {
			if deny {
				return nil, notes, fmt.Errorf("%s (Deny): %s: %w", name, field, err)
			}
			notes = append(notes, fmt.Sprintf("%s dropped: %s: %v", name, field, err))
			continue
		}
		var known, unknown []string
		for _, a := range actions {
			if knownAction(a) {
				known = append(known, a)
			} else {
				unknown = append(unknown, a)
			}
		}
		if len(unknown) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s %s: no such action here, left out", name, field, strings.Join(unknown, ", ")))
		}
		switch {
		case len(known) == 0 && field == "Action":
			notes = append(notes, fmt.Sprintf("%s (%s) dropped: none of its actions exists here", name, effect))
			continue
		case len(known) == 0:
			// NotAction of actions that do not exist here: every action.
			delete(st, "NotAction")
			st["Action"] = json.RawMessage(`"*"`)
		default:
			b, _ := json.Marshal(known)
			st[field] = b
		}
		one, _ := json.Marshal(map[string]any{"Version": version, "Statement": []any{st}})
		if _, err := policy.Parse(one, policy.ParseOptions{Identity: true}); err != nil {
			if deny {
				return nil, notes, fmt.Errorf("%s (Deny) cannot be carried, and leaving it out would allow more: %w", name, err)
			}
			notes = append(notes, fmt.Sprintf("%s (Allow) dropped: %v", name, err))
			continue
		}
		kept = append(kept, st)
	}
	if len(kept) == 0 {
		return nil, notes, errors.New("nothing in it is possible here")
	}
	top["Statement"], _ = json.Marshal(kept)
	top["Version"] = version
	out, err = json.Marshal(top)
	if err != nil {
		return nil, notes, err
	}
	if _, err := policy.Parse(out, policy.ParseOptions{Identity: true}); err != nil {
		return nil, notes, fmt.Errorf("not accepted here: %w", err)
	}
	return out, notes, nil
}

// stringList reads a JSON string or list of strings.
func stringList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("missing")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// knownAction reports whether shardstore's identity policies know the
// action (or the pattern matches one of its actions).
func knownAction(a string) bool {
	doc, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Effect": "Allow", "Action": []string{a}, "Resource": []string{"arn:aws:s3:::*"}}}})
	_, err := policy.Parse(doc, policy.ParseOptions{Identity: true})
	return err == nil
}

// samePolicy reports whether two policy documents are the same JSON
// value (ignoring layout and the order of object keys).
func samePolicy(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// uniq is a list without duplicates, in order.
func uniq(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
