package minioexport

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Bounds on what a zip may make this package read.
const (
	MaxEntries   = 100000
	MaxEntrySize = 16 << 20
	MaxTotalSize = 256 << 20
)

// ErrFormat is wrapped by every error about the content of a zip.
var ErrFormat = errors.New("not a MinIO export")

func formatErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, a...)...)
}

// IAMDir is the folder of an IAM export's entries.
const IAMDir = "iam-assets"

// Names of an IAM export's entries (under IAMDir).
const (
	PoliciesFile      = "policies.json"
	UsersFile         = "users.json"
	GroupsFile        = "groups.json"
	ServiceAccounts   = "svcaccts.json"
	UserMappingsFile  = "user_mappings.json"
	GroupMappingsFile = "group_mappings.json"
	STSMappingsFile   = "stsuser_mappings.json"
)

// IAM is an IAM export.
type IAM struct {
	// Policies are the policy documents by name, as MinIO stored them
	// (its built-in ones included).
	Policies map[string]json.RawMessage
	Users    map[string]User
	Groups   map[string]Group
	// ServiceAccounts by access key.
	ServiceAccounts map[string]ServiceAccount
	// UserPolicies and GroupPolicies name the policies attached to a
	// user or group; STSUserPolicies those of users of an external
	// identity provider (LDAP, OpenID), which have no user record.
	UserPolicies, GroupPolicies, STSUserPolicies map[string][]string
	// Unknown lists entries this package does not know.
	Unknown []string
}

// User is a user of MinIO's internal identity provider.
type User struct {
	SecretKey string
	Enabled   bool
}

// Group is a group with its members.
type Group struct {
	Enabled bool
	Members []string
}

// ServiceAccount is an access key bound to a parent user.
type ServiceAccount struct {
	AccessKey, SecretKey, Parent string
	Name, Description            string
	Enabled                      bool
	// Policy is its own (session) policy, nil when it inherits its
	// parent's permissions unnarrowed.
	Policy json.RawMessage
	// Expiry is nil when the key does not expire.
	Expiry *time.Time
	// Groups are groups MinIO recorded on the key (keys of LDAP users).
	Groups []string
}

// Bucket configuration files of a bucket export.
const (
	PolicyFile       = "policy.json"
	LifecycleFile    = "lifecycle.xml"
	VersioningFile   = "versioning.xml"
	ObjectLockFile   = "object-lock.xml"
	TaggingFile      = "tagging.xml"
	EncryptionFile   = "bucket-encryption.xml"
	NotificationFile = "notification.xml"
	ReplicationFile  = "replication.xml"
	QuotaFile        = "quota.json"
	TargetsFile      = "bucket-targets.json"
)

// Bucket is one bucket's exported configuration, each document as MinIO
// wrote it (nil when absent).
type Bucket struct {
	Name                                      string
	Policy, Lifecycle, Versioning, ObjectLock []byte
	Tagging, Encryption, Notification         []byte
	Replication, Quota, Targets               []byte
	// Other holds files this package does not know, by name.
	Other map[string][]byte
}

// Buckets is a bucket metadata export.
type Buckets struct {
	Buckets map[string]*Bucket
}

// Names returns the bucket names, sorted.
func (b *Buckets) Names() []string {
	out := make([]string, 0, len(b.Buckets))
	for n := range b.Buckets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Kind of a zip: which export it is.
type Kind int

// The kinds of export.
const (
	KindIAM Kind = iota + 1
	KindBuckets
)

// Export is either kind of export, read by Read.
type Export struct {
	Kind    Kind
	IAM     *IAM
	Buckets *Buckets
}

// limits bound what one read may inflate.
type limits struct {
	entries          int
	entrySize, total int64
}

var defaultLimits = limits{entries: MaxEntries, entrySize: MaxEntrySize, total: MaxTotalSize}

// Read reads an export of either kind from a zip of size bytes.
func Read(r io.ReaderAt, size int64) (*Export, error) {
	return read(r, size, defaultLimits)
}

func read(r io.ReaderAt, size int64, lim limits) (*Export, error) {
	entries, err := readZip(r, size, lim)
	if err != nil {
		return nil, err
	}
	iam := false
	for name := range entries {
		if strings.HasPrefix(name, IAMDir+"/") {
			iam = true
			break
		}
	}
	if iam {
		x, err := decodeIAM(entries)
		if err != nil {
			return nil, err
		}
		return &Export{Kind: KindIAM, IAM: x}, nil
	}
	b, err := decodeBuckets(entries)
	if err != nil {
		return nil, err
	}
	return &Export{Kind: KindBuckets, Buckets: b}, nil
}

// ReadBytes reads an export held in memory.
func ReadBytes(data []byte) (*Export, error) {
	return Read(bytes.NewReader(data), int64(len(data)))
}

// readZip reads every file entry of a zip, within the bounds.
func readZip(r io.ReaderAt, size int64, lim limits) (map[string][]byte, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, formatErr("zip: %v", err)
	}
	if len(zr.File) > lim.entries {
		return nil, formatErr("%d entries, more than %d", len(zr.File), lim.entries)
	}
	out := make(map[string][]byte, len(zr.File))
	var total int64
	for _, f := range zr.File {
		name := f.Name
		if strings.HasSuffix(name, "/") && f.UncompressedSize64 == 0 {
			continue // a folder entry
		}
		if err := checkName(name); err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, formatErr("entry %q appears twice", name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, formatErr("entry %q: %v", name, err)
		}
		limit := min(lim.entrySize, lim.total-total)
		data, err := io.ReadAll(io.LimitReader(rc, limit+1))
		rc.Close()
		if err != nil {
			return nil, formatErr("entry %q: %v", name, err)
		}
		if int64(len(data)) > limit {
			return nil, formatErr("entry %q inflates past %d bytes (at most %d per entry, %d in all)", name, limit, lim.entrySize, lim.total)
		}
		total += int64(len(data))
		out[name] = data
	}
	return out, nil
}

