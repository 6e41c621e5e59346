package s3api

// Bucket configuration sub-resources: ?cors, ?ownershipControls and
// ?website. Each document is validated as S3 validates it, then stored in
// the bucket record (engine.SetBucketConfig) in a canonical XML form
// without namespace, and answered back with S3's namespace. CORS rules
// also answer browser preflights (OPTIONS) and decorate actual requests
// that carry an Origin; ownership controls decide who owns objects and
// whether ACLs apply (objectOwnership); website configurations are
// stored and returned only (objects are not served as a website). The
// public access block is in publicaccess.go.

import (
	"crypto/md5"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
)

// maxConfigBody bounds a configuration document (S3 allows 64 KiB for
// CORS; website routing rules are smaller still).
const maxConfigBody = 64 << 10

// maxCORSRules is S3's limit on rules in one CORS configuration.
const maxCORSRules = 100

type xmlCORSConfiguration struct {
	XMLName xml.Name      `xml:"CORSConfiguration"`
	NS      string        `xml:"xmlns,attr,omitempty"`
	Rules   []xmlCORSRule `xml:"CORSRule"`
}

type xmlCORSRule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds"`
}

type xmlOwnershipControls struct {
	XMLName xml.Name                   `xml:"OwnershipControls"`
	NS      string                     `xml:"xmlns,attr,omitempty"`
	Rules   []xmlOwnershipControlsRule `xml:"Rule"`
}

type xmlOwnershipControlsRule struct {
	ObjectOwnership string `xml:"ObjectOwnership"`
}

type xmlWebsiteConfiguration struct {
	XMLName               xml.Name                `xml:"WebsiteConfiguration"`
	NS                    string                  `xml:"xmlns,attr,omitempty"`
	ErrorDocument         *xmlWebsiteErrorDoc     `xml:"ErrorDocument"`
	IndexDocument         *xmlWebsiteIndexDoc     `xml:"IndexDocument"`
	RedirectAllRequestsTo *xmlWebsiteRedirectAll  `xml:"RedirectAllRequestsTo"`
	RoutingRules          *xmlWebsiteRoutingRules `xml:"RoutingRules"`
}

type xmlWebsiteErrorDoc struct {
	Key string `xml:"Key"`
}

type xmlWebsiteIndexDoc struct {
	Suffix string `xml:"Suffix"`
}

type xmlWebsiteRedirectAll struct {
	HostName string `xml:"HostName"`
	Protocol string `xml:"Protocol,omitempty"`
}

type xmlWebsiteRoutingRules struct {
	Rules []xmlWebsiteRoutingRule `xml:"RoutingRule"`
}

type xmlWebsiteRoutingRule struct {
	Condition *xmlWebsiteCondition `xml:"Condition"`
	Redirect  *xmlWebsiteRedirect  `xml:"Redirect"`
}

type xmlWebsiteCondition struct {
	HTTPErrorCodeReturnedEquals string `xml:"HttpErrorCodeReturnedEquals,omitempty"`
	KeyPrefixEquals             string `xml:"KeyPrefixEquals,omitempty"`
}

type xmlWebsiteRedirect struct {
	HostName             string `xml:"HostName,omitempty"`
	HTTPRedirectCode     string `xml:"HttpRedirectCode,omitempty"`
	Protocol             string `xml:"Protocol,omitempty"`
	ReplaceKeyPrefixWith string `xml:"ReplaceKeyPrefixWith,omitempty"`
	ReplaceKeyWith       string `xml:"ReplaceKeyWith,omitempty"`
}

// readConfigBody reads a configuration document, verifying Content-MD5
// and an x-amz-checksum-* header when sent; required demands one of them
// (S3 requires it on PutBucketCors).
func (q *request) readConfigBody(required bool) ([]byte, error) {
	md5sum, cs, err := q.bodyDigests()
	if err != nil {
		return nil, err
	}
	if required && md5sum == nil && cs.alg == "" {
		return nil, errInvalidRequest("Missing required header for this request: Content-MD5 OR x-amz-checksum-*")
	}
	body, err := q.readBody(maxConfigBody)
	if err != nil {
		return nil, err
	}
	if md5sum != nil {
		if sum := md5.Sum(body); string(sum[:]) != string(md5sum) {
			return nil, toAPIError(engine.ErrBadDigest)
		}
	}
	if cs.alg != "" {
		if err := verifyChecksum(q, cs, body); err != nil {
			return nil, err
		}
	}
	return body, nil
}

