package migrate

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/shardstore/shardstore/internal/minioexport"
)

// ExportOptions configures FromMinIOExport.
type ExportOptions struct {
	// Target is a running shardstore; its credentials must be allowed
	// the admin and S3 calls the import makes (root is).
	Target Endpoint
	// IAM and Buckets are the decoded exports (either may be nil).
	IAM     *minioexport.IAM
	Buckets *minioexport.Buckets
	// DryRun reads the target and reports what would be done, changing
	// nothing.
	DryRun bool
	// Out gets one line per thing done, already there or not imported,
	// and the summary. Secrets are never written.
	Out io.Writer
	// Now is the time expiries are compared with (nil: time.Now).
	Now func() time.Time
}

// ExportStats counts what FromMinIOExport did.
type ExportStats struct {
	Applied  int // changes made (or, in a dry run, that would be)
	Present  int // already as the export says
	Refused  int // not imported: no equivalent here, or would widen access
	Failed   int // the target refused a call
	Failures []string
}

// adminPrefix is where the target's admin API lives (internal/admin's
// Prefix; that package sits above this one).
const adminPrefix = "/shardstore/admin/"

// FromMinIOExport recreates what MinIO's IAM and bucket exports hold on
// a running shardstore, through its admin API and S3 API (so every
// change passes the target's access decision, on a single node or a
// cluster alike): policies (translated, never widened: translatePolicy),
// users with their secrets and status, groups with members and status,
// policy attachments, service accounts as access keys (secret, parent,
// session policy, expiry, status), and bucket configuration (versioning,
// object lock, policy, lifecycle, tags, default encryption). What has no
// equivalent here is reported on a line starting with "!". Running it
// again changes nothing that is already as the export says.
func FromMinIOExport(ctx context.Context, opts ExportOptions) (*ExportStats, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t, err := newTarget(opts.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	im := &exportImporter{t: t, opts: opts, stats: &ExportStats{}, policyName: map[string]string{}}
	if opts.DryRun {
		fmt.Fprintln(opts.Out, "dry run: nothing is changed on the target")
	}
	if opts.IAM != nil {
		if err := im.iam(ctx); err != nil {
			return im.stats, err
		}
	}
	if opts.Buckets != nil {
		for _, b := range opts.Buckets.Names() {
			if err := ctx.Err(); err != nil {
				return im.stats, err
			}
			im.bucket(ctx, opts.Buckets.Buckets[b])
		}
	}
	st := im.stats
	verb := "applied"
	if opts.DryRun {
		verb = "would apply"
	}
	fmt.Fprintf(opts.Out, "done: %s %d, already there %d, not imported %d (the \"!\" lines), failed %d\n",
		verb, st.Applied, st.Present, st.Refused, st.Failed)
	if st.Failed > 0 {
		return st, fmt.Errorf("migrate from-minio-export: %d changes failed: %s", st.Failed, strings.Join(st.Failures, "; "))
	}
	return st, nil
}

type exportImporter struct {
	t     *target
	opts  ExportOptions
	stats *ExportStats
	// policyName maps a MinIO policy name to the name it has here ("" for
	// a policy that was not imported).
	policyName map[string]string
}

func (im *exportImporter) line(format string, a ...any) {
	fmt.Fprintf(im.opts.Out, format+"\n", a...)
}

// present reports something already as the export says.
func (im *exportImporter) present(format string, a ...any) {
	im.stats.Present++
	im.line("= "+format, a...)
}

// refuse reports something not imported.
func (im *exportImporter) refuse(format string, a ...any) {
	im.stats.Refused++
	im.line("! "+format, a...)
}

// note reports a detail of something imported (an action left out).
func (im *exportImporter) note(format string, a ...any) { im.line("  "+format, a...) }

// apply makes one change (or, in a dry run, says it would). It reports
// whether the change was made.
func (im *exportImporter) apply(what string, do func() error) bool {
	im.stats.Applied++
	if im.opts.DryRun {
		im.line("+ %s (dry run)", what)
		return true
	}
	if err := do(); err != nil {
		im.stats.Applied--
		im.stats.Failed++
		im.stats.Failures = append(im.stats.Failures, what+": "+err.Error())
		im.line("x %s: %v", what, err)
		return false
	}
	im.line("+ %s", what)
	return true
}

// applyOrRefuse is apply for a change the target may refuse as invalid
// (a name or secret MinIO accepts and this server does not): a 400
// answer is reported as not imported rather than as a failure.
func (im *exportImporter) applyOrRefuse(what string, do func() error) bool {
	if im.opts.DryRun {
		return im.apply(what, do)
	}
	err := do()
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusBadRequest {
		im.refuse("%s: not accepted here: %s", what, se.msg)
		return false
	}
	return im.apply(what, func() error { return err })
}

// Answers of the target's admin API used here (internal/iam's JSON).
type (
	tUser struct {
		Name     string   `json:"name"`
		Status   string   `json:"status"`
		Policies []string `json:"policies"`
	}
	tGroup struct {
		Name     string   `json:"name"`
		Status   string   `json:"status"`
		Members  []string `json:"members"`
		Policies []string `json:"policies"`
	}
	tPolicy struct {
		Name     string          `json:"name"`
		Builtin  bool            `json:"builtin"`
		Document json.RawMessage `json:"document"`
	}
	tKey struct {
		AccessKey string `json:"accessKey"`
		Parent    string `json:"parent"`
		Status    string `json:"status"`
	}
)

func (im *exportImporter) iam(ctx context.Context) error {
	x := im.opts.IAM
	var policies []tPolicy
	var users []tUser
	var groups []tGroup
	var keys []tKey
	for _, r := range []struct {
		path string
		v    any
	}{{"policies", &policies}, {"users", &users}, {"groups", &groups}, {"accesskeys", &keys}} {
		if err := im.t.admin(ctx, http.MethodGet, r.path, nil, nil, r.v); err != nil {
			return fmt.Errorf("read the target's %s: %w", r.path, err)
		}
	}
	havePolicy := map[string]tPolicy{}
	for _, p := range policies {
		havePolicy[p.Name] = p
	}
	haveUser := map[string]tUser{}
	for _, u := range users {
		haveUser[u.Name] = u
	}
	haveGroup := map[string]tGroup{}
	for _, g := range groups {
		haveGroup[g.Name] = g
	}
	haveKey := map[string]tKey{}
	for _, k := range keys {
		haveKey[k.AccessKey] = k
	}

	// Policies.
	for _, name := range sortedNames(x.Policies) {
		doc, notes, err := translatePolicy(x.Policies[name])
		if err != nil {
			im.policyName[name] = ""
			im.refuse("policy %s: not imported: %v; its attachments are left out", name, err)
			continue
		}
		target := name
		if have, ok := havePolicy[name]; ok && have.Builtin {
			if samePolicy(doc, have.Document) {
				im.policyName[name] = name
				im.present("policy %s: the built-in policy of that name is the same", name)
				for _, n := range notes {
					im.refuse("policy %s: %s", name, n)
				}
				continue
			}
			// A built-in here that grants something else: MinIO's meaning
			// is kept under another name.
			target = "minio-" + name
			im.note("policy %s: the built-in %s here differs; MinIO's is imported as %s", name, name, target)
		}
		im.policyName[name] = target
		if have, ok := havePolicy[target]; ok && samePolicy(doc, have.Document) {
			im.present("policy %s", target)
		} else if !im.applyOrRefuse("policy "+target, func() error {
			return im.t.admin(ctx, http.MethodPut, "policies/"+url.PathEscape(target), nil, doc, nil)
		}) {
			im.policyName[name] = ""
			continue
		}
		for _, n := range notes {
			im.refuse("policy %s: %s", target, n)
		}
	}

	// Users. Those the target already has count as there for group
	// members and access key parents, exported or not.
	userThere := map[string]bool{}
	for name := range haveUser {
		userThere[name] = true
	}
	for _, name := range sortedNames(x.Users) {
		u := x.Users[name]
		have, ok := haveUser[name]
		switch {
		case ok:
			im.present("user %s (its secret is left as it is here)", name)
			userThere[name] = true
		case im.applyOrRefuse("user "+name, func() error {
			body := map[string]string{"name": name, "secretKey": u.SecretKey}
			return im.t.admin(ctx, http.MethodPost, "users", nil, body, nil)
		}):
			userThere[name] = true
			have.Status = "enabled"
		default:
			continue
		}
		want := "enabled"
		if !u.Enabled {
			want = "disabled"
		}
		if have.Status != want {
			word := strings.TrimSuffix(want, "d")
			im.apply("user "+name+": "+want, func() error {
				return im.t.admin(ctx, http.MethodPost, "users/"+url.PathEscape(name)+"/"+word, nil, nil, nil)
			})
		}
	}

	// Service accounts, before any policy is attached; a key MinIO had
	// disabled is created disabled (never usable, not even for a moment).
	for _, ak := range sortedNames(x.ServiceAccounts) {
		sa := x.ServiceAccounts[ak]
		if have, ok := haveKey[ak]; ok {
			im.present("access key %s (parent %s; its secret and policy are left as they are here)", ak, have.Parent)
			im.keyStatus(ctx, ak, sa.Enabled, have.Status)
			continue
		}
		if !userThere[sa.Parent] {
			im.refuse("service account %s: its parent %s is not a user here (MinIO's root user, or an LDAP/OpenID user); "+
				"create a user for it and an access key with `shardstore admin accesskey create`", ak, sa.Parent)
			continue
		}
		if sa.Expiry != nil && !sa.Expiry.After(im.opts.Now()) {
			im.refuse("service account %s: expired at %s", ak, sa.Expiry.Format(time.RFC3339))
			continue
		}
		if len(sa.Groups) > 0 {
			im.note("service account %s: MinIO recorded groups %s on it; here it has its parent's groups", ak, strings.Join(sa.Groups, ","))
		}
		status := "enabled"
		if !sa.Enabled {
			status = "disabled"
		}
		req := map[string]any{"parent": sa.Parent, "accessKey": ak, "secretKey": sa.SecretKey,
			"name": sa.Name, "description": sa.Description, "status": status}
		var notes []string
		if sa.Policy != nil {
			doc, n, err := translatePolicy(sa.Policy)
			if err != nil {
				im.refuse("service account %s: its session policy cannot be carried (%v); not imported, as the key would allow more", ak, err)
				continue
			}
			req["policy"], notes = string(doc), n
		}
		if sa.Expiry != nil {
			req["expiry"] = sa.Expiry.Format(time.RFC3339)
		}
		label := "access key " + ak + " of " + sa.Parent
		if !sa.Enabled {
			label += ": disabled"
		}
		if im.applyOrRefuse(label, func() error {
			return im.t.admin(ctx, http.MethodPost, "accesskeys", nil, req, nil)
		}) {
			for _, n := range notes {
				im.refuse("access key %s: session policy: %s", ak, n)
			}
			im.keyStatus(ctx, ak, sa.Enabled, status)
		}
	}
	// Groups and their members.
	groupThere := map[string]bool{}
	for name := range haveGroup {
		groupThere[name] = true
	}
	for _, name := range sortedNames(x.Groups) {
		g := x.Groups[name]
		have, ok := haveGroup[name]
		var add []string
		for _, m := range uniq(g.Members) {
			switch {
			case !userThere[m]:
				im.refuse("group %s: member %s is not a user here (not in the export, or not imported)", name, m)
			case !slices.Contains(have.Members, m):
				add = append(add, m)
			}
		}
		if len(add) == 0 && !ok {
			im.refuse("group %s: no member to create it with (groups here exist through their members)", name)
			continue
		}
		if len(add) == 0 {
			im.present("group %s members", name)
		} else if !im.apply(fmt.Sprintf("group %s: members %s", name, strings.Join(add, ", ")), func() error {
			return im.t.admin(ctx, http.MethodPost, "groups/"+url.PathEscape(name)+"/members", nil, map[string][]string{"add": add}, nil)
		}) {
			continue
		} else if !ok {
			have.Status = "enabled"
		}
		groupThere[name] = true
		want := "enabled"
		if !g.Enabled {
			want = "disabled"
		}
		if have.Status != want {
			word := strings.TrimSuffix(want, "d")
			im.apply("group "+name+": "+want, func() error {
				return im.t.admin(ctx, http.MethodPost, "groups/"+url.PathEscape(name)+"/"+word, nil, nil, nil)
			})
		}
	}

	// Policy attachments.
	attach := func(kind, name string, mapped, attached []string) {
		var add []string
		for _, p := range mapped {
			here, ok := im.policyName[p]
			switch {
			case !ok && havePolicy[p].Builtin:
				here = p
			case !ok:
				im.refuse("%s %s: policy %s is in no export file and not here", kind, name, p)
				continue
			case here == "":
				im.refuse("%s %s: policy %s was not imported, so it is not attached", kind, name, p)
				continue
			}
			if slices.Contains(attached, here) {
				im.present("%s %s: policy %s attached", kind, name, here)
				continue
			}
			add = append(add, here)
		}
		if len(add) == 0 {
			return
		}
		im.apply(fmt.Sprintf("%s %s: attach %s", kind, name, strings.Join(add, ", ")), func() error {
			body := map[string]any{"policies": add, kind: name}
			return im.t.admin(ctx, http.MethodPost, "policies/attach", nil, body, nil)
		})
	}
	for _, name := range sortedNames(x.UserPolicies) {
		if !userThere[name] {
			im.refuse("user %s: policies %s mapped to a user that is not here", name, strings.Join(x.UserPolicies[name], ","))
			continue
		}
		attach("user", name, x.UserPolicies[name], haveUser[name].Policies)
	}
	for _, name := range sortedNames(x.GroupPolicies) {
		if !groupThere[name] {
			im.refuse("group %s: policies %s mapped to a group that is not here", name, strings.Join(x.GroupPolicies[name], ","))
			continue
		}
		attach("group", name, x.GroupPolicies[name], haveGroup[name].Policies)
	}
	for _, name := range sortedNames(x.STSUserPolicies) {
		im.refuse("external (LDAP/OpenID) user %s: policies %s: no equivalent here (users of an identity provider are not stored)",
			name, strings.Join(x.STSUserPolicies[name], ","))
	}

	for _, u := range x.Unknown {
		im.refuse("%s: an export file this version does not know; not imported", u)
	}
	return nil
}

func (im *exportImporter) keyStatus(ctx context.Context, ak string, enabled bool, have string) {
	want := "enabled"
	if !enabled {
		want = "disabled"
	}
	if have == want {
		return
	}
	word := strings.TrimSuffix(want, "d")
	im.apply("access key "+ak+": "+want, func() error {
		return im.t.admin(ctx, http.MethodPost, "accesskeys/"+url.PathEscape(ak)+"/"+word, nil, nil, nil)
	})
}

// bucket applies one bucket's configuration, creating the bucket (with
// object lock when the export has it) if the target lacks it.
func (im *exportImporter) bucket(ctx context.Context, b *minioexport.Bucket) {
	name := b.Name
	locked := false
	if len(b.ObjectLock) > 0 {
		var ol struct {
			Enabled string `xml:"ObjectLockEnabled"`
		}
		if err := xml.Unmarshal(b.ObjectLock, &ol); err != nil {
			im.refuse("bucket %s: object lock configuration unreadable (%v); bucket left out", name, err)
			return
		}
		locked = ol.Enabled == "Enabled"
	}
	status, err := im.t.s3(ctx, http.MethodHead, name, "", nil, nil)
	if err != nil {
		im.stats.Failed++
		im.stats.Failures = append(im.stats.Failures, "bucket "+name+": "+err.Error())
		im.line("x bucket %s: %v", name, err)
		return
	}
	if status != http.StatusOK && status != http.StatusNotFound {
		im.stats.Failed++
		im.stats.Failures = append(im.stats.Failures, fmt.Sprintf("bucket %s: HEAD answered %d", name, status))
		im.line("x bucket %s: HEAD answered %d", name, status)
		return
	}
	exists := status == http.StatusOK
	switch {
	case exists && locked:
		// Object lock cannot be turned on later here: check it is on.
		st, err := im.t.s3(ctx, http.MethodGet, name, "object-lock", nil, nil)
		if err != nil || st != http.StatusOK {
			im.refuse("bucket %s: exists here without object lock, which MinIO's has; its configuration is left out", name)
			return
		}
		im.present("bucket %s", name)
	case exists:
		im.present("bucket %s", name)
	default:
		what := "bucket " + name
		hdr := http.Header{}
		if locked {
			what += " (object lock)"
			hdr.Set("X-Amz-Bucket-Object-Lock-Enabled", "true")
		}
		if !im.apply(what, func() error { return im.t.s3ok(ctx, http.MethodPut, name, "", nil, hdr) }) {
			return
		}
	}
	put := func(what, sub string, doc []byte) {
		if len(doc) == 0 {
			return
		}
		if exists {
			if have, err := im.t.s3get(ctx, name, sub); err == nil && sameDocument(sub, doc, have) {
				im.present("bucket %s: %s", name, what)
				return
			}
		}
		what = fmt.Sprintf("bucket %s: %s", name, what)
		if im.opts.DryRun || sub == "policy" {
			// A bucket policy the target cannot take is a failure: left
			// out, its Deny statements would no longer hold.
			im.apply(what, func() error { return im.t.s3ok(ctx, http.MethodPut, name, sub, doc, nil) })
			return
		}
		// A document the target cannot take (invalid here, or default
		// encryption without a KMS) is reported, not a failure: without
		// it nothing is allowed that was not.
		err := im.t.s3ok(ctx, http.MethodPut, name, sub, doc, nil)
		var se *statusError
		if errors.As(err, &se) && (se.status == http.StatusBadRequest || se.status == http.StatusNotImplemented) {
			im.refuse("%s: the target cannot take it (%s)", what, se.msg)
			return
		}
		im.apply(what, func() error { return err })
	}
	if len(b.Versioning) > 0 && !locked {
		put("versioning", "versioning", b.Versioning)
	}
	if locked {
		var ol struct {
			Rule *struct{} `xml:"Rule"`
		}
		if xml.Unmarshal(b.ObjectLock, &ol) == nil && ol.Rule != nil {
			put("object lock default retention", "object-lock", b.ObjectLock)
		}
	}
	put("policy", "policy", b.Policy)
	if len(b.Lifecycle) > 0 {
		doc, dropped := stripElements(b.Lifecycle, "ExpiryUpdatedAt")
		if dropped {
			im.note("bucket %s: lifecycle: MinIO's ExpiryUpdatedAt bookkeeping left out", name)
		}
		put("lifecycle", "lifecycle", doc)
	}
	put("tags", "tagging", b.Tagging)
	put("default encryption", "encryption", b.Encryption)
	if hasChildren(b.Notification) {
		im.refuse("bucket %s: event notifications: no equivalent here; not imported", name)
	}
	if hasChildren(b.Replication) {
		im.refuse("bucket %s: replication: no equivalent here; not imported", name)
	}
	if hasChildren(b.Targets) {
		im.refuse("bucket %s: remote (replication/tiering) targets: no equivalent here; not imported", name)
	}
	if len(b.Quota) > 0 {
		var q struct {
			Quota    uint64 `json:"quota"`
			Size     uint64 `json:"size"`
			Rate     uint64 `json:"rate"`
			Requests uint64 `json:"requests"`
		}
		if json.Unmarshal(b.Quota, &q) != nil || q.Quota+q.Size+q.Rate+q.Requests > 0 {
			im.refuse("bucket %s: quota: no equivalent here; not imported", name)
		}
	}
	for _, f := range sortedNames(b.Other) {
		im.refuse("bucket %s: %s: a configuration this version does not know; not imported", name, f)
	}
}

// hasChildren reports whether an XML document's root element has any
// element inside (MinIO exports empty notification and target documents
// for every bucket).
func hasChildren(doc []byte) bool {
	if len(bytes.TrimSpace(doc)) == 0 {
		return false
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			// Unreadable: say so rather than drop it silently.
			return !errors.Is(err, io.EOF)
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 2 {
				return true
			}
		case xml.EndElement:
			depth--
		}
	}
}

