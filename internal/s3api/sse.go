package s3api

// Server-side encryption as S3 clients ask for it: SSE-S3
// (x-amz-server-side-encryption: AES256), SSE-KMS (aws:kms, with a key
// id and an encryption context) and SSE-C (the customer-key headers),
// bucket default encryption (?encryption) and the server-wide default
// (Config.EncryptAll).
//
// This layer makes each object's random key, seals it (package sse) under
// a key encryption key (a KMS data key, or one derived from the customer
// key) and hands both to the engine, which encrypts the data between
// hashing and erasure coding and stores the sealed map beside the
// version. Reads give the engine an unseal function that checks access
// first, so nobody without read access causes a KMS call or learns
// whether a customer key is right.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/release"
	"github.com/shardstore/shardstore/internal/sealing"
	"github.com/shardstore/shardstore/internal/sse"
)

// The schemes and sealed-map keys are package sealing's.
const (
	schemeS3  = sealing.SchemeS3
	schemeKMS = sealing.SchemeKMS
	schemeC   = sealing.SchemeC
)

const (
	hdrSSE          = "X-Amz-Server-Side-Encryption"
	hdrSSEKMSKey    = "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"
	hdrSSEContext   = "X-Amz-Server-Side-Encryption-Context"
	hdrSSEBucketKey = "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled"
	hdrSSECPrefix   = "X-Amz-Server-Side-Encryption-Customer-"
	hdrCopySSEC     = "X-Amz-Copy-Source-Server-Side-Encryption-Customer-"
)

// sseRequest is what a request's headers ask for.
type sseRequest struct {
	scheme     string // "", schemeS3, schemeKMS, schemeC
	kmsKey     string
	kmsContext string // base64 JSON as sent
	bucketKey  bool
	// customerKey and customerKeyMD5 (base64, as sent) for SSE-C.
	customerKey    []byte
	customerKeyMD5 string
}