// storeConfig stores v, already validated, in its canonical form (no
// namespace), or removes the document when v is nil.
func (q *request) storeConfig(which engine.BucketConfig, v any) error {
	doc := ""
	if v != nil {
		out, err := xml.Marshal(v)
		if err != nil {
			return errInternal(fmt.Errorf("marshal %s: %w", which, err))
		}
		doc = string(out)
	}
	if err := q.s.cfg.Store.SetBucketConfig(q.ctx, q.bucket, which, doc); err != nil {
		return fmt.Errorf("set bucket %s: %w", which, err)
	}
	return nil
}

// corsMethods are the methods a CORS rule may allow.
var corsMethods = map[string]bool{"GET": true, "PUT": true, "POST": true, "DELETE": true, "HEAD": true}

// parseCORS decodes and validates a CORS configuration.
func parseCORS(body []byte) (*xmlCORSConfiguration, error) {
	var cfg xmlCORSConfiguration
	if err := xml.Unmarshal(body, &cfg); err != nil {
		return nil, errMalformedXML()
	}
	if len(cfg.Rules) == 0 || len(cfg.Rules) > maxCORSRules {
		return nil, errMalformedXML()
	}
	for i := range cfg.Rules {
		r := &cfg.Rules[i]
		if len(r.AllowedMethods) == 0 || len(r.AllowedOrigins) == 0 || len(r.ID) > 255 {
			return nil, errMalformedXML()
		}
		for _, m := range r.AllowedMethods {
			if !corsMethods[m] {
				return nil, errInvalidRequest("Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
			}
		}
		for _, o := range r.AllowedOrigins {
			if strings.Count(o, "*") > 1 {
				return nil, errInvalidRequest("AllowedOrigin %q can not have more than one wildcard.", o)
			}
		}
		for _, h := range r.AllowedHeaders {
			if strings.Count(h, "*") > 1 {
				return nil, errInvalidRequest("AllowedHeader %q can not have more than one wildcard.", h)
			}
		}
		if r.MaxAgeSeconds != nil && *r.MaxAgeSeconds < 0 {
			return nil, errMalformedXML()
		}
	}
	return &cfg, nil
}

func handlePutBucketCors(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(true)
	if err != nil {
		return err
	}
	cfg, err := parseCORS(body)
	if err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigCORS, cfg); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

// storedCORS is a bucket's CORS configuration, nil when none is set.
func storedCORS(bi engine.BucketInfo) *xmlCORSConfiguration {
	if bi.CORS == "" {
		return nil
	}
	var cfg xmlCORSConfiguration
	if xml.Unmarshal([]byte(bi.CORS), &cfg) != nil {
		return nil
	}
	return &cfg
}

func handleGetBucketCors(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	cfg := storedCORS(bi)
	if cfg == nil {
		return errorf("NoSuchCORSConfiguration", http.StatusNotFound, "The CORS configuration does not exist")
	}
	cfg.NS = s3NS
	q.writeXML(cfg)
	return nil
}

func handleDeleteBucketCors(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigCORS, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

// The ObjectOwnership settings of ownership controls (access.Ownership).
// A bucket without ownership controls is ObjectWriter (S3 defaults new
// buckets to BucketOwnerEnforced; shardstore keeps ACLs on unless asked,
// as the README says):
//
//   - ObjectWriter: the writer of an object owns it; ACLs apply.
//   - BucketOwnerPreferred: as ObjectWriter, except that an object
//     written with the bucket-owner-full-control canned ACL is the
//     bucket owner's.
//   - BucketOwnerEnforced: ACLs are off. A request setting any ACL but
//     bucket-owner-full-control (or its explicit equivalent) answers 400
//     AccessControlListNotSupported; new objects are the bucket owner's,
//     every object counts as the bucket owner's in access decisions, no
//     grant counts (access.Decide), and Get*Acl show the bucket owner's
//     FULL_CONTROL alone.
const (
	ownershipWriter    = string(access.ObjectWriter)
	ownershipPreferred = string(access.BucketOwnerPreferred)
	ownershipEnforced  = string(access.BucketOwnerEnforced)
)

// objectOwnerships are the ObjectOwnership settings S3 knows.
var objectOwnerships = map[string]bool{ownershipEnforced: true, ownershipPreferred: true, ownershipWriter: true}

// ownershipDocument is the stored form of an ObjectOwnership setting.
func ownershipDocument(v string) string {
	out, err := xml.Marshal(&xmlOwnershipControls{Rules: []xmlOwnershipControlsRule{{ObjectOwnership: v}}})
	if err != nil {
		panic(err) // plain strings always marshal
	}
	return string(out)
}

// storedOwnerships maps each stored document to its setting, so that
// access decisions never parse XML.
var storedOwnerships = map[string]string{
	ownershipDocument(ownershipWriter):    ownershipWriter,
	ownershipDocument(ownershipPreferred): ownershipPreferred,
	ownershipDocument(ownershipEnforced):  ownershipEnforced,
}

// objectOwnership is bi's ObjectOwnership setting: ObjectWriter when it
// has no ownership controls, BucketOwnerEnforced (ACLs off, the safe
// reading) when its document cannot be read.
func objectOwnership(bi engine.BucketInfo) string {
	if bi.OwnershipControls == "" {
		return ownershipWriter
	}
	if v, ok := storedOwnerships[bi.OwnershipControls]; ok {
		return v
	}
	var cfg xmlOwnershipControls
	if xml.Unmarshal([]byte(bi.OwnershipControls), &cfg) != nil || len(cfg.Rules) != 1 ||
		!objectOwnerships[cfg.Rules[0].ObjectOwnership] {
		return ownershipEnforced
	}
	return cfg.Rules[0].ObjectOwnership
}

// errACLNotSupported answers an ACL set on a bucket whose ACLs are off.
func errACLNotSupported() *Error {
	return errorf("AccessControlListNotSupported", http.StatusBadRequest, "The bucket does not allow ACLs")
}

// errBucketACLWithOwnership answers a bucket ACL that grants others on a
// bucket that is to be BucketOwnerEnforced.
func errBucketACLWithOwnership() *Error {
	return errorf("InvalidBucketAclWithObjectOwnership", http.StatusBadRequest,
		"Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
}

// bucketACLGrantsOthers reports whether a bucket's stored ACL grants
// anything to anyone but its owner, which BucketOwnerEnforced forbids.
func (s *Server) bucketACLGrantsOthers(bi engine.BucketInfo) bool {
	for _, g := range s.aclGrants(bi.ACL, false) {
		if g.To != access.CanonicalUser || g.ID != canonicalID(bi.Owner) {
			return true
		}
	}
	return false
}

func handlePutBucketOwnershipControls(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	var cfg xmlOwnershipControls
	if err := xml.Unmarshal(body, &cfg); err != nil || len(cfg.Rules) != 1 ||
		!objectOwnerships[cfg.Rules[0].ObjectOwnership] {
		return errMalformedXML()
	}
	if cfg.Rules[0].ObjectOwnership == ownershipEnforced && q.s.bucketACLGrantsOthers(bi) {
		return errBucketACLWithOwnership()
	}
	if err := q.storeConfig(engine.BucketConfigOwnershipControls, &cfg); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketOwnershipControls(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	var cfg xmlOwnershipControls
	if bi.OwnershipControls == "" || xml.Unmarshal([]byte(bi.OwnershipControls), &cfg) != nil {
		return errorf("OwnershipControlsNotFoundError", http.StatusNotFound, "The bucket ownership controls were not found")
	}
	cfg.NS = s3NS
	q.writeXML(cfg)
	return nil
}

func handleDeleteBucketOwnershipControls(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigOwnershipControls, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

// validateWebsite checks a website configuration the way S3 does: either
// RedirectAllRequestsTo alone, or an IndexDocument (with optional
// ErrorDocument and RoutingRules).
func validateWebsite(cfg *xmlWebsiteConfiguration) error {
	if cfg.RedirectAllRequestsTo != nil {
		if cfg.IndexDocument != nil || cfg.ErrorDocument != nil || cfg.RoutingRules != nil {
			return errInvalidArgument("RedirectAllRequestsTo cannot be provided in conjunction with other Routing/Website configuration parameters.")
		}
		if cfg.RedirectAllRequestsTo.HostName == "" {
			return errMalformedXML()
		}
		return validProtocol(cfg.RedirectAllRequestsTo.Protocol)
	}
	if cfg.IndexDocument == nil {
		return errInvalidArgument("A value for IndexDocument Suffix must be provided if RedirectAllRequestsTo is empty")
	}
	if s := cfg.IndexDocument.Suffix; s == "" || strings.Contains(s, "/") {
		return errInvalidArgument("The IndexDocument Suffix is not well formed")
	}
	if cfg.ErrorDocument != nil && cfg.ErrorDocument.Key == "" {
		return errInvalidArgument("The ErrorDocument Key is not well formed")
	}
	if cfg.RoutingRules != nil {
		if len(cfg.RoutingRules.Rules) == 0 || len(cfg.RoutingRules.Rules) > 50 {
			return errMalformedXML()
		}
		for _, r := range cfg.RoutingRules.Rules {
			if r.Redirect == nil {
				return errMalformedXML()
			}
			if r.Redirect.ReplaceKeyPrefixWith != "" && r.Redirect.ReplaceKeyWith != "" {
				return errInvalidArgument("You can only define ReplaceKeyPrefix or ReplaceKey but not both.")
			}
			if c := r.Redirect.HTTPRedirectCode; c != "" {
				if n, err := strconv.Atoi(c); err != nil || n < 300 || n > 399 {
					return errInvalidArgument("The provided HTTP redirect code (%s) is not valid. Valid codes are 3XX except 300.", c)
				}
			}
			if err := validProtocol(r.Redirect.Protocol); err != nil {
				return err
			}
		}
	}
	return nil
}

func validProtocol(p string) error {
	if p != "" && p != "http" && p != "https" {
		return errInvalidArgument("Invalid protocol, protocol can be http or https. If not defined the protocol will be selected automatically.")
	}
	return nil
}

func handlePutBucketWebsite(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	var cfg xmlWebsiteConfiguration
	if err := xml.Unmarshal(body, &cfg); err != nil {
		return errMalformedXML()
	}
	if err := validateWebsite(&cfg); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigWebsite, &cfg); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketWebsite(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	var cfg xmlWebsiteConfiguration
	if bi.Website == "" || xml.Unmarshal([]byte(bi.Website), &cfg) != nil {
		return errorf("NoSuchWebsiteConfiguration", http.StatusNotFound, "The specified bucket does not have a website configuration")
	}
	cfg.NS = s3NS
	q.writeXML(cfg)
	return nil
}

func handleDeleteBucketWebsite(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigWebsite, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}

// apiPreflight is the API name of a CORS preflight (OPTIONS) request.
const apiPreflight = "PreflightRequest"

// wildcardMatch matches s against a pattern with at most one '*' (any
// run of characters); fold compares case-insensitively.
func wildcardMatch(pattern, s string, fold bool) bool {
	if fold {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	before, after, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == s
	}
	return len(s) >= len(before)+len(after) && strings.HasPrefix(s, before) && strings.HasSuffix(s, after)
}

// matchCORS returns the first rule allowing origin to use method with
// the given request headers, and whether the origin matched through a
// bare "*".
func matchCORS(cfg *xmlCORSConfiguration, origin, method string, headers []string) (*xmlCORSRule, bool) {
	for i := range cfg.Rules {
		r := &cfg.Rules[i]
		star, originOK := false, false
		for _, o := range r.AllowedOrigins {
			if wildcardMatch(o, origin, false) {
				originOK, star = true, o == "*"
				break
			}
		}
		methodOK := false
		for _, m := range r.AllowedMethods {
			methodOK = methodOK || m == method
		}
		if !originOK || !methodOK {
			continue
		}
		headersOK := true
		for _, h := range headers {
			found := false
			for _, a := range r.AllowedHeaders {
				if wildcardMatch(a, h, true) {
					found = true
					break
				}
			}
			if !found {
				headersOK = false
				break
			}
		}
		if headersOK {
			return r, star
		}
	}
	return nil, false
}

// setCORSHeaders writes the Access-Control-* answer of rule r.
func setCORSHeaders(h http.Header, r *xmlCORSRule, star bool, origin string) {
	h.Add("Vary", "Origin")
	if star {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(r.AllowedMethods, ", "))
	if len(r.ExposeHeaders) > 0 {
		h.Set("Access-Control-Expose-Headers", strings.Join(r.ExposeHeaders, ", "))
	}
	if r.MaxAgeSeconds != nil {
		h.Set("Access-Control-Max-Age", strconv.Itoa(*r.MaxAgeSeconds))
	}
}

// errCORSDenied is S3's answer to a preflight no rule allows.
func errCORSDenied() *Error {
	return errorf("AccessForbidden", http.StatusForbidden,
		"CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, "+
			"request method / Access-Control-Request-Method or Access-Control-Request-Headers are not "+
			"whitelisted by the resource's CORS spec.")
}

// handlePreflight answers a browser's unsigned OPTIONS preflight from the
// bucket's CORS rules.
func handlePreflight(q *request) error {
	origin := q.r.Header.Get("Origin")
	if origin == "" {
		return errorf("BadRequest", http.StatusBadRequest, "Insufficient information. Origin request header needed.")
	}
	method := q.r.Header.Get("Access-Control-Request-Method")
	if !corsMethods[method] {
		return errorf("BadRequest", http.StatusBadRequest, "Invalid Access-Control-Request-Method: %s", method)
	}
	headers := corsRequestHeaders(q.r.Header)
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	cfg := storedCORS(bi)
	if cfg == nil {
		return errorf("AccessForbidden", http.StatusForbidden, "CORSResponse: CORS is not enabled for this bucket.")
	}
	r, star := matchCORS(cfg, origin, method, headers)
	if r == nil {
		return errCORSDenied()
	}
	h := q.w.Header()
	setCORSHeaders(h, r, star, origin)
	if len(headers) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

// corsActual adds the Access-Control-* headers to an actual (non
// preflight) request that carries an Origin a rule of its bucket allows.
// It must run before the handler writes anything; failures to read the
// bucket are left to the handler to report.
func (q *request) corsActual() {
	origin := q.r.Header.Get("Origin")
	if origin == "" || q.bucket == "" {
		return
	}
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		if !errors.Is(err, engine.ErrBucketNotFound) {
			q.s.log.Debug("cors: bucket info", "request_id", q.id, "err", err)
		}
		return
	}
	cfg := storedCORS(bi)
	if cfg == nil {
		return
	}
	// Like S3, an actual request that carries the preflight headers is
	// matched as its preflight would be.
	method, headers := q.r.Method, []string(nil)
	if m := q.r.Header.Get("Access-Control-Request-Method"); corsMethods[m] {
		method, headers = m, corsRequestHeaders(q.r.Header)
	}
	if r, star := matchCORS(cfg, origin, method, headers); r != nil {
		setCORSHeaders(q.w.Header(), r, star, origin)
	}
}

// corsRequestHeaders lists Access-Control-Request-Headers, lower-cased.
func corsRequestHeaders(h http.Header) []string {
	var headers []string
	for _, v := range h.Values("Access-Control-Request-Headers") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
				headers = append(headers, name)
			}
		}
	}
	return headers
}