// checkName refuses entry names that could mean a path outside the
// export or two names for one thing.
func checkName(name string) error {
	if name == "" || len(name) > 1024 || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\\x00") {
		return formatErr("entry name %q not accepted", name)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return formatErr("entry name %q not accepted", name)
		}
	}
	return nil
}

func decodeIAM(entries map[string][]byte) (*IAM, error) {
	x := &IAM{Policies: map[string]json.RawMessage{}, Users: map[string]User{}, Groups: map[string]Group{},
		ServiceAccounts: map[string]ServiceAccount{}, UserPolicies: map[string][]string{},
		GroupPolicies: map[string][]string{}, STSUserPolicies: map[string][]string{}}
	for _, name := range sortedKeys(entries) {
		data := entries[name]
		dir, file, _ := strings.Cut(name, "/")
		if dir != IAMDir || strings.Contains(file, "/") {
			x.Unknown = append(x.Unknown, name)
			continue
		}
		var err error
		switch file {
		case PoliciesFile:
			err = decodeJSON(data, &x.Policies)
			for p, doc := range x.Policies {
				if err == nil && (p == "" || len(bytes.TrimSpace(doc)) == 0 || bytes.TrimSpace(doc)[0] != '{') {
					err = fmt.Errorf("policy %q is not a JSON object", p)
				}
			}
		case UsersFile:
			err = decodeUsers(data, x.Users)
		case GroupsFile:
			err = decodeGroups(data, x.Groups)
		case ServiceAccounts:
			err = decodeServiceAccounts(data, x.ServiceAccounts)
		case UserMappingsFile:
			err = decodeMappings(data, x.UserPolicies)
		case GroupMappingsFile:
			err = decodeMappings(data, x.GroupPolicies)
		case STSMappingsFile:
			err = decodeMappings(data, x.STSUserPolicies)
		default:
			x.Unknown = append(x.Unknown, name)
		}
		if err != nil {
			return nil, formatErr("%s: %v", name, err)
		}
	}
	return x, nil
}

// decodeJSON decodes one JSON value and refuses trailing data.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func status(s string) (bool, error) {
	switch s {
	case "enabled", "on", "":
		return true, nil
	case "disabled", "off":
		return false, nil
	}
	return false, fmt.Errorf("status %q not understood", s)
}

func decodeUsers(data []byte, out map[string]User) error {
	var raw map[string]struct {
		SecretKey string `json:"secretKey"`
		Status    string `json:"status"`
	}
	if err := decodeJSON(data, &raw); err != nil {
		return err
	}
	for name, u := range raw {
		if name == "" {
			return errors.New("a user without a name")
		}
		on, err := status(u.Status)
		if err != nil {
			return fmt.Errorf("user %q: %w", name, err)
		}
		out[name] = User{SecretKey: u.SecretKey, Enabled: on}
	}
	return nil
}

func decodeGroups(data []byte, out map[string]Group) error {
	var raw map[string]struct {
		Status  string   `json:"status"`
		Members []string `json:"members"`
	}
	if err := decodeJSON(data, &raw); err != nil {
		return err
	}
	for name, g := range raw {
		if name == "" {
			return errors.New("a group without a name")
		}
		on, err := status(g.Status)
		if err != nil {
			return fmt.Errorf("group %q: %w", name, err)
		}
		out[name] = Group{Enabled: on, Members: g.Members}
	}
	return nil
}

