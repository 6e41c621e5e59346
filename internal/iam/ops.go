package iam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/shardstore/shardstore/internal/policy"
)

// The administrative operations. Each takes the actor (who asks, for the
// audit record) and changes the stored document as one update.

// UserInfo describes a user, without its secret.
type UserInfo struct {
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	Policies   []string  `json:"policies"`
	Groups     []string  `json:"groups"`
	AccessKeys int       `json:"accessKeys"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
}

// GroupInfo describes a group.
type GroupInfo struct {
	Name     string    `json:"name"`
	Status   string    `json:"status"`
	Members  []string  `json:"members"`
	Policies []string  `json:"policies"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// PolicyInfo describes a managed policy.
type PolicyInfo struct {
	Name     string          `json:"name"`
	Builtin  bool            `json:"builtin,omitempty"`
	Document json.RawMessage `json:"document"`
	Users    []string        `json:"users"`
	Groups   []string        `json:"groups"`
	Created  *time.Time      `json:"created,omitempty"`
	Updated  *time.Time      `json:"updated,omitempty"`
}

// AccessKeyInfo describes an access key, without its secret.
type AccessKeyInfo struct {
	AccessKey   string          `json:"accessKey"`
	Parent      string          `json:"parent"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Status      string          `json:"status"`
	Expiry      *time.Time      `json:"expiry,omitempty"`
	Expired     bool            `json:"expired,omitempty"`
	Policy      json.RawMessage `json:"policy,omitempty"`
	Created     time.Time       `json:"created"`
}

// NewAccessKey asks for an access key. AccessKey and SecretKey are
// generated when empty.
type NewAccessKey struct {
	Parent      string     `json:"parent"`
	AccessKey   string     `json:"accessKey,omitempty"`
	SecretKey   string     `json:"secretKey,omitempty"`
	Name        string     `json:"name,omitempty"`
	Description string     `json:"description,omitempty"`
	Policy      string     `json:"policy,omitempty"`
	Expiry      *time.Time `json:"expiry,omitempty"`
	// Status is the key's status from its first moment: "" or
	// "enabled", or "disabled" (an import of a key its source had
	// disabled must never let it sign a request, not even briefly).
	Status string `json:"status,omitempty"`
	// LDAPUsername names the directory user when Parent is its DN (by
	// default, the name last seen signing in with that DN).
	LDAPUsername string `json:"ldapUsername,omitempty"`
}

// Credentials are a new access key and its secret, shown once.
type Credentials struct {
	AccessKey    string     `json:"accessKey"`
	SecretKey    string     `json:"secretKey"`
	SessionToken string     `json:"sessionToken,omitempty"`
	Expiration   *time.Time `json:"expiration,omitempty"`
}

// Limits on documents, as IAM's: managed policies 6 144 characters, an
// access key's own policy 2 048 (a session policy's limit).
const (
	maxManagedPolicy = 6144
	maxInlinePolicy  = 2048
	maxDescription   = 256
	// maxAccessKeysPerUser bounds what any user (who may create keys for
	// itself) can add to the store.
	maxAccessKeysPerUser = 100
)

// PolicyError is a policy document the store refuses: malformed, or too
// large. The message is the one S3 clients are shown.
type PolicyError struct{ Message string }

func (e *PolicyError) Error() string { return "malformed policy: " + e.Message }

// checkPolicy validates an identity policy document of at most max
// characters (whitespace outside strings not counted, as IAM counts).
func checkPolicy(doc string, max int) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(doc)); err == nil && compact.Len() > max {
		return &PolicyError{Message: fmt.Sprintf("Policy document is %d characters; the limit is %d", compact.Len(), max)}
	}
	if _, err := policy.Parse([]byte(doc), policy.ParseOptions{Identity: true}); err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			return &PolicyError{Message: pe.Message}
		}
		return err
	}
	return nil
}

// checkUserName validates a user name, which is also its access key.
func (s *Store) checkUserName(name string) error {
	if len(name) < 3 || len(name) > 128 {
		return fmt.Errorf("%w: user name (its access key) must be 3 to 128 characters", ErrInvalid)
	}
	for _, r := range name {
		if r == '/' || r == ',' || r == '=' || r == ':' || unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII {
			return fmt.Errorf("%w: user name %q may not contain %q", ErrInvalid, name, r)
		}
	}
	return nil
}

func checkSecret(secret string) error {
	if len(secret) < 8 || len(secret) > 1024 {
		return fmt.Errorf("%w: a secret key must be 8 to 1024 characters", ErrInvalid)
	}
	for _, r := range secret {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%w: a secret key may not contain whitespace or control characters", ErrInvalid)
		}
	}
	return nil
}

// keyTaken reports whether an access key is in use anywhere.
func (s *Store) keyTaken(st *state, ak string) bool {
	_, user := st.Users[ak]
	_, key := st.AccessKeys[ak]
	return user || key || s.opts.Taken(ak)
}

// AddUser creates an enabled user whose access key is name; an empty
// secret is generated. It returns the secret.
func (s *Store) AddUser(ctx context.Context, actor, name, secret string) (string, error) {
	if err := s.checkUserName(name); err != nil {
		return "", err
	}
	if secret == "" {
		secret = newSecret()
	} else if err := checkSecret(secret); err != nil {
		return "", err
	}
	return secret, s.update(ctx, AuditRecord{Actor: actor, Action: "user.add", Target: name}, func(st *state) error {
		if s.keyTaken(st, name) {
			return fmt.Errorf("%w: access key %q is already in use", ErrExists, name)
		}
		now := s.now().UTC()
		st.Users[name] = &User{Name: name, SealedSecret: seal(s.keys.secrets, []byte(secret), name),
			Status: StatusEnabled, Created: now, Updated: now}
		return nil
	})
}

// SetUserStatus enables or disables a user; a disabled user's access
// keys and sessions stop working at once.
func (s *Store) SetUserStatus(ctx context.Context, actor, name string, enabled bool) error {
	action, status := statusChange("user", enabled)
	return s.update(ctx, AuditRecord{Actor: actor, Action: action, Target: name}, func(st *state) error {
		u, ok := st.Users[name]
		if !ok {
			return fmt.Errorf("user %q: %w", name, ErrNotFound)
		}
		u.Status, u.Updated = status, s.now().UTC()
		return nil
	})
}

// RemoveUser deletes a user with its access keys and group memberships.
func (s *Store) RemoveUser(ctx context.Context, actor, name string) error {
	return s.update(ctx, AuditRecord{Actor: actor, Action: "user.remove", Target: name}, func(st *state) error {
		if _, ok := st.Users[name]; !ok {
			return fmt.Errorf("user %q: %w", name, ErrNotFound)
		}
		delete(st.Users, name)
		for ak, k := range st.AccessKeys {
			if k.Parent == name {
				delete(st.AccessKeys, ak)
			}
		}
		for _, g := range st.Groups {
			g.Members = remove(g.Members, name)
		}
		return nil
	})
}

func (s *Store) userInfo(st *state, u *User) UserInfo {
	n := 0
	for _, k := range st.AccessKeys {
		if k.Parent == u.Name {
			n++
		}
	}
	groups := st.groupsOf(u.Name)
	sort.Strings(groups)
	return UserInfo{Name: u.Name, Status: u.Status, Policies: nonNil(u.Policies), Groups: nonNil(groups),
		AccessKeys: n, Created: u.Created, Updated: u.Updated}
}

// Users lists every user by name.
func (s *Store) Users() []UserInfo {
	st := s.snap.Load().st
	out := []UserInfo{}
	for _, name := range sortedKeys(st.Users) {
		out = append(out, s.userInfo(st, st.Users[name]))
	}
	return out
}

// User describes one user.
func (s *Store) User(name string) (UserInfo, error) {
	st := s.snap.Load().st
	u, ok := st.Users[name]
	if !ok {
		return UserInfo{}, fmt.Errorf("user %q: %w", name, ErrNotFound)
	}
	return s.userInfo(st, u), nil
}

// UpdateGroupMembers adds and removes members; adding to a group that
// does not exist creates it.
func (s *Store) UpdateGroupMembers(ctx context.Context, actor, group string, add, del []string) error {
	if err := checkName("group", group); err != nil {
		return err
	}
	detail := fmt.Sprintf("add %s; remove %s", strings.Join(add, ","), strings.Join(del, ","))
	return s.update(ctx, AuditRecord{Actor: actor, Action: "group.members", Target: group, Detail: detail}, func(st *state) error {
		g, ok := st.Groups[group]
		if !ok {
			if len(add) == 0 {
				return fmt.Errorf("group %q: %w", group, ErrNotFound)
			}
			now := s.now().UTC()
			g = &Group{Name: group, Status: StatusEnabled, Created: now}
			st.Groups[group] = g
		}
		for _, m := range add {
			if _, ok := st.Users[m]; !ok {
				return fmt.Errorf("user %q: %w", m, ErrNotFound)
			}
			if !slices.Contains(g.Members, m) {
				g.Members = append(g.Members, m)
			}
		}
		for _, m := range del {
			if !slices.Contains(g.Members, m) {
				return fmt.Errorf("%w: user %q is not a member of group %q", ErrNotFound, m, group)
			}
			g.Members = remove(g.Members, m)
		}
		sort.Strings(g.Members)
		g.Updated = s.now().UTC()
		return nil
	})
}

// SetGroupStatus enables or disables a group: a disabled group's
// policies no longer apply to its members.
func (s *Store) SetGroupStatus(ctx context.Context, actor, group string, enabled bool) error {
	action, status := statusChange("group", enabled)
	return s.update(ctx, AuditRecord{Actor: actor, Action: action, Target: group}, func(st *state) error {
		g, ok := st.Groups[group]
		if !ok {
			return fmt.Errorf("group %q: %w", group, ErrNotFound)
		}
		g.Status, g.Updated = status, s.now().UTC()
		return nil
	})
}

// RemoveGroup deletes a group that has no members.
func (s *Store) RemoveGroup(ctx context.Context, actor, group string) error {
	return s.update(ctx, AuditRecord{Actor: actor, Action: "group.remove", Target: group}, func(st *state) error {
		g, ok := st.Groups[group]
		if !ok {
			return fmt.Errorf("group %q: %w", group, ErrNotFound)
		}
		if len(g.Members) > 0 {
			return fmt.Errorf("%w: group %q still has members (%s); remove them first", ErrConflict, group, strings.Join(g.Members, ", "))
		}
		delete(st.Groups, group)
		return nil
	})
}

func groupInfo(g *Group) GroupInfo {
	return GroupInfo{Name: g.Name, Status: g.Status, Members: nonNil(g.Members), Policies: nonNil(g.Policies),
		Created: g.Created, Updated: g.Updated}
}

// Groups lists every group.
func (s *Store) Groups() []GroupInfo {
	st := s.snap.Load().st
	out := []GroupInfo{}
	for _, name := range sortedKeys(st.Groups) {
		out = append(out, groupInfo(st.Groups[name]))
	}
	return out
}

// Group describes one group.
func (s *Store) Group(name string) (GroupInfo, error) {
	g, ok := s.snap.Load().st.Groups[name]
	if !ok {
		return GroupInfo{}, fmt.Errorf("group %q: %w", name, ErrNotFound)
	}
	return groupInfo(g), nil
}

// PutPolicy creates or replaces a managed policy; users and groups it
// is attached to get the new permissions at once.
func (s *Store) PutPolicy(ctx context.Context, actor, name, doc string) error {
	if err := checkName("policy", name); err != nil {
		return err
	}
	if _, builtin := builtinPolicies[name]; builtin {
		return fmt.Errorf("%w: %q is a built-in policy and cannot be changed", ErrConflict, name)
	}
	if err := checkPolicy(doc, maxManagedPolicy); err != nil {
		return err
	}
	return s.update(ctx, AuditRecord{Actor: actor, Action: "policy.put", Target: name}, func(st *state) error {
		now := s.now().UTC()
		if p, ok := st.Policies[name]; ok {
			p.Document, p.Updated = doc, now
			return nil
		}
		st.Policies[name] = &Policy{Name: name, Document: doc, Created: now, Updated: now}
		return nil
	})
}

// RemovePolicy deletes a managed policy that nothing is attached to.
func (s *Store) RemovePolicy(ctx context.Context, actor, name string) error {
	if _, builtin := builtinPolicies[name]; builtin {
		return fmt.Errorf("%w: %q is a built-in policy and cannot be removed", ErrConflict, name)
	}
	return s.update(ctx, AuditRecord{Actor: actor, Action: "policy.remove", Target: name}, func(st *state) error {
		if _, ok := st.Policies[name]; !ok {
			return fmt.Errorf("policy %q: %w", name, ErrNotFound)
		}
		if users, groups := attachedTo(st, name); len(users)+len(groups) > 0 {
			return fmt.Errorf("%w: policy %q is attached to users [%s] and groups [%s]; detach it first",
				ErrConflict, name, strings.Join(users, " "), strings.Join(groups, " "))
		}
		if dns := ldapMappedTo(st, name); len(dns) > 0 {
			return fmt.Errorf("%w: policy %q is mapped to the LDAP DNs [%s]; detach it first (shardstore admin idp ldap policy detach)",
				ErrConflict, name, strings.Join(dns, " | "))
		}
		delete(st.Policies, name)
		return nil
	})
}

func attachedTo(st *state, name string) (users, groups []string) {
	for _, n := range sortedKeys(st.Users) {
		if slices.Contains(st.Users[n].Policies, name) {
			users = append(users, n)
		}
	}
	for _, n := range sortedKeys(st.Groups) {
		if slices.Contains(st.Groups[n].Policies, name) {
			groups = append(groups, n)
		}
	}
	return users, groups
}

func (s *Store) policyInfo(st *state, name string) (PolicyInfo, bool) {
	users, groups := attachedTo(st, name)
	info := PolicyInfo{Name: name, Users: nonNil(users), Groups: nonNil(groups)}
	if doc, ok := builtinPolicies[name]; ok {
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(doc))
		info.Builtin, info.Document = true, compact.Bytes()
		return info, true
	}
	p, ok := st.Policies[name]
	if !ok {
		return PolicyInfo{}, false
	}
	info.Document = json.RawMessage(p.Document)
	if !json.Valid(info.Document) {
		info.Document, _ = json.Marshal(p.Document)
	}
	created, updated := p.Created, p.Updated
	info.Created, info.Updated = &created, &updated
	return info, true
}

// Policies lists the built-in and managed policies.
func (s *Store) Policies() []PolicyInfo {
	st := s.snap.Load().st
	names := sortedKeys(st.Policies)
	for n := range builtinPolicies {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []PolicyInfo{}
	for _, n := range names {
		if info, ok := s.policyInfo(st, n); ok {
			out = append(out, info)
		}
	}
	return out
}

// Policy describes one policy.
func (s *Store) Policy(name string) (PolicyInfo, error) {
	info, ok := s.policyInfo(s.snap.Load().st, name)
	if !ok {
		return PolicyInfo{}, fmt.Errorf("policy %q: %w", name, ErrNotFound)
	}
	return info, nil
}

// AttachPolicies attaches (attach true) or detaches policies to or from
// a user or a group (exactly one of them).
func (s *Store) AttachPolicies(ctx context.Context, actor string, policies []string, user, group string, attach bool) error {
	if (user == "") == (group == "") {
		return fmt.Errorf("%w: name a user or a group, not both", ErrInvalid)
	}
	if len(policies) == 0 {
		return fmt.Errorf("%w: name at least one policy", ErrInvalid)
	}
	action, target := "policy.detach", "user:"+user
	if attach {
		action = "policy.attach"
	}
	if group != "" {
		target = "group:" + group
	}
	rec := AuditRecord{Actor: actor, Action: action, Target: target, Detail: strings.Join(policies, ",")}
	return s.update(ctx, rec, func(st *state) error {
		var list *[]string
		if user != "" {
			u, ok := st.Users[user]
			if !ok {
				return fmt.Errorf("user %q: %w", user, ErrNotFound)
			}
			list = &u.Policies
			u.Updated = s.now().UTC()
		} else {
			g, ok := st.Groups[group]
			if !ok {
				return fmt.Errorf("group %q: %w", group, ErrNotFound)
			}
			list = &g.Policies
			g.Updated = s.now().UTC()
		}
		for _, p := range policies {
			_, managed := st.Policies[p]
			_, builtin := builtinPolicies[p]
			switch {
			case attach && !managed && !builtin:
				return fmt.Errorf("policy %q: %w", p, ErrNotFound)
			case attach && !slices.Contains(*list, p):
				*list = append(*list, p)
			case !attach && !slices.Contains(*list, p):
				return fmt.Errorf("%w: policy %q is not attached to %s", ErrNotFound, p, target)
			case !attach:
				*list = remove(*list, p)
			}
		}
		sort.Strings(*list)
		return nil
	})
}

// CreateAccessKey creates an access key for req.Parent and returns its
// credentials (the only time the secret is shown).
func (s *Store) CreateAccessKey(ctx context.Context, actor string, req NewAccessKey) (Credentials, error) {
	if req.AccessKey == "" {
		req.AccessKey = newAccessKey("SSAK")
	} else if err := s.checkUserName(req.AccessKey); err != nil {
		return Credentials{}, err
	}
	if req.SecretKey == "" {
		req.SecretKey = newSecret()
	} else if err := checkSecret(req.SecretKey); err != nil {
		return Credentials{}, err
	}
	if req.Policy != "" {
		if err := checkPolicy(req.Policy, maxInlinePolicy); err != nil {
			return Credentials{}, err
		}
	}
	if len(req.Name) > 64 || len(req.Description) > maxDescription {
		return Credentials{}, fmt.Errorf("%w: name is at most 64 and description %d characters", ErrInvalid, maxDescription)
	}
	if req.Expiry != nil {
		if !req.Expiry.After(s.now()) {
			return Credentials{}, fmt.Errorf("%w: the expiry %s is not in the future", ErrInvalid, req.Expiry.UTC().Format(time.RFC3339))
		}
		t := req.Expiry.UTC()
		req.Expiry = &t
	}
	switch req.Status {
	case "":
		req.Status = StatusEnabled
	case StatusEnabled, StatusDisabled:
	default:
		return Credentials{}, fmt.Errorf("%w: status %q: want %q or %q", ErrInvalid, req.Status, StatusEnabled, StatusDisabled)
	}
	var ldapUser string
	if _, ok := s.snap.Load().st.Users[req.Parent]; !ok {
		dn, name, err := s.ldapKeyOwner(req.Parent, req.LDAPUsername)
		if err != nil {
			return Credentials{}, err
		}
		if name != "" {
			req.Parent, ldapUser = dn, name
		}
	}
	rec := AuditRecord{Actor: actor, Action: "accesskey.create", Target: req.AccessKey, Detail: "parent " + req.Parent}
	err := s.update(ctx, rec, func(st *state) error {
		if _, ok := st.Users[req.Parent]; !ok && ldapUser == "" {
			return fmt.Errorf("user %q: %w", req.Parent, ErrNotFound)
		}
		if s.keyTaken(st, req.AccessKey) {
			return fmt.Errorf("%w: access key %q is already in use", ErrExists, req.AccessKey)
		}
		n := 0
		for _, k := range st.AccessKeys {
			if k.Parent == req.Parent {
				n++
			}
		}
		if n >= maxAccessKeysPerUser {
			return fmt.Errorf("%w: user %q already has %d access keys, the most a user may have", ErrConflict, req.Parent, n)
		}
		st.AccessKeys[req.AccessKey] = &AccessKey{AccessKey: req.AccessKey, Parent: req.Parent,
			SealedSecret: seal(s.keys.secrets, []byte(req.SecretKey), req.AccessKey),
			Name:         req.Name, Description: req.Description, Policy: req.Policy, Expiry: req.Expiry,
			Status: req.Status, Created: s.now().UTC(), LDAPUser: ldapUser}
		return nil
	})
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{AccessKey: req.AccessKey, SecretKey: req.SecretKey, Expiration: req.Expiry}, nil
}

// AccessKeys lists access keys, of one parent user when parent is set.
func (s *Store) AccessKeys(parent string) []AccessKeyInfo {
	st := s.snap.Load().st
	out := []AccessKeyInfo{}
	now := s.now()
	for _, ak := range sortedKeys(st.AccessKeys) {
		k := st.AccessKeys[ak]
		if parent != "" && k.Parent != parent {
			continue
		}
		info := AccessKeyInfo{AccessKey: ak, Parent: k.Parent, Name: k.Name, Description: k.Description,
			Status: k.Status, Expiry: k.Expiry, Created: k.Created}
		info.Expired = k.Expiry != nil && !now.Before(*k.Expiry)
		if k.Policy != "" {
			info.Policy = json.RawMessage(k.Policy)
		}
		out = append(out, info)
	}
	return out
}

// AccessKeyParent names the user an access key belongs to.
func (s *Store) AccessKeyParent(ak string) (string, error) {
	k, ok := s.snap.Load().st.AccessKeys[ak]
	if !ok {
		return "", fmt.Errorf("access key %q: %w", ak, ErrNotFound)
	}
	return k.Parent, nil
}

// RemoveAccessKey deletes an access key; it stops working at once.
func (s *Store) RemoveAccessKey(ctx context.Context, actor, ak string) error {
	return s.update(ctx, AuditRecord{Actor: actor, Action: "accesskey.remove", Target: ak}, func(st *state) error {
		if _, ok := st.AccessKeys[ak]; !ok {
			return fmt.Errorf("access key %q: %w", ak, ErrNotFound)
		}
		delete(st.AccessKeys, ak)
		return nil
	})
}

// SetAccessKeyStatus enables or disables an access key.
func (s *Store) SetAccessKeyStatus(ctx context.Context, actor, ak string, enabled bool) error {
	action, status := statusChange("accesskey", enabled)
	return s.update(ctx, AuditRecord{Actor: actor, Action: action, Target: ak}, func(st *state) error {
		k, ok := st.AccessKeys[ak]
		if !ok {
			return fmt.Errorf("access key %q: %w", ak, ErrNotFound)
		}
		k.Status = status
		return nil
	})
}

// statusChange names the audit action and the status of enabling or
// disabling something of kind.
func statusChange(kind string, enabled bool) (action, status string) {
	if enabled {
		return kind + ".enable", StatusEnabled
	}
	return kind + ".disable", StatusDisabled
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