// stripElements removes the named child elements of the root (with
// their content) from an XML document; it reports whether any was
// there. The document is re-encoded token by token.
func stripElements(doc []byte, names ...string) ([]byte, bool) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out bytes.Buffer
	e := xml.NewEncoder(&out)
	depth, skip, dropped := 0, 0, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return doc, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if skip == 0 && depth == 2 && slices.Contains(names, t.Name.Local) {
				skip, dropped = depth, true
			}
		case xml.EndElement:
			depth--
			if skip > 0 && depth < skip {
				skip = 0
				continue
			}
		}
		if skip > 0 {
			continue
		}
		if se, ok := tok.(xml.StartElement); ok {
			// Keep names as written, without the namespace machinery.
			se.Name.Space, se.Attr = "", nil
			tok = se
		}
		if ee, ok := tok.(xml.EndElement); ok {
			ee.Name.Space = ""
			tok = ee
		}
		if err := e.EncodeToken(xml.CopyToken(tok)); err != nil {
			return doc, false
		}
	}
	if err := e.Flush(); err != nil || !dropped {
		return doc, dropped && err == nil
	}
	return out.Bytes(), true
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// target signs requests to a shardstore's admin and S3 APIs.
type target struct {
	base   string
	region string
	creds  aws.Credentials
	hc     *http.Client
}