func decodeServiceAccounts(data []byte, out map[string]ServiceAccount) error {
	var raw map[string]struct {
		Parent        string          `json:"parent"`
		AccessKey     string          `json:"accessKey"`
		SecretKey     string          `json:"secretKey"`
		Groups        []string        `json:"groups"`
		SessionPolicy json.RawMessage `json:"sessionPolicy"`
		Status        string          `json:"status"`
		Name          string          `json:"name"`
		Description   string          `json:"description"`
		Expiration    *time.Time      `json:"expiration"`
	}
	if err := decodeJSON(data, &raw); err != nil {
		return err
	}
	for key, a := range raw {
		if key == "" || (a.AccessKey != "" && a.AccessKey != key) {
			return fmt.Errorf("service account %q: access key %q does not match", key, a.AccessKey)
		}
		on, err := status(a.Status)
		if err != nil {
			return fmt.Errorf("service account %q: %w", key, err)
		}
		sa := ServiceAccount{AccessKey: key, SecretKey: a.SecretKey, Parent: a.Parent, Name: a.Name,
			Description: a.Description, Enabled: on, Groups: a.Groups}
		if p := bytes.TrimSpace(a.SessionPolicy); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
			if p[0] != '{' {
				return fmt.Errorf("service account %q: session policy is not a JSON object", key)
			}
			sa.Policy = p
		}
		// MinIO writes the Unix epoch (or the zero time) for "never".
		if e := a.Expiration; e != nil && e.After(time.Unix(0, 0)) {
			t := e.UTC()
			sa.Expiry = &t
		}
		out[key] = sa
	}
	return nil
}

func decodeMappings(data []byte, out map[string][]string) error {
	var raw map[string]struct {
		Policy string `json:"policy"`
	}
	if err := decodeJSON(data, &raw); err != nil {
		return err
	}
	for name, m := range raw {
		if name == "" {
			return errors.New("a mapping without a name")
		}
		var list []string
		for _, p := range strings.Split(m.Policy, ",") {
			if p = strings.TrimSpace(p); p != "" {
				list = append(list, p)
			}
		}
		sort.Strings(list)
		out[name] = list
	}
	return nil
}

func decodeBuckets(entries map[string][]byte) (*Buckets, error) {
	out := &Buckets{Buckets: map[string]*Bucket{}}
	for _, name := range sortedKeys(entries) {
		data := entries[name]
		bucket, file, ok := strings.Cut(name, "/")
		if !ok || strings.Contains(file, "/") {
			return nil, formatErr("entry %q is not BUCKET/FILE", name)
		}
		if err := CheckBucketName(bucket); err != nil {
			return nil, formatErr("entry %q: %v", name, err)
		}
		b := out.Buckets[bucket]
		if b == nil {
			b = &Bucket{Name: bucket}
			out.Buckets[bucket] = b
		}
		var dst *[]byte
		switch file {
		case PolicyFile:
			dst = &b.Policy
		case LifecycleFile:
			dst = &b.Lifecycle
		case VersioningFile:
			dst = &b.Versioning
		case ObjectLockFile:
			dst = &b.ObjectLock
		case TaggingFile:
			dst = &b.Tagging
		case EncryptionFile:
			dst = &b.Encryption
		case NotificationFile:
			dst = &b.Notification
		case ReplicationFile:
			dst = &b.Replication
		case QuotaFile:
			dst = &b.Quota
		case TargetsFile:
			dst = &b.Targets
		default:
			if b.Other == nil {
				b.Other = map[string][]byte{}
			}
			b.Other[file] = data
			continue
		}
		// (MinIO writes bucket-targets.json as XML, so only the quota is
		// checked to be JSON here.)
		if file == QuotaFile && !json.Valid(data) {
			return nil, formatErr("entry %q: not valid JSON", name)
		}
		*dst = data
	}
	return out, nil
}

// CheckBucketName applies S3's bucket naming rules (as MinIO does).
func CheckBucketName(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q: 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.'
		if !ok {
			return fmt.Errorf("bucket name %q: only a-z, 0-9, '-' and '.'", b)
		}
	}
	if first, last := b[0], b[len(b)-1]; first == '-' || first == '.' || last == '-' || last == '.' || strings.Contains(b, "..") {
		return fmt.Errorf("bucket name %q: starts or ends with '-' or '.', or holds \"..\"", b)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
