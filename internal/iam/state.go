package iam

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// state is the identity store's document, stored whole as one config
// document through engine.WriteConfig (on the drives, or in a cluster's
// Raft group): small (a user is a few
// hundred bytes), changed rarely, and read at start into memory.
// Secrets inside it are sealed (crypt.go).
type state struct {
	// Check is the keyring's check value: it tells at start whether the
	// key material is the one the secrets were sealed with.
	Check      string                `json:"check"`
	Users      map[string]*User      `json:"users"`
	Groups     map[string]*Group     `json:"groups"`
	Policies   map[string]*Policy    `json:"policies"`
	AccessKeys map[string]*AccessKey `json:"accessKeys"`
	// LDAPPolicies map a directory DN (normalized, a user's or a
	// group's) to policy names (ldap.go).
	LDAPPolicies map[string][]string `json:"ldapPolicies,omitempty"`
}

// Status values of users, groups and access keys.
const (
	StatusEnabled  = "enabled"
	StatusDisabled = "disabled"
)

// User is a user of the identity store; its name is its access key.
type User struct {
	Name         string    `json:"name"`
	SealedSecret string    `json:"secret"`
	Status       string    `json:"status"`
	Policies     []string  `json:"policies,omitempty"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
}

// Group collects users that share policies.
type Group struct {
	Name     string    `json:"name"`
	Members  []string  `json:"members,omitempty"`
	Policies []string  `json:"policies,omitempty"`
	Status   string    `json:"status"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// Policy is a named (managed) identity policy.
type Policy struct {
	Name     string    `json:"name"`
	Document string    `json:"document"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	// Builtin policies come with the server and cannot be changed.
	Builtin bool `json:"-"`
}

// AccessKey is a credential for an application, bound to a parent user
// whose permissions it carries, optionally narrowed by its own policy
// and limited in time.
type AccessKey struct {
	AccessKey    string     `json:"accessKey"`
	SealedSecret string     `json:"secret"`
	Parent       string     `json:"parent"`
	Name         string     `json:"name,omitempty"`
	Description  string     `json:"description,omitempty"`
	Policy       string     `json:"policy,omitempty"`
	Expiry       *time.Time `json:"expiry,omitempty"`
	Status       string     `json:"status"`
	Created      time.Time  `json:"created"`
	// LDAPUser is the directory user name of a key whose Parent is a
	// directory DN (ldap.go).
	LDAPUser string `json:"ldapUser,omitempty"`
}

func newState() *state {
	return &state{Users: map[string]*User{}, Groups: map[string]*Group{},
		Policies: map[string]*Policy{}, AccessKeys: map[string]*AccessKey{}}
}

// normalize fills the maps a decoded document may lack.
func (s *state) normalize() {
	if s.Users == nil {
		s.Users = map[string]*User{}
	}
	if s.Groups == nil {
		s.Groups = map[string]*Group{}
	}
	if s.Policies == nil {
		s.Policies = map[string]*Policy{}
	}
	if s.AccessKeys == nil {
		s.AccessKeys = map[string]*AccessKey{}
	}
}

// groupsOf lists the groups user belongs to.
func (s *state) groupsOf(user string) []string {
	var out []string
	for name, g := range s.Groups {
		if slices.Contains(g.Members, user) {
			out = append(out, name)
		}
	}
	return out
}

// nameRE is what IAM allows in group and policy names.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9+=,.@_-]{1,128}$`)

func checkName(kind, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: %s name %q must be 1 to 128 letters, digits or +=,.@_-", ErrInvalid, kind, name)
	}
	return nil
}

// remove is list without v (list is changed: it belongs to a copy of
// the state).
func remove(list []string, v string) []string {
	return slices.DeleteFunc(list, func(x string) bool { return x == v })
}
