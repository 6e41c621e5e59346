package s3api

// Server access logging, the configuration half: ?logging
// (Put/GetBucketLogging), stored in the bucket record
// (engine.BucketConfigLogging) in a canonical form without namespace,
// and the delivery of log objects into target buckets (DeliverAccessLog,
// which package accesslog's spool calls). The records themselves are
// made in accesslog.go; package accesslog keeps them durably until they
// are delivered.
//
// Delivery is authorised without a grant on the target: logging can only
// be configured by someone allowed s3:PutBucketLogging on the source,
// onto a target of the same owner, and that owner's configuration is the
// permission (S3 asks for a bucket policy allowing the logging service,
// or an ACL grant to its log delivery group; see docs/conformance.md).
// Each delivery checks again that the target exists, still belongs to
// the source's owner and has no object lock, and that the target's
// bucket policy does not deny s3:PutObject on the log object's key (a
// Deny to "*", or, once the policy language knows Service principals,
// to logging.s3.amazonaws.com).

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/accesslog"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/policy"
)

// LoggingService is the service principal S3 delivers access logs as,
// which bucket policies name to allow or deny deliveries.
const LoggingService = "logging.s3.amazonaws.com"

// Partition date sources of a PartitionedPrefix.
const (
	partitionEventTime    = "EventTime"
	partitionDeliveryTime = "DeliveryTime"
)

// maxLogSuffix is the longest part of a log object key after the
// TargetPrefix: the partitioned form's canonical account id (64),
// region, bucket (63), date and file name.
const maxLogSuffix = 64 + 1 + 32 + 1 + 63 + 1 + len("2006/01/02/") + len("2006-01-02-15-04-05-") + 16

// AccessLog is where the records of requests on buckets with logging
// enabled go (package accesslog's Spool): Append keeps a record durably
// before the request's answer starts, Amend replaces it with its final
// form without waiting (see accesslog.Spool).
type AccessLog interface {
	Append(accesslog.Entry) (uint64, error)
	Amend(accesslog.Entry, uint64)
}

// Request documents. Elements are matched in any namespace; repeated
// elements are collected so that a duplicate is refused, not dropped.
type xmlLoggingStatusInput struct {
	XMLName xml.Name                 `xml:"BucketLoggingStatus"`
	Enabled []xmlLoggingEnabledInput `xml:"LoggingEnabled"`
}

type xmlLoggingEnabledInput struct {
	TargetBucket []string            `xml:"TargetBucket"`
	TargetPrefix []string            `xml:"TargetPrefix"`
	Grants       []xmlTargetGrants   `xml:"TargetGrants"`
	KeyFormat    []xmlKeyFormatInput `xml:"TargetObjectKeyFormat"`
}

type xmlTargetGrants struct {
	Grants []xmlGrantInput `xml:"Grant"`
}

type xmlKeyFormatInput struct {
	Simple      []struct{}        `xml:"SimplePrefix"`
	Partitioned []xmlPartitioned  `xml:"PartitionedPrefix"`
	Other       []xmlUnknownChild `xml:",any"`
}

type xmlUnknownChild struct {
	XMLName xml.Name
}

type xmlPartitioned struct {
	DateSource []string `xml:"PartitionDateSource"`
}

// The stored and answered document, in S3's element order.
type xmlLoggingStatus struct {
	XMLName xml.Name           `xml:"BucketLoggingStatus"`
	NS      string             `xml:"xmlns,attr,omitempty"`
	Enabled *xmlLoggingEnabled `xml:"LoggingEnabled"`
}

type xmlLoggingEnabled struct {
	TargetBucket string        `xml:"TargetBucket"`
	TargetGrants *xmlGrantList `xml:"TargetGrants"`
	KeyFormat    *xmlKeyFormat `xml:"TargetObjectKeyFormat"`
	TargetPrefix string        `xml:"TargetPrefix"`
}

type xmlGrantList struct {
	Grants []xmlGrant `xml:"Grant"`
}

type xmlKeyFormat struct {
	Simple      *struct{}           `xml:"SimplePrefix"`
	Partitioned *xmlPartitionedDate `xml:"PartitionedPrefix"`
}

