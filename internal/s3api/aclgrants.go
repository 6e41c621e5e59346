package s3api

// ACL grants: the grants a request asks for (a canned x-amz-acl, the
// x-amz-grant-* headers, or an AccessControlPolicy body on Put*Acl), how
// a bucket's or object's ACL is stored in its one string field, and how
// Get*Acl show it. The grants themselves (access.Grant) and what they
// allow are package access's.

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// parsePermission reads an S3 permission name.
func parsePermission(s string) (access.Permission, bool) {
	for p := access.PermRead; p <= access.PermFullControl; p++ {
		if p.String() == s {
			return p, true
		}
	}
	return 0, false
}

// The group URIs S3 defines.
const (
	uriAllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	uriAuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	uriLogDelivery        = "http://acs.amazonaws.com/groups/s3/LogDelivery"
)

var groupURIs = map[string]access.Grantee{
	uriAllUsers: access.AllUsers, uriAuthenticatedUsers: access.AuthenticatedUsers, uriLogDelivery: access.LogDelivery,
}

// maxGrants is S3's limit on grants in one ACL.
const maxGrants = 100

// Stored ACLs. A bucket's ACL (engine.BucketInfo.ACL) and an object's
// (engine.ObjectInfo.ACL, in its meta record) are one string each, in one
// of two forms:
//
//   - a canned ACL name ("private", "public-read", ...): what every record
//     written before explicit grants existed holds, and what a canned
//     x-amz-acl still stores. Its grants are access.CannedGrants' plus the
//     owner's FULL_CONTROL.
//   - aclGrantsPrefix followed by a JSON array of the explicit grants of
//     x-amz-grant-* headers or an AccessControlPolicy body, in order:
//     grants:[{"id":"<canonical id>","perm":"READ"},{"uri":"http://acs.amazonaws.com/groups/global/AllUsers","perm":"READ"}]
//     The list is the whole ACL, as S3 keeps it: the owner's FULL_CONTROL
//     is in it only if the request put it there.
//
// No canned name contains ':', so the forms never collide. encodeGrants
// and decodeGrants are the only code that reads or writes the second
// form; a string in neither form grants nothing.
const aclGrantsPrefix = "grants:"

// storedGrant is a grant's JSON form in a stored ACL.
type storedGrant struct {
	ID   string `json:"id,omitempty"`
	URI  string `json:"uri,omitempty"`
	Perm string `json:"perm"`
}

// encodeGrants is the stored form of an explicit grant list.
func encodeGrants(gs []access.Grant) string {
	out := make([]storedGrant, 0, len(gs))
	for _, g := range gs {
		sg := storedGrant{Perm: g.Perm.String()}
		switch g.To {
		case access.CanonicalUser:
			sg.ID = g.ID
		case access.AllUsers:
			sg.URI = uriAllUsers
		case access.AuthenticatedUsers:
			sg.URI = uriAuthenticatedUsers
		case access.LogDelivery:
			sg.URI = uriLogDelivery
		default:
			continue // bucket-owner grants exist only in canned ACLs
		}
		out = append(out, sg)
	}
	data, err := json.Marshal(out)
	if err != nil {
		panic(err) // a slice of plain structs always marshals
	}
	return aclGrantsPrefix + string(data)
}

// decodeGrants reads a stored explicit grant list; ok is false when acl
// is not in that form. Grants it cannot read are dropped (they grant
// nothing). Decoded lists are cached (Server.grantLists), so access
// decisions do not parse JSON on every request; the result is shared:
// callers must not change it.
func (s *Server) decodeGrants(acl string) (gs []access.Grant, ok bool) {
	data, ok := strings.CutPrefix(acl, aclGrantsPrefix)
	if !ok {
		return nil, false
	}
	return s.grantLists.get(acl, func() []access.Grant {
		var gs []access.Grant
		var stored []storedGrant
		if json.Unmarshal([]byte(data), &stored) == nil {
			for _, sg := range stored {
				p, pok := parsePermission(sg.Perm)
				switch to, gok := groupURIs[sg.URI]; {
				case !pok:
				case sg.ID != "":
					gs = append(gs, access.Grant{To: access.CanonicalUser, ID: sg.ID, Perm: p})
				case gok:
					gs = append(gs, access.Grant{To: to, Perm: p})
				}
			}
		}
		return gs
	}), true
}

// aclGrants lists the grants a stored ACL makes besides its owner's
// implicit FULL_CONTROL: a canned ACL's (onObject selects the object
// reading of the bucket-owner-* ones) or the stored explicit list. The
// result is shared: callers must not change it.
func (s *Server) aclGrants(acl string, onObject bool) []access.Grant {
	if gs, ok := s.decodeGrants(acl); ok {
		return gs
	}
	return access.CannedGrants(acl, onObject)
}