func newTarget(e Endpoint) (*target, error) {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q is not an http(s) URL", e.URL)
	}
	if e.AccessKey == "" || e.SecretKey == "" {
		return nil, errors.New("no credentials for the target")
	}
	region := e.Region
	if region == "" {
		region = "us-east-1"
	}
	return &target{base: strings.TrimSuffix(e.URL, "/"), region: region,
		creds: aws.Credentials{AccessKeyID: e.AccessKey, SecretAccessKey: e.SecretKey},
		hc:    &http.Client{Timeout: time.Minute}}, nil
}

// send signs and sends one request; the caller closes the body.
func (t *target) send(ctx context.Context, method, path string, q url.Values, body []byte, hdr http.Header) (*http.Response, error) {
	u := t.base + path
	if len(q) > 0 {
		u += "?" + strings.ReplaceAll(q.Encode(), "=&", "&")
		u = strings.TrimSuffix(u, "=")
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if len(body) > 0 {
		m := md5.Sum(body)
		req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(m[:]))
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(ctx, t.creds, req, hash, "s3", t.region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return t.hc.Do(req)
}

// admin makes an admin API call; a non-2xx answer is an error with the
// server's message. out, when set, receives the JSON answer.
func (t *target) admin(ctx context.Context, method, path string, q url.Values, body any, out any) error {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return err
		}
	}
	resp, err := t.send(ctx, method, adminPrefix+path, q, raw, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &statusError{status: resp.StatusCode, msg: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, serverMessage(data))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: bad answer: %w", method, path, err)
		}
	}
	return nil
}