type xmlPartitionedDate struct {
	DateSource string `xml:"PartitionDateSource,omitempty"`
}

// targetPermissions are the permissions a TargetGrant may give.
var targetPermissions = map[string]access.Permission{
	"FULL_CONTROL": access.PermFullControl, "READ": access.PermRead, "WRITE": access.PermWrite,
}

// errInvalidTarget is S3's answer to a target bucket that cannot take
// the logs.
func errInvalidTarget(format string, args ...any) *Error {
	return errorf("InvalidTargetBucketForLogging", http.StatusBadRequest, format, args...)
}

// parseLogging reads a BucketLoggingStatus body: nil means logging off
// (an empty BucketLoggingStatus). What S3's schema refuses answers
// MalformedXML; grants to unknown users InvalidArgument, to e-mail
// addresses UnresolvableGrantByEmailAddress, as ACLs do.
func (s *Server) parseLogging(body []byte) (*xmlLoggingEnabled, error) {
	var in xmlLoggingStatusInput
	if err := xml.Unmarshal(body, &in); err != nil {
		return nil, errMalformedXML()
	}
	switch len(in.Enabled) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, errMalformedXML()
	}
	e := in.Enabled[0]
	if len(e.TargetBucket) != 1 || len(e.TargetPrefix) != 1 || len(e.Grants) > 1 || len(e.KeyFormat) > 1 {
		return nil, errMalformedXML()
	}
	out := &xmlLoggingEnabled{TargetBucket: strings.TrimSpace(e.TargetBucket[0]), TargetPrefix: e.TargetPrefix[0]}
	if out.TargetBucket == "" {
		return nil, errInvalidTarget("The target bucket for logging does not exist")
	}
	if len(out.TargetPrefix)+maxLogSuffix > engine.MaxKeyLength {
		return nil, errInvalidArgument("The TargetPrefix is too long: log object keys must fit in %d bytes", engine.MaxKeyLength)
	}
	if len(e.KeyFormat) == 1 {
		f := e.KeyFormat[0]
		switch {
		case len(f.Other) > 0 || len(f.Simple)+len(f.Partitioned) != 1:
			return nil, errMalformedXML()
		case len(f.Simple) == 1:
			out.KeyFormat = &xmlKeyFormat{Simple: &struct{}{}}
		default:
			p := f.Partitioned[0]
			if len(p.DateSource) > 1 {
				return nil, errMalformedXML()
			}
			pd := &xmlPartitionedDate{}
			if len(p.DateSource) == 1 {
				pd.DateSource = strings.TrimSpace(p.DateSource[0])
				if pd.DateSource != partitionEventTime && pd.DateSource != partitionDeliveryTime {
					return nil, errMalformedXML()
				}
			}
			out.KeyFormat = &xmlKeyFormat{Partitioned: pd}
		}
	}
	if len(e.Grants) == 1 {
		gs := e.Grants[0].Grants
		if len(gs) > maxGrants {
			return nil, errMalformedXML()
		}
		list := &xmlGrantList{}
		for _, g := range gs {
			xg, err := s.targetGrant(g)
			if err != nil {
				return nil, err
			}
			list.Grants = append(list.Grants, xg)
		}
		out.TargetGrants = list
	}
	return out, nil
}

// targetGrant checks one TargetGrants entry and returns its stored form.
func (s *Server) targetGrant(g xmlGrantInput) (xmlGrant, error) {
	perm, ok := targetPermissions[strings.TrimSpace(g.Permission)]
	if g.Grantee == nil || !ok {
		return xmlGrant{}, errMalformedXML()
	}
	x, kind, ok := g.Grantee.resolve()
	if !ok {
		return xmlGrant{}, errMalformedXML()
	}
	switch kind {
	case "CanonicalUser":
		if _, err := s.userGrant(x.ID, perm); err != nil {
			return xmlGrant{}, err
		}
		return userGrantXML(&xmlOwner{ID: x.ID}, perm), nil
	case "Group":
		if _, err := groupGrant(x.URI, perm); err != nil {
			return xmlGrant{}, err
		}
		return groupGrantXML(x.URI, perm), nil
	case "AmazonCustomerByEmail":
		return xmlGrant{}, errUnresolvableEmail()
	}
	return xmlGrant{}, errMalformedXML()
}