// customerKeyHeaders reads one set of SSE-C headers (prefix hdrSSECPrefix
// or hdrCopySSEC); ok is false when none is present.
func customerKeyHeaders(h http.Header, prefix string) (key []byte, keyMD5 string, ok bool, err error) {
	alg := h.Get(prefix + "Algorithm")
	k64 := h.Get(prefix + "Key")
	md := h.Get(prefix + "Key-Md5")
	if alg == "" && k64 == "" && md == "" {
		return nil, "", false, nil
	}
	switch {
	case alg == "":
		return nil, "", true, errInvalidArgument("Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.")
	case alg != "AES256":
		return nil, "", true, errorf("InvalidEncryptionAlgorithmError", http.StatusBadRequest,
			"The encryption request you specified is not valid. The valid value is AES256.")
	case k64 == "":
		return nil, "", true, errInvalidArgument("Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	case md == "":
		return nil, "", true, errInvalidArgument("Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	}
	key, err = base64.StdEncoding.DecodeString(k64)
	if err != nil || len(key) != sse.KeySize {
		return nil, "", true, errInvalidArgument("The secret key was invalid for the specified algorithm.")
	}
	sum := md5.Sum(key)
	want, err := base64.StdEncoding.DecodeString(md)
	if err != nil || !bytes.Equal(want, sum[:]) {
		return nil, "", true, errInvalidArgument("The calculated MD5 hash of the key did not match the hash that was provided.")
	}
	return key, md, true, nil
}

// kmsKeyName turns the key ids clients send (a name, or an ARN naming
// it) into the KMS's key name.
func kmsKeyName(id string) string {
	if strings.HasPrefix(id, "arn:") {
		if i := strings.LastIndex(id, ":key/"); i >= 0 {
			return id[i+len(":key/"):]
		}
		if i := strings.LastIndex(id, ":"); i >= 0 {
			return id[i+1:]
		}
	}
	return id
}

// sseForWrite reads the encryption headers of a request that writes an
// object (PUT, POST, copy destination, multipart create).
func (q *request) sseForWrite(h http.Header) (sseRequest, error) {
	var req sseRequest
	key, keyMD5, hasC, err := customerKeyHeaders(h, hdrSSECPrefix)
	if err != nil {
		return req, err
	}
	mode := h.Get(hdrSSE)
	switch mode {
	case "":
	case "AES256":
		req.scheme = schemeS3
	case "aws:kms", "aws:kms:dsse":
		req.scheme = schemeKMS
	default:
		return req, errInvalidArgument("The encryption method specified is not supported")
	}
	if hasC {
		if mode != "" {
			return req, errInvalidArgument("Server Side Encryption with Customer provided key is incompatible with the encryption method specified")
		}
		req.scheme, req.customerKey, req.customerKeyMD5 = schemeC, key, keyMD5
	}
	if id := h.Get(hdrSSEKMSKey); id != "" {
		if req.scheme != schemeKMS {
			return req, errInvalidArgument("Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms")
		}
		req.kmsKey = kmsKeyName(id)
	}
	if c := h.Get(hdrSSEContext); c != "" {
		if req.scheme != schemeKMS {
			return req, errInvalidArgument("x-amz-server-side-encryption-context is only valid with aws:kms")
		}
		if _, err := sealing.UserContext(c); err != nil {
			return req, errInvalidArgument("The x-amz-server-side-encryption-context header is not valid: %v", err)
		}
		req.kmsContext = c
	}
	if v := h.Get(hdrSSEBucketKey); v != "" {
		if v != "true" && v != "false" {
			return req, errInvalidArgument("x-amz-server-side-encryption-bucket-key-enabled must be true or false")
		}
		req.bucketKey = v == "true"
	}
	return req, q.checkSecureForSSEC(hasC)
}

// sseForRead reads the headers of a request that reads an object (GET,
// HEAD, a copy source with prefix hdrCopySSEC, or adds to an upload):
// only SSE-C keys may be given; the other schemes need none.
func (q *request) sseForRead(h http.Header, prefix string) (sseRequest, error) {
	var req sseRequest
	if prefix == hdrSSECPrefix && (h.Get(hdrSSE) != "" || h.Get(hdrSSEKMSKey) != "") {
		return req, errInvalidArgument("x-amz-server-side-encryption and x-amz-server-side-encryption-aws-kms-key-id are not valid on this request")
	}
	key, keyMD5, hasC, err := customerKeyHeaders(h, prefix)
	if err != nil {
		return req, err
	}
	if hasC {
		req.scheme, req.customerKey, req.customerKeyMD5 = schemeC, key, keyMD5
	}
	return req, q.checkSecureForSSEC(hasC)
}

// checkSecureForSSEC refuses a customer key sent in clear, as S3 does:
// the key would be on the wire for anyone to read.
func (q *request) checkSecureForSSEC(hasC bool) error {
	if hasC && q.r.TLS == nil && !q.s.cfg.AllowSSECOverHTTP {
		return errInvalidRequest("Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.")
	}
	return nil
}

// bucketDefaultSSE is the bucket's default encryption as a request for
// it; ok is false when the bucket has none.
func bucketDefaultSSE(bi engine.BucketInfo) (sseRequest, bool) {
	if bi.Encryption == "" {
		return sseRequest{}, false
	}
	var cfg xmlSSEConfiguration
	if xml.Unmarshal([]byte(bi.Encryption), &cfg) != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Default == nil {
		return sseRequest{}, false
	}
	r := cfg.Rules[0]
	req := sseRequest{scheme: schemeS3, bucketKey: r.BucketKeyEnabled}
	if r.Default.Algorithm != "AES256" {
		req.scheme, req.kmsKey = schemeKMS, kmsKeyName(r.Default.KMSMasterKeyID)
	}
	return req, true
}

// newEncryption decides how a new object in bi is encrypted: as the
// request asks, else as the bucket's default, else as the server's
// (Config.EncryptAll: SSE-S3); nil means not encrypted.
func (q *request) newEncryption(bi engine.BucketInfo, key string, req sseRequest) (*engine.Encryption, error) {
	if req.scheme == "" {
		if def, ok := bucketDefaultSSE(bi); ok {
			req = def
		} else if q.s.cfg.EncryptAll {
			req.scheme = schemeS3
		} else {
			return nil, nil
		}
	}
	if req.scheme != schemeC && q.s.cfg.KMS == nil {
		return nil, errKMSNotConfigured()
	}
	if gate := q.s.cfg.Gate; gate != nil {
		if err := gate(release.EncryptedRecords); err != nil {
			// A node of an older release would read the record as a
			// plaintext object: the write waits for every node (503, so
			// SDKs retry and the client sees a clear message).
			return nil, errorf("ServiceUnavailable", http.StatusServiceUnavailable,
				"Server side encryption is not available yet: %v", err)
		}
	}
	objectKey, sealed, hide, err := q.s.keys().NewKey(q.ctx, q.bucket, key, sealing.Request{Scheme: req.scheme,
		KMSKey: req.kmsKey, KMSContext: req.kmsContext, BucketKey: req.bucketKey, CustomerKey: req.customerKey})
	if err != nil {
		return nil, sealingError(err, req.kmsKey)
	}
	return &engine.Encryption{Cipher: sse.DefaultCipher(), Key: objectKey, Sealed: sealed, HideETag: hide}, nil
}

// errKMSNotConfigured answers SSE-S3/SSE-KMS on a server without a KMS.
func errKMSNotConfigured() *Error {
	return errorf("NotImplemented", http.StatusNotImplemented,
		"Server side encryption specified but no KMS is configured (set SHARDSTORE_KMS_SECRET_KEY or a Vault KMS, see README \"Encryption at rest\").")
}

// kmsError maps a KMS failure to what the client sees; none carries a
// secret.
func kmsError(err error, keyID string) *Error {
	switch {
	case errors.Is(err, kms.ErrUnavailable):
		return &Error{Code: "ServiceUnavailable", Status: http.StatusServiceUnavailable,
			Message: "The key management service is unavailable; the request can be retried.", Err: err}
	case errors.Is(err, kms.ErrKeyNotFound):
		return &Error{Code: "KMS.NotFoundException", Status: http.StatusBadRequest,
			Message: fmt.Sprintf("Invalid keyId %s", keyID), Err: err}
	case errors.Is(err, kms.ErrDecrypt):
		return &Error{Code: "InternalError", Status: http.StatusInternalServerError,
			Message: "The object's data key does not unseal with the key management service.", Err: err}
	}
	return errInternal(fmt.Errorf("kms: %w", err))
}

func errSSECRequired() *Error {
	return errInvalidRequest("The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
}

func errSSECNotApplicable() *Error {
	return errInvalidRequest("The encryption parameters are not applicable to this object.")
}

func errSSECWrongKey() *Error {
	return errorf("AccessDenied", http.StatusForbidden,
		"The provided customer key does not match the one the object was encrypted with.")
}

// checkCustomerKey checks req's SSE-C key against a version (or
// upload) without unsealing anything: a HEAD, a copy source.
func checkCustomerKey(sealed map[string]string, req sseRequest) error {
	if err := sealing.CheckCustomerKey(sealed, req.customerKey); err != nil {
		return sealingError(err, "")
	}
	return nil
}

// sealingError maps a failure to make or recover an object key to what
// the client sees; none carries a secret.
func sealingError(err error, keyID string) *Error {
	switch {
	case errors.Is(err, sealing.ErrCustomerKeyRequired):
		return errSSECRequired()
	case errors.Is(err, sealing.ErrNotApplicable):
		return errSSECNotApplicable()
	case errors.Is(err, sealing.ErrCustomerKeyWrong):
		return errSSECWrongKey()
	case errors.Is(err, sealing.ErrNoKMS):
		return &Error{Code: "ServiceUnavailable", Status: http.StatusServiceUnavailable,
			Message: "The object is encrypted with a KMS key and this server has no KMS configured.", Err: err}
	case errors.Is(err, sealing.ErrDamaged):
		return errInternal(err)
	}
	return kmsError(err, keyID)
}

// unsealer is the engine's way back to an object key: it checks that
// the caller may read the version (checkRead: so no KMS call or key
// check is made for anyone else; a copy source and a part were checked
// before), then unseals with the customer key or the KMS.
// seen, when non-nil, receives the version's sealed map (for answer
// headers).
func (q *request) unsealer(bi engine.BucketInfo, req sseRequest, seen *map[string]string, checkRead bool) engine.UnsealFunc {
	return func(info engine.ObjectInfo) ([]byte, error) {
		if checkRead && !q.allows(access.ReadObject, q.objectResource(bi, info)) {
			return nil, errAccessDenied()
		}
		if seen != nil {
			*seen = info.Sealed
		}
		return q.s.unsealKey(q.ctx, info.Bucket, info.Key, info.Sealed, req)
	}
}

// partUnsealer is the unsealer of a part upload (the caller's write
// access to the upload was decided): its customer-key errors are the
// ones S3 gives parts, 400 both for a missing and a different key.
func (q *request) partUnsealer(req sseRequest, seen *map[string]string) engine.UnsealFunc {
	return func(info engine.ObjectInfo) ([]byte, error) {
		if seen != nil {
			*seen = info.Sealed
		}
		switch err := sealing.CheckCustomerKey(info.Sealed, req.customerKey); {
		case errors.Is(err, sealing.ErrCustomerKeyRequired):
			return nil, errInvalidRequest("The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.")
		case errors.Is(err, sealing.ErrCustomerKeyWrong):
			return nil, errInvalidRequest("The provided encryption parameters did not match the ones used originally.")
		case errors.Is(err, sealing.ErrNotApplicable):
			return nil, errInvalidRequest("The multipart upload initiate did not request encryption; the part request must not carry encryption parameters.")
		}
		return q.s.unsealKey(q.ctx, info.Bucket, info.Key, info.Sealed, req)
	}
}

// keys is the server's object-key sealer.
func (s *Server) keys() sealing.Keys { return sealing.Keys{KMS: s.cfg.KMS} }

// unsealKey recovers the object key of bucket/key from its sealed map.
func (s *Server) unsealKey(ctx context.Context, bucket, key string, sealed map[string]string, req sseRequest) ([]byte, error) {
	k, err := s.keys().Unseal(ctx, bucket, key, sealed, req.customerKey)
	if errors.Is(err, kms.ErrKeyNotFound) {
		// Not the client's mistake, as on a write: the key (version)
		// this object was sealed under is gone from the KMS.
		return nil, &Error{Code: "InternalError", Status: http.StatusInternalServerError,
			Message: fmt.Sprintf("The KMS key %s (or the version of it) this object is sealed under is not available at the key server.",
				sealed[sealing.KMSKey]), Err: err}
	}
	if err != nil {
		return nil, sealingError(err, sealed[sealing.KMSKey])
	}
	return k, nil
}

// setSSEHeaders answers what encryption a version (or upload) has, as
// S3 does on writes and reads: the scheme, the KMS key, and for SSE-C
// the algorithm and the MD5 of the key the request carried.
func setSSEHeaders(h http.Header, sealed map[string]string, req sseRequest) {
	switch sealed[sealing.Scheme] {
	case schemeS3:
		h.Set(hdrSSE, "AES256")
	case schemeKMS:
		h.Set(hdrSSE, "aws:kms")
		h.Set(hdrSSEKMSKey, sealed[sealing.KMSKey])
		if c := sealed[sealing.KMSContext]; c != "" {
			h.Set(hdrSSEContext, c)
		}
	case schemeC:
		h.Set(hdrSSECPrefix+"Algorithm", "AES256")
		if req.customerKeyMD5 != "" {
			h.Set(hdrSSECPrefix+"Key-Md5", req.customerKeyMD5)
		}
	default:
		return
	}
	if sealed[sealing.BucketKey] == "true" {
		h.Set(hdrSSEBucketKey, "true")
	}
}

// sameEncryption reports whether a copy onto itself asks for the
// encryption the object already has (the same scheme and key), so its
// data may stay as it is.
func sameEncryption(sealed map[string]string, dest *engine.Encryption, req sseRequest) bool {
	if dest == nil || sealed[sealing.Scheme] != dest.Sealed[sealing.Scheme] {
		return false
	}
	switch sealed[sealing.Scheme] {
	case schemeC:
		return checkCustomerKey(sealed, req) == nil
	case schemeKMS:
		return sealed[sealing.KMSKey] == dest.Sealed[sealing.KMSKey] && sealed[sealing.KMSContext] == dest.Sealed[sealing.KMSContext]
	}
	return true
}

// ServerSideEncryptionConfiguration, the ?encryption document.
type xmlSSEConfiguration struct {
	XMLName xml.Name     `xml:"ServerSideEncryptionConfiguration"`
	NS      string       `xml:"xmlns,attr,omitempty"`
	Rules   []xmlSSERule `xml:"Rule"`
}

type xmlSSERule struct {
	Default          *xmlSSEDefault `xml:"ApplyServerSideEncryptionByDefault"`
	BucketKeyEnabled bool           `xml:"BucketKeyEnabled"`
}

type xmlSSEDefault struct {
	Algorithm      string `xml:"SSEAlgorithm"`
	KMSMasterKeyID string `xml:"KMSMasterKeyID,omitempty"`
}

func handlePutBucketEncryption(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	body, err := q.readConfigBody(false)
	if err != nil {
		return err
	}
	var cfg xmlSSEConfiguration
	if err := xml.Unmarshal(body, &cfg); err != nil || len(cfg.Rules) != 1 || cfg.Rules[0].Default == nil {
		return errMalformedXML()
	}
	d := cfg.Rules[0].Default
	switch d.Algorithm {
	case "AES256":
		if d.KMSMasterKeyID != "" {
			return errInvalidArgument("a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms")
		}
	case "aws:kms", "aws:kms:dsse":
	default:
		return errMalformedXML()
	}
	if q.s.cfg.KMS == nil {
		return errKMSNotConfigured()
	}
	if d.KMSMasterKeyID != "" {
		// A key that does not exist would fail every later PUT: refuse
		// it now (a key server that is down is no reason to).
		name := kmsKeyName(d.KMSMasterKeyID)
		if _, err := q.s.cfg.KMS.GenerateKey(q.ctx, name, kms.Context{}); errors.Is(err, kms.ErrKeyNotFound) {
			return kmsError(err, name)
		}
	}
	cfg.NS = ""
	if err := q.storeConfig(engine.BucketConfigEncryption, &cfg); err != nil {
		return err
	}
	q.writeEmpty(http.StatusOK)
	return nil
}

func handleGetBucketEncryption(q *request) error {
	bi, err := q.bucketAccess(q.bucket, access.BucketAdmin)
	if err != nil {
		return err
	}
	var cfg xmlSSEConfiguration
	if bi.Encryption == "" || xml.Unmarshal([]byte(bi.Encryption), &cfg) != nil {
		return errorf("ServerSideEncryptionConfigurationNotFoundError", http.StatusNotFound,
			"The server side encryption configuration was not found")
	}
	cfg.NS = s3NS
	q.writeXML(cfg)
	return nil
}

func handleDeleteBucketEncryption(q *request) error {
	if _, err := q.bucketAccess(q.bucket, access.BucketAdmin); err != nil {
		return err
	}
	if err := q.storeConfig(engine.BucketConfigEncryption, nil); err != nil {
		return err
	}
	q.writeEmpty(http.StatusNoContent)
	return nil
}