// serverMessage is the message of an admin (JSON) or S3 (XML) error.
func serverMessage(data []byte) string {
	var j struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &j) == nil && j.Error != "" {
		return j.Error
	}
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(data, &x) == nil && x.Code != "" {
		return x.Code + ": " + x.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// s3 makes an S3 call on a bucket (sub: the subresource, as "lifecycle")
// and returns the status; only a transport failure is an error.
func (t *target) s3(ctx context.Context, method, bucket, sub string, body []byte, hdr http.Header) (int, error) {
	var q url.Values
	if sub != "" {
		q = url.Values{sub: {""}}
	}
	resp, err := t.send(ctx, method, "/"+bucket, q, body, hdr)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// s3ok makes an S3 call that must succeed.
func (t *target) s3ok(ctx context.Context, method, bucket, sub string, body []byte, hdr http.Header) error {
	var q url.Values
	if sub != "" {
		q = url.Values{sub: {""}}
	}
	resp, err := t.send(ctx, method, "/"+bucket, q, body, hdr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return &statusError{status: resp.StatusCode, msg: resp.Status + ": " + serverMessage(data)}
	}
	return nil
}

// statusError is an S3 call's non-2xx answer.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

// s3get reads a bucket's configuration document (sub: its subresource).
func (t *target) s3get(ctx context.Context, bucket, sub string) ([]byte, error) {
	resp, err := t.send(ctx, http.MethodGet, "/"+bucket, url.Values{sub: {""}}, nil, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{status: resp.StatusCode, msg: resp.Status}
	}
	return data, nil
}

// sameDocument reports whether a configuration document the target
// answers says what the exported one says: the same JSON value for a
// policy; for XML, the same text-holding elements under each child of
// the root (a lifecycle rule, a tag), in any order within it, the
// children in order except tags (namespaces, attributes and layout
// aside).
func sameDocument(sub string, want, have []byte) bool {
	if sub == "policy" {
		return samePolicy(want, have)
	}
	w, h := xmlLeaves(want, sub == "tagging"), xmlLeaves(have, sub == "tagging")
	if w == nil || h == nil {
		return false
	}
	slices.Sort(w)
	slices.Sort(h)
	return slices.Equal(w, h)
}

// xmlLeaves lists an XML document's text-holding elements as
// "N:path=text", N the index of the root's child they are in (nil when
// it does not parse); unordered leaves them all at index 0.
func xmlLeaves(doc []byte, unordered bool) []string {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var path []string
	var text strings.Builder
	child := -1
	out := []string{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name.Local)
			if len(path) == 2 && !unordered {
				child++
			}
			text.Reset()
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			// BucketKeyEnabled false is the default an answer spells out.
			if v := strings.TrimSpace(text.String()); v != "" && !(t.Name.Local == "BucketKeyEnabled" && v == "false") {
				out = append(out, fmt.Sprintf("%d:%s=%s", max(child, 0), strings.Join(path, "/"), v))
			}
			text.Reset()
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		}
	}
}