// checkLoggingTarget applies S3's rules for a target bucket: it exists,
// has the source's owner and region, no object lock, and takes no
// TargetGrants while its ACLs are off.
func (q *request) checkLoggingTarget(source engine.BucketInfo, cfg *xmlLoggingEnabled) error {
	target, err := q.s.cfg.Store.BucketInfo(q.ctx, cfg.TargetBucket)
	if errors.Is(err, engine.ErrBucketNotFound) || errors.Is(err, engine.ErrInvalidBucketName) {
		return errInvalidTarget("The target bucket for logging does not exist")
	}
	if err != nil {
		return fmt.Errorf("logging target %q: %w", cfg.TargetBucket, err)
	}
	if target.Owner != source.Owner {
		return errInvalidTarget("The owner for the bucket to be logged and the target bucket must be the same.")
	}
	if q.s.bucketRegion(target) != q.s.bucketRegion(source) {
		return errorf("CrossLocationLoggingProhibitted", http.StatusForbidden, "Cross S3 location logging not allowed.")
	}
	if target.ObjectLock != "" {
		return errInvalidTarget("The target bucket for logging must not have Object Lock enabled.")
	}
	if cfg.TargetGrants != nil && len(cfg.TargetGrants.Grants) > 0 && objectOwnership(target) == ownershipEnforced {
		return errorf("AccessControlListNotSupported", http.StatusBadRequest, "Target grants not allowed for bucket owner enforced buckets")
	}
	return nil
}

func handlePutBucketLogging(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	cfg, err := q.s.parseLogging(body)
	if err != nil {
		return err
	}
	var doc any
	if cfg != nil {
		if err := q.checkLoggingTarget(bi, cfg); err != nil {
			return err
		}
		doc = &xmlLoggingStatus{Enabled: cfg}
	}
	if err := q.storeConfig(engine.BucketConfigLogging, doc); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketLogging(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	out := xmlLoggingStatus{NS: s3NS}
	if c := q.s.loggingConfig(bi); c != nil {
		enabled := *c.doc
		out.Enabled = &enabled
	}
	q.writeXML(out)
	return nil
}

// loggingConfig is a bucket's parsed logging configuration.
type loggingConfig struct {
	doc *xmlLoggingEnabled
	// account is the owner's canonical id, the log's Bucket Owner and
	// the partitioned keys' account.
	account      string
	partitioned  bool
	deliveryDate bool
	// grants is the log objects' ACL: the owner's FULL_CONTROL and the
	// TargetGrants, in the stored ACL form.
	grants string
}

// loggingConfig is bi's logging configuration, nil when logging is off
// (or its stored document cannot be read, which only a newer server's
// could be). Parsed configurations are cached by document.
func (s *Server) loggingConfig(bi engine.BucketInfo) *loggingConfig {
	if bi.Logging == "" {
		return nil
	}
	return s.loggings.get(bi.Owner+"\x00"+bi.Logging, func() *loggingConfig {
		var doc xmlLoggingStatus
		if xml.Unmarshal([]byte(bi.Logging), &doc) != nil || doc.Enabled == nil {
			return nil
		}
		c := &loggingConfig{doc: doc.Enabled, account: canonicalID(bi.Owner)}
		if f := doc.Enabled.KeyFormat; f != nil && f.Partitioned != nil {
			c.partitioned, c.deliveryDate = true, f.Partitioned.DateSource == partitionDeliveryTime
		}
		if g := doc.Enabled.TargetGrants; g != nil && len(g.Grants) > 0 {
			gs := []access.Grant{{To: access.CanonicalUser, ID: canonicalID(bi.Owner), Perm: access.PermFullControl}}
			for _, xg := range g.Grants {
				p := targetPermissions[xg.Permission]
				if xg.Grantee.ID != "" {
					gs = append(gs, access.Grant{To: access.CanonicalUser, ID: xg.Grantee.ID, Perm: p})
				} else if to, ok := groupURIs[xg.Grantee.URI]; ok {
					gs = append(gs, access.Grant{To: to, Perm: p})
				}
			}
			c.grants = encodeGrants(gs)
		}
		return c
	})
}

// loggingDestination is where bi's records go, nil when logging is off.
func (s *Server) loggingDestination(bi engine.BucketInfo) *accesslog.Destination {
	c := s.loggingConfig(bi)
	if c == nil {
		return nil
	}
	return &accesslog.Destination{SourceBucket: bi.Name, SourceOwner: bi.Owner, SourceAccount: c.account,
		SourceRegion: s.bucketRegion(bi), TargetBucket: c.doc.TargetBucket, TargetPrefix: c.doc.TargetPrefix,
		Partitioned: c.partitioned, DeliveryDate: c.deliveryDate, Grants: c.grants}
}

// undeliverable marks a delivery that can never succeed.
func undeliverable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", accesslog.ErrUndeliverable, fmt.Sprintf(format, args...))
}