// UserDirectory resolves the canonical user ids that ACL grants name
// (x-amz-grant-* id=..., an AccessControlPolicy's CanonicalUser) to the
// users they belong to. A user's canonical id is what ListBuckets and
// Get*Acl show as Owner/ID (canonicalID of the access key).
type UserDirectory interface {
	// LookupCanonicalID returns the access key of the user whose
	// canonical id is id.
	LookupCanonicalID(id string) (accessKey string, ok bool)
}

// users is the server's UserDirectory: Config.Users, else the
// Authenticator when it is one, else none (every canonical id is then
// unknown, and grants to users are refused).
func (s *Server) users() UserDirectory {
	if s.cfg.Users != nil {
		return s.cfg.Users
	}
	if d, ok := s.cfg.Auth.(UserDirectory); ok {
		return d
	}
	return nil
}

// lookupCanonicalID returns the access key of canonical id id.
func (s *Server) lookupCanonicalID(id string) (string, bool) {
	d := s.users()
	if d == nil {
		return "", false
	}
	return d.LookupCanonicalID(id)
}

// requestedACL is the ACL a request sets: a canned ACL, or an explicit
// grant list (x-amz-grant-* headers or an AccessControlPolicy body).
// The zero value is a request that names none.
type requestedACL struct {
	canned   string
	grants   []access.Grant
	explicit bool
}

// none reports whether the request named no ACL.
func (a requestedACL) none() bool { return a.canned == "" && !a.explicit }

// stored is the ACL string to store: the canned name ("private" when
// the request named none) or the encoded grant list.
func (a requestedACL) stored() string {
	switch {
	case a.explicit:
		return encodeGrants(a.grants)
	case a.canned == "":
		return "private"
	}
	return a.canned
}

// grantList is what the ACL grants beside its owner's FULL_CONTROL
// (onObject selects the object reading of a canned ACL).
func (a requestedACL) grantList(onObject bool) []access.Grant {
	if a.explicit {
		return a.grants
	}
	return access.CannedGrants(a.canned, onObject)
}

// onlyFullControlTo reports whether the ACL is explicit and grants
// FULL_CONTROL to owner (an access key) and nothing to anyone else: the
// XML or header form of bucket-owner-full-control when owner is the
// bucket's owner.
func (a requestedACL) onlyFullControlTo(owner string) bool {
	if !a.explicit || len(a.grants) == 0 || owner == "" {
		return false
	}
	id := canonicalID(owner)
	for _, g := range a.grants {
		if g.To != access.CanonicalUser || g.ID != id || g.Perm != access.PermFullControl {
			return false
		}
	}
	return true
}

// grantHeaders are the x-amz-grant-* headers and what each grants.
var grantHeaders = []struct {
	name string
	perm access.Permission
}{
	{"X-Amz-Grant-Read", access.PermRead}, {"X-Amz-Grant-Write", access.PermWrite},
	{"X-Amz-Grant-Read-Acp", access.PermReadACP}, {"X-Amz-Grant-Write-Acp", access.PermWriteACP},
	{"X-Amz-Grant-Full-Control", access.PermFullControl},
}

// cannedACLs are the canned ACLs S3 accepts. On a bucket,
// bucket-owner-read, bucket-owner-full-control and aws-exec-read grant
// nothing beyond the owner's FULL_CONTROL (S3 ignores the bucket-owner-*
// ones on buckets); on an object, log-delivery-write (a bucket's ACL for
// the log delivery group) grants nothing beyond it either.
var cannedACLs = map[string]bool{
	"private": true, "public-read": true, "public-read-write": true,
	"authenticated-read": true, "aws-exec-read": true,
	"bucket-owner-read": true, "bucket-owner-full-control": true,
	"log-delivery-write": true,
}

