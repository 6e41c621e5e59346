package policy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// principalSet is who a statement's Principal names: everyone ("*",
// anonymous callers included), users by access key (from
// "arn:aws:iam::<account>:user/<access key>" or a bare access key), the
// root user ("arn:aws:iam::<account>:root"), or canonical user ids.
type principalSet struct {
	anyone    bool
	root      bool
	users     map[string]bool
	canonical map[string]bool
}

func parsePrincipal(v json.RawMessage) (*principalSet, error) {
	ps := &principalSet{users: map[string]bool{}, canonical: map[string]bool{}}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if s != "*" {
			return nil, fmt.Errorf("principal string must be *")
		}
		ps.anyone = true
		return ps, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || len(m) == 0 {
		return nil, fmt.Errorf("principal must be * or an object")
	}
	for kind, raw := range m {
		vals, err := stringOrList(raw)
		if err != nil || len(vals) == 0 {
			return nil, fmt.Errorf("principal values")
		}
		for _, val := range vals {
			switch kind {
			case "AWS":
				if err := ps.addAWS(val); err != nil {
					return nil, err
				}
			case "CanonicalUser":
				if val == "" {
					return nil, fmt.Errorf("empty canonical user")
				}
				ps.canonical[val] = true
			default:
				// Service and Federated principals name callers this
				// server never has; refuse rather than ignore them.
				return nil, fmt.Errorf("principal type %q", kind)
			}
		}
	}
	return ps, nil
}

func (ps *principalSet) addAWS(v string) error {
	if v == "*" {
		ps.anyone = true
		return nil
	}
	if rest, ok := strings.CutPrefix(v, "arn:aws:iam::"); ok {
		_, name, ok := strings.Cut(rest, ":")
		switch {
		case !ok:
			return fmt.Errorf("iam arn %q", v)
		case name == "root":
			ps.root = true
		case strings.HasPrefix(name, "user/") && len(name) > len("user/"):
			// Users may sit under a path (user/path/name): the last
			// segment is the name.
			ps.users[name[strings.LastIndex(name, "/")+1:]] = true
		default:
			return fmt.Errorf("iam arn %q", v)
		}
		return nil
	}
	if v == "" || strings.ContainsAny(v, ":/*?") {
		return fmt.Errorf("principal %q", v)
	}
	ps.users[v] = true
	return nil
}

// matches reports whether the set names the request's caller.
func (ps *principalSet) matches(r *Request) bool {
	switch {
	case ps.anyone:
		return true
	case r.Anonymous:
		return false
	case ps.root && r.Root:
		return true
	}
	return ps.users[r.AccessKey] || (r.CanonicalID != "" && ps.canonical[r.CanonicalID])
}

// Public reports whether the set is everyone.
func (ps *principalSet) public() bool { return ps != nil && ps.anyone }