// DeliverAccessLog writes one log object into its target bucket as the
// logging service would (accesslog.Config.Deliver): owned by the
// target's owner, with the TargetGrants as its ACL (none when the
// target's ACLs are off), encrypted as the target's default encryption
// says. A target that is gone, has another owner or object lock, or
// whose policy denies the delivery makes the object undeliverable
// (accesslog.ErrUndeliverable); other failures are retried. The
// permission is the shared owner (as PutBucketLogging checked it); the
// delivery is still asked of the one access decision as the logging
// service principal (serviceWriteDecision), so that a Deny in the
// target's policy, naming "*" or {"Service": "logging.s3.amazonaws.com"},
// stops it.
func (s *Server) DeliverAccessLog(ctx context.Context, o accesslog.Object) error {
	target, err := s.cfg.Store.BucketInfo(ctx, o.Dest.TargetBucket)
	switch {
	case errors.Is(err, engine.ErrBucketNotFound), errors.Is(err, engine.ErrInvalidBucketName):
		return undeliverable("target bucket %q does not exist", o.Dest.TargetBucket)
	case err != nil:
		return fmt.Errorf("logging target %q: %w", o.Dest.TargetBucket, err)
	case target.Owner != o.Dest.SourceOwner:
		return undeliverable("target bucket %q now belongs to another owner", o.Dest.TargetBucket)
	case target.ObjectLock != "":
		return undeliverable("target bucket %q has object lock enabled", o.Dest.TargetBucket)
	case s.serviceWriteDecision(target, o.Key, policy.LoggingService, o.Dest.SourceBucket, o.Dest.SourceOwner).ExplicitDeny:
		return undeliverable("the bucket policy of %q denies the delivery", o.Dest.TargetBucket)
	}
	acl := "private"
	if o.Dest.Grants != "" && objectOwnership(target) != ownershipEnforced {
		acl = o.Dest.Grants
	}
	q := &request{s: s, ctx: ctx, bucket: target.Name, key: o.Key}
	enc, err := q.newEncryption(target, o.Key, sseRequest{})
	if err != nil {
		if e := (*Error)(nil); errors.As(err, &e) && (e.Status < 500 || e.Status == http.StatusNotImplemented) {
			return undeliverable("target bucket %q: default encryption: %v", o.Dest.TargetBucket, err)
		}
		return err
	}
	_, err = s.cfg.Store.PutObject(ctx, target.Name, o.Key, bytes.NewReader(o.Body), int64(len(o.Body)),
		engine.PutOptions{ContentType: "text/plain", Owner: target.Owner, ACL: acl, Encryption: enc})
	switch {
	case errors.Is(err, engine.ErrBucketNotFound), errors.Is(err, engine.ErrInvalidObjectName),
		errors.Is(err, engine.ErrObjectLocked), errors.Is(err, engine.ErrObjectLockNotEnabled):
		return undeliverable("%v", err)
	case err != nil:
		return fmt.Errorf("deliver %s/%s: %w", target.Name, o.Key, err)
	}
	return nil
}