// aclFromHeaders reads the ACL a request's headers set: x-amz-acl, or
// the x-amz-grant-* headers (each a comma-separated list of grantees
// written id="canonical id", uri="group URI" or emailAddress="..."). Both
// at once is refused, as S3 refuses it.
func (s *Server) aclFromHeaders(h http.Header) (requestedACL, error) {
	var a requestedACL
	// S3's limit on grants, counted before any grantee is resolved.
	items := 0
	for _, gh := range grantHeaders {
		for _, v := range h.Values(gh.name) {
			for _, item := range splitUnquoted(v, ',') {
				if strings.TrimSpace(item) != "" {
					items++
				}
			}
		}
	}
	if items > maxGrants {
		return a, errMalformedACL()
	}
	for _, gh := range grantHeaders {
		vals := h.Values(gh.name)
		if len(vals) == 0 {
			continue
		}
		a.explicit = true
		for _, v := range vals {
			gs, err := s.parseGrantHeader(v, gh.perm)
			if err != nil {
				return a, err
			}
			a.grants = append(a.grants, gs...)
		}
	}
	canned := strings.TrimSpace(h.Get("X-Amz-Acl"))
	if canned != "" && a.explicit {
		return a, errInvalidRequest("Specifying both Canned ACLs and Header Grants is not allowed")
	}
	if canned != "" && !cannedACLs[canned] {
		return a, errInvalidArgument("Invalid canned ACL %q", canned)
	}
	a.canned = canned
	return a, nil
}

// parseGrantHeader reads one x-amz-grant-* header value.
func (s *Server) parseGrantHeader(v string, perm access.Permission) ([]access.Grant, error) {
	var out []access.Grant
	for _, item := range splitUnquoted(v, ',') {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		if !ok || val == "" {
			return nil, errInvalidArgument("Argument format not recognized")
		}
		var g access.Grant
		var err error
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "id":
			g, err = s.userGrant(val, perm)
		case "uri":
			g, err = groupGrant(val, perm)
		case "emailaddress":
			err = errUnresolvableEmail()
		default:
			err = errInvalidArgument("Argument format not recognized")
		}
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, errInvalidArgument("Argument format not recognized")
	}
	return out, nil
}

// splitUnquoted splits s at each sep outside double quotes.
func splitUnquoted(s string, sep byte) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// userGrant is a grant to the user with canonical id id, which must be
// known (S3 answers InvalidArgument "Invalid id" otherwise).
func (s *Server) userGrant(id string, perm access.Permission) (access.Grant, error) {
	if _, ok := s.lookupCanonicalID(id); !ok {
		return access.Grant{}, errInvalidArgument("Invalid id")
	}
	return access.Grant{To: access.CanonicalUser, ID: id, Perm: perm}, nil
}

// groupGrant is a grant to the group S3 names by uri.
func groupGrant(uri string, perm access.Permission) (access.Grant, error) {
	to, ok := groupURIs[uri]
	if !ok {
		return access.Grant{}, errInvalidArgument("Invalid group uri")
	}
	return access.Grant{To: to, Perm: perm}, nil
}

// ACL errors S3 answers.
func errMalformedACL() *Error {
	return errorf("MalformedACLError", http.StatusBadRequest,
		"The XML you provided was not well-formed or did not validate against our published schema")
}

func errUnresolvableEmail() *Error {
	return errorf("UnresolvableGrantByEmailAddress", http.StatusBadRequest,
		"The e-mail address you provided does not match any account on record.")
}

// xmlACLInput is an AccessControlPolicy request body. Elements are
// matched in any namespace, xsi:type by its local name.
type xmlACLInput struct {
	XMLName xml.Name        `xml:"AccessControlPolicy"`
	Owner   *xmlOwnerInput  `xml:"Owner"`
	Grants  []xmlGrantInput `xml:"AccessControlList>Grant"`
}

type xmlOwnerInput struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

type xmlGrantInput struct {
	Grantee    *xmlGranteeInput `xml:"Grantee"`
	Permission string           `xml:"Permission"`
}

type xmlGranteeInput struct {
	Type         string `xml:"type,attr"`
	ID           string `xml:"ID"`
	URI          string `xml:"URI"`
	EmailAddress string `xml:"EmailAddress"`
	DisplayName  string `xml:"DisplayName"`
}

// resolve trims a grantee's fields and says what kind it is: its
// xsi:type, or without one what it names ("CanonicalUser", "Group",
// "AmazonCustomerByEmail"). ok is false unless it names what its kind
// needs.
func (g xmlGranteeInput) resolve() (x xmlGranteeInput, kind string, ok bool) {
	x = g
	x.ID, x.URI, x.EmailAddress = strings.TrimSpace(x.ID), strings.TrimSpace(x.URI), strings.TrimSpace(x.EmailAddress)
	kind = x.Type
	if kind == "" { // no xsi:type: what the grantee names says it
		switch {
		case x.ID != "":
			kind = "CanonicalUser"
		case x.URI != "":
			kind = "Group"
		case x.EmailAddress != "":
			kind = "AmazonCustomerByEmail"
		}
	}
	switch {
	case kind == "CanonicalUser" && x.ID != "",
		kind == "Group" && x.URI != "",
		kind == "AmazonCustomerByEmail" && x.EmailAddress != "":
		return x, kind, true
	}
	return x, kind, false
}

