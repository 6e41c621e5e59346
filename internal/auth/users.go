package auth

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Identity is an authenticated user.
type Identity struct {
	AccessKey, SecretKey, DisplayName string
	Root                              bool
	// The rest is set for identities of the IdentityStore only.
	//
	// User is the user whose permissions the credentials carry: the
	// user itself, or the parent of an access key or session. It is the
	// name policies see as ${aws:username} and as a principal.
	User string
	// Owner is the account recorded as the owner of what the identity
	// creates (buckets, objects): the root user's access key, as an
	// AWS account owns what its IAM users create.
	Owner string
	// Permissions decide what the identity may do.
	Permissions Permissions
	// Session marks temporary credentials (a session token came with
	// the request).
	Session bool
	// Claims are the policy variables of a federated identity, by key:
	// ldap:username and ldap:user (the DN) of a directory user's
	// credentials, jwt:sub and jwt:iss of an OpenID session.
	Claims map[string]string
	// Refusal, when set, is why these credentials may not be used (a
	// disabled user, an expired key). The verifier answers it only once
	// the signature has matched, so that nobody without the secret learns
	// the state of a key.
	Refusal error
}

// Limits on credentials. The minimums follow the brief (and MinIO's
// conventions that users migrating from it expect); the maximums only keep
// absurd input out of memory and out of signature scopes.
const (
	minAccessKeyLen = 3
	maxAccessKeyLen = 128
	minSecretKeyLen = 8
	maxSecretKeyLen = 1024
)

// Users is the credential store: the root user plus users loaded from files.
// It is safe for concurrent use; LoadFile may run while requests are verified.
type Users struct {
	mu    sync.RWMutex
	byKey map[string]Identity
}

// NewUsers returns a store holding root (marked Root). An empty root access
// key yields a store with no root user, which tests find convenient.
func NewUsers(root Identity) *Users {
	u := &Users{byKey: make(map[string]Identity)}
	if root.AccessKey != "" {
		root.Root = true
		u.byKey[root.AccessKey] = root
	}
	return u
}

// Add inserts one non-root user after validating its keys.
func (u *Users) Add(id Identity) error {
	if err := validateKeys(id.AccessKey, id.SecretKey); err != nil {
		return err
	}
	id.Root = false
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, dup := u.byKey[id.AccessKey]; dup {
		return fmt.Errorf("duplicate access key %q", id.AccessKey)
	}
	u.byKey[id.AccessKey] = id
	return nil
}

// LoadFile adds users from a file: one user per line
// "ACCESS_KEY SECRET_KEY [DISPLAY NAME...]"; '#' comments and blank lines are
// ignored. The file is loaded all-or-nothing: on any error (reported as
// "file:line: ...") no user from it is added.
func (u *Users) LoadFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("load users: %w", err)
	}
	defer f.Close()

	var parsed []Identity
	seen := make(map[string]int) // access key -> line, to name both lines of a duplicate
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return fmt.Errorf("%s:%d: want \"ACCESS_KEY SECRET_KEY [DISPLAY NAME]\", got %d field(s)", path, lineNo, len(fields))
		}
		ak, sk := fields[0], fields[1]
		if err := validateKeys(ak, sk); err != nil {
			return fmt.Errorf("%s:%d: %w", path, lineNo, err)
		}
		if prev, dup := seen[ak]; dup {
			return fmt.Errorf("%s:%d: duplicate access key %q (first on line %d)", path, lineNo, ak, prev)
		}
		seen[ak] = lineNo
		parsed = append(parsed, Identity{AccessKey: ak, SecretKey: sk, DisplayName: strings.Join(fields[2:], " ")})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, lineNo+1, err)
	}

	u.mu.Lock()
	defer u.mu.Unlock()
	for _, id := range parsed {
		if existing, dup := u.byKey[id.AccessKey]; dup {
			who := "an existing user"
			if existing.Root {
				who = "the root user"
			}
			return fmt.Errorf("%s:%d: duplicate access key %q (already used by %s)", path, seen[id.AccessKey], id.AccessKey, who)
		}
	}
	for _, id := range parsed {
		u.byKey[id.AccessKey] = id
	}
	return nil
}

// Lookup returns the identity owning accessKey.
func (u *Users) Lookup(accessKey string) (Identity, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	id, ok := u.byKey[accessKey]
	return id, ok
}

// AccessKeys lists the access keys of the store's users, root included,
// sorted. The S3 layer resolves the canonical user ids of ACL grants
// through it.
func (u *Users) AccessKeys() []string {
	u.mu.RLock()
	keys := make([]string, 0, len(u.byKey))
	for k := range u.byKey {
		keys = append(keys, k)
	}
	u.mu.RUnlock()
	sort.Strings(keys)
	return keys
}

// Len reports how many users (root included) the store holds.
func (u *Users) Len() int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return len(u.byKey)
}

// validateKeys checks key lengths and characters. Access keys travel inside
// the Credential scope ("AK/date/region/s3/aws4_request") and in query
// strings, so separators and control characters are refused up front.
func validateKeys(ak, sk string) error {
	switch {
	case len(ak) < minAccessKeyLen:
		return fmt.Errorf("access key %q is shorter than %d characters", ak, minAccessKeyLen)
	case len(ak) > maxAccessKeyLen:
		return fmt.Errorf("access key is longer than %d characters", maxAccessKeyLen)
	case len(sk) < minSecretKeyLen:
		return fmt.Errorf("secret key for %q is shorter than %d characters", ak, minSecretKeyLen)
	case len(sk) > maxSecretKeyLen:
		return fmt.Errorf("secret key for %q is longer than %d characters", ak, maxSecretKeyLen)
	}
	for _, r := range ak {
		if r == '/' || r == ',' || r == '=' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("access key %q contains %q, which is not allowed", ak, r)
		}
	}
	for _, r := range sk {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("secret key for %q contains whitespace or control characters", ak)
		}
	}
	return nil
}