// aclFromBody reads an AccessControlPolicy body for a resource owned by
// owner (an access key). A document S3's schema refuses answers
// MalformedACLError; an Owner other than the resource's, AccessDenied;
// an unknown canonical id or group, InvalidArgument; an e-mail grantee,
// UnresolvableGrantByEmailAddress (shardstore users have none).
func (s *Server) aclFromBody(body []byte, owner string) (requestedACL, error) {
	var doc xmlACLInput
	if err := xml.Unmarshal(body, &doc); err != nil {
		return requestedACL{}, errMalformedACL()
	}
	if doc.Owner == nil || strings.TrimSpace(doc.Owner.ID) == "" || len(doc.Grants) > maxGrants {
		return requestedACL{}, errMalformedACL()
	}
	type parsed struct {
		x    xmlGranteeInput
		kind string
		perm access.Permission
	}
	grants := make([]parsed, 0, len(doc.Grants))
	for _, g := range doc.Grants {
		perm, ok := parsePermission(strings.TrimSpace(g.Permission))
		if g.Grantee == nil || !ok {
			return requestedACL{}, errMalformedACL()
		}
		x, kind, ok := g.Grantee.resolve()
		if !ok {
			return requestedACL{}, errMalformedACL()
		}
		grants = append(grants, parsed{x, kind, perm})
	}
	if strings.TrimSpace(doc.Owner.ID) != canonicalID(owner) {
		return requestedACL{}, errAccessDenied()
	}
	a := requestedACL{explicit: true}
	for _, p := range grants {
		var g access.Grant
		var err error
		switch p.kind {
		case "CanonicalUser":
			g, err = s.userGrant(p.x.ID, p.perm)
		case "Group":
			g, err = groupGrant(p.x.URI, p.perm)
		default:
			err = errUnresolvableEmail()
		}
		if err != nil {
			return requestedACL{}, err
		}
		a.grants = append(a.grants, g)
	}
	return a, nil
}

// aclDocument renders the AccessControlPolicy of a bucket (object false)
// or an object owned by owner whose stored ACL is acl. A canned ACL shows
// the owner's FULL_CONTROL and the canned grants (bucketOwner is the
// owner a bucket-owner-* object ACL names); an explicit list shows its
// grants as they were set.
func (s *Server) aclDocument(owner, acl string, object bool, bucketOwner string) xmlACL {
	o := ownerOf(owner)
	p := xmlACL{NS: s3NS, Owner: o}
	gs, explicit := s.decodeGrants(acl)
	if !explicit {
		p.Grants = append(p.Grants, userGrantXML(o, access.PermFullControl))
		gs = access.CannedGrants(acl, object)
	}
	for _, g := range gs {
		switch g.To {
		case access.AllUsers:
			p.Grants = append(p.Grants, groupGrantXML(uriAllUsers, g.Perm))
		case access.AuthenticatedUsers:
			p.Grants = append(p.Grants, groupGrantXML(uriAuthenticatedUsers, g.Perm))
		case access.LogDelivery:
			p.Grants = append(p.Grants, groupGrantXML(uriLogDelivery, g.Perm))
		case access.BucketOwnerGrantee:
			if bucketOwner != "" && bucketOwner != owner {
				p.Grants = append(p.Grants, userGrantXML(ownerOf(bucketOwner), g.Perm))
			}
		case access.CanonicalUser:
			u := &xmlOwner{ID: g.ID}
			if ak, ok := s.lookupCanonicalID(g.ID); ok {
				u.DisplayName = ak
			}
			p.Grants = append(p.Grants, userGrantXML(u, g.Perm))
		}
	}
	return p
}

// ownerOnlyDocument is the AccessControlPolicy Get*Acl answer when ACLs
// are disabled (BucketOwnerEnforced): the bucket owner's FULL_CONTROL.
func ownerOnlyDocument(owner string) xmlACL {
	o := ownerOf(owner)
	return xmlACL{NS: s3NS, Owner: o, Grants: []xmlGrant{userGrantXML(o, access.PermFullControl)}}
}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

func userGrantXML(u *xmlOwner, p access.Permission) xmlGrant {
	return xmlGrant{Grantee: xmlGrantee{XMLNSXSI: xsiNS, Type: "CanonicalUser", ID: u.ID, DisplayName: u.DisplayName},
		Permission: p.String()}
}

func groupGrantXML(uri string, p access.Permission) xmlGrant {
	return xmlGrant{Grantee: xmlGrantee{XMLNSXSI: xsiNS, Type: "Group", URI: uri}, Permission: p.String()}
}

// newObjectACL reads the ACL headers of a request that writes an object
// into bucket bi (PutObject, CopyObject, CreateMultipartUpload, form
// uploads) and decides what is stored: the ACL string, and whether the
// bucket's owner owns the new object rather than the writer. The
// bucket's ownership controls decide the owner (see objectOwnership):
// BucketOwnerEnforced accepts no ACL but bucket-owner-full-control or its
// explicit equivalent (else 400 AccessControlListNotSupported) and stores
// the object as the bucket owner's and private; BucketOwnerPreferred
// gives the bucket owner objects written with bucket-owner-full-control.
// A public ACL in a bucket that blocks them answers 403 AccessDenied.
func (q *request) newObjectACL(bi engine.BucketInfo) (acl string, bucketOwns bool, err error) {
	a, err := q.s.aclFromHeaders(q.r.Header)
	if err != nil {
		return "", false, err
	}
	switch objectOwnership(bi) {
	case ownershipEnforced:
		if !a.none() && a.canned != "bucket-owner-full-control" && !a.onlyFullControlTo(bi.Owner) {
			return "", false, errACLNotSupported()
		}
		return "private", true, nil
	case ownershipPreferred:
		bucketOwns = a.canned == "bucket-owner-full-control"
	}
	if err := checkPublicACL(bi, a, true); err != nil {
		return "", false, err
	}
	return a.stored(), bucketOwns, nil
}

// aclForPut reads the ACL of a PutBucketAcl or PutObjectAcl request on a
// resource owned by owner: the x-amz-acl or x-amz-grant-* headers, or an
// AccessControlPolicy body (not both: 400 UnexpectedContent), and then
// applies the bucket's rules: with BucketOwnerEnforced only
// bucket-owner-full-control or its explicit equivalent is accepted (400
// AccessControlListNotSupported), and a public ACL in a bucket that blocks
// them answers 403 AccessDenied.
func (q *request) aclForPut(bi engine.BucketInfo, owner string, onObject bool) (requestedACL, error) {
	a, err := q.s.aclFromHeaders(q.r.Header)
	if err != nil {
		return a, err
	}
	body, err := q.readBody(64 << 10)
	if err != nil {
		return a, err
	}
	hasBody := len(bytes.TrimSpace(body)) > 0
	switch {
	case hasBody && !a.none():
		return a, errorf("UnexpectedContent", http.StatusBadRequest, "This request does not support content")
	case hasBody:
		if a, err = q.s.aclFromBody(body, owner); err != nil {
			return a, err
		}
	case a.none():
		return a, errorf("MissingSecurityHeader", http.StatusBadRequest,
			"Your request was missing a required header: x-amz-acl")
	}
	if objectOwnership(bi) == ownershipEnforced && a.canned != "bucket-owner-full-control" && !a.onlyFullControlTo(bi.Owner) {
		return a, errACLNotSupported()
	}
	return a, checkPublicACL(bi, a, onObject)
}

// newBucketACL reads the ACL and x-amz-object-ownership headers of a
// CreateBucket by owner: the ACL string to store and the ownership
// controls document ("" for none: ObjectWriter). BucketOwnerEnforced
// with an ACL that grants anyone but the owner answers 400
// InvalidBucketAclWithObjectOwnership, as in S3 (private and
// bucket-owner-full-control are accepted).
func (s *Server) newBucketACL(h http.Header, owner string) (acl, ownership string, err error) {
	a, err := s.aclFromHeaders(h)
	if err != nil {
		return "", "", err
	}
	v := strings.TrimSpace(h.Get("X-Amz-Object-Ownership"))
	if v == "" {
		return a.stored(), "", nil
	}
	if !objectOwnerships[v] {
		return "", "", errInvalidArgument("Invalid x-amz-object-ownership header: %s", v)
	}
	if v == ownershipEnforced && !a.none() && a.canned != "private" && a.canned != "bucket-owner-full-control" &&
		!a.onlyFullControlTo(owner) {
		return "", "", errBucketACLWithOwnership()
	}
	return a.stored(), ownershipDocument(v), nil
}

// LookupCanonicalID makes SigV4 the server's UserDirectory: the users it
// authenticates (root and the users file) are the users grants may name.
func (a SigV4) LookupCanonicalID(id string) (string, bool) {
	if a.Verifier == nil || a.Verifier.Users == nil {
		return "", false
	}
	for _, ak := range a.Verifier.Users.AccessKeys() {
		if canonicalID(ak) == id {
			return ak, true
		}
	}
	return "", false
}
