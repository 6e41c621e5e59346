package s3api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/lifecycle"
	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/objectlock"
	"github.com/shardstore/shardstore/internal/policy"
)

// Reserved paths. The bucket name "shardstore" is refused so that these
// can never be shadowed by a bucket in path-style addressing.
const (
	ReservedBucket = "shardstore"
	pathLive       = "/shardstore/health/live"
	pathReady      = "/shardstore/health/ready"
	pathRead       = "/shardstore/health/read"
	pathMetrics    = "/shardstore/metrics"
	pathAdmin      = "/shardstore/admin/"
)

// Health checks answered at MinIO's paths too, so that load balancer
// and Kubernetes probes written for MinIO work unchanged: GET and HEAD
// of these exact paths only (MinIO refuses a bucket named "minio", so a
// deployment moving from it has no objects there; any other path or
// method under /minio/ is an ordinary S3 request).
var minioHealth = map[string]string{
	"/minio/health/live":         pathLive,
	"/minio/health/ready":        pathReady,
	"/minio/health/cluster":      pathReady,
	"/minio/health/cluster/read": pathRead,
}

// Config is everything a Server needs.
type Config struct {
	// Store is the object engine; required.
	Store ObjectStore
	// Auth authenticates requests; required.
	Auth Authenticator
	// Region, when set, is the only region the server answers for: a
	// CreateBucket LocationConstraint naming another region is refused
	// (signatures are the Authenticator's to check). Empty accepts any
	// region, records each bucket's own, and answers as us-east-1 where
	// the server must name one (HeadBucket of a legacy bucket, say).
	Region string
	// Domain enables virtual-host-style addressing: a request for
	// host BUCKET.Domain addresses BUCKET. Empty means path-style only.
	Domain string
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// LogRequests logs one line per request at info level.
	LogRequests bool
	// Registry receives the server's metrics and is served on
	// /shardstore/metrics; nil creates a fresh one (never the global).
	Registry *prometheus.Registry
	// STS, when set, serves STS requests (POST / signed for service
	// "sts"); otherwise they are S3 requests and refused as such.
	STS http.Handler
	// Admin, when set, serves /shardstore/admin/...; otherwise those
	// paths answer NotImplemented.
	Admin http.Handler
	// MaxHeaderBytes bounds request headers (default DefaultMaxHeaderBytes).
	MaxHeaderBytes int
	// MetricsAuth, when set, decides who may read /shardstore/metrics
	// (nil: anyone who reaches the port). An error wrapping
	// auth.ErrNoBearer is answered 401, any other 403; its text is the
	// answer's body, so it must carry no secret.
	MetricsAuth func(r *http.Request) error
	// Users resolves the canonical user ids ACL grants name; nil uses
	// Auth when it implements UserDirectory (SigV4 does). Without one,
	// grants to users are refused as naming unknown ids.
	Users UserDirectory
	// KMS seals the keys of SSE-S3 and SSE-KMS objects; nil refuses
	// them (SSE-C needs none).
	KMS kms.KMS
	// EncryptAll encrypts every new object with SSE-S3 unless the
	// request or the bucket's default says otherwise (needs KMS).
	EncryptAll bool
	// Gate, when set (a cluster node), says whether a feature of the
	// on-disk format is active in the cluster (package release): nil when
	// it is, else why not. Writes in that format are refused with 503
	// until it is (SSE: release.EncryptedRecords).
	Gate func(feature string) error
	// AllowSSECOverHTTP accepts SSE-C customer keys on plain HTTP
	// requests (S3 refuses them: the key crosses the network in clear).
	// For tests and TLS-terminating proxies only.
	AllowSSECOverHTTP bool
	// AccessLog keeps the server access log records of buckets with
	// logging enabled (package accesslog's Spool, which delivers them
	// through DeliverAccessLog); nil keeps none, though ?logging is
	// still stored and answered.
	AccessLog AccessLog
	// Notify queues bucket event notifications (package notify's Hub);
	// nil sends none, and a configuration naming any destination is
	// refused as naming an unknown one.
	Notify Notifier
	// Audit queues an audit record of every request when it has audit
	// targets (package notify's Hub); nil keeps none.
	Audit Auditor
	// ObserveLatency, when set, is told how long each small object
	// request took (GET, HEAD and PUT of an object, at most
	// latencyMaxBytes in and out, not failed by the server): the engine's
	// adaptive move throttle backs decommission and rebalance off when
	// they slow the clients down. Called on every such request: cheap.
	ObserveLatency func(time.Duration)
}

// latencyMaxBytes is the largest request (body in plus body out) whose
// time is a latency for Config.ObserveLatency; a larger one's time is
// mostly its transfer.
const latencyMaxBytes = 1 << 20

// Server is one S3 endpoint. Create it with New, run it with Serve and
// stop it with Shutdown; several can run in one process.
type Server struct {
	cfg      Config
	log      *slog.Logger
	registry *prometheus.Registry
	metrics  *metrics
	http     *http.Server
	reqSeq   atomic.Uint64
	// active counts requests being served, for Shutdown's progress.
	active   atomic.Int64
	idPrefix string
	hostID   string
	// copyBufs holds buffers for streaming GET bodies: larger than
	// io.Copy's 32 KiB so each write to the socket moves more data.
	copyBufs sync.Pool
	// policies caches compiled bucket policies, lifecycles parsed
	// lifecycle configurations, grantLists decoded explicit ACL grants.
	policies   docCache[*policy.Policy]
	lifecycles docCache[*lifecycle.Configuration]
	grantLists docCache[[]access.Grant]
	loggings   docCache[*loggingConfig]
	// notifications caches parsed notification configurations.
	notifications docCache[*notify.Config]
	// accessLogWarned is when a record was last refused with a warning
	// (unix seconds), so that a full spool logs once a minute, not once
	// a request.
	accessLogWarned atomic.Int64
}

// copyBufSize is the size of the GET streaming buffers.
const copyBufSize = 256 << 10

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inflight prometheus.Gauge
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
}

// New validates cfg and returns a Server ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("s3api: Config.Store is required")
	}
	if cfg.Auth == nil {
		return nil, errors.New("s3api: Config.Auth is required")
	}
	cfg.Domain = strings.ToLower(strings.TrimSuffix(cfg.Domain, "."))
	if cfg.MaxHeaderBytes <= 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	s := &Server{cfg: cfg, log: cfg.Logger, registry: cfg.Registry}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
	}
	s.metrics = &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shardstore_s3_requests_total", Help: "S3 requests by API and HTTP status.",
		}, []string{"api", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shardstore_s3_request_duration_seconds", Help: "S3 request latency by API.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"api"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shardstore_s3_requests_inflight", Help: "S3 requests being served.",
		}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shardstore_s3_received_bytes_total", Help: "Request body bytes read by S3 handlers.",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shardstore_s3_sent_bytes_total", Help: "Response body bytes written.",
		}),
	}
	for _, c := range []prometheus.Collector{s.metrics.requests, s.metrics.duration,
		s.metrics.inflight, s.metrics.bytesIn, s.metrics.bytesOut} {
		if err := s.registry.Register(c); err != nil {
			return nil, fmt.Errorf("s3api: register metrics: %w", err)
		}
	}
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("s3api: seed request ids: %w", err)
	}
	s.idPrefix = strings.ToUpper(hex.EncodeToString(rnd[:4]))
	s.hostID = base64.StdEncoding.EncodeToString(rnd[4:])
	s.copyBufs.New = func() any { b := make([]byte, copyBufSize); return &b }
	s.http = &http.Server{
		Handler:           s,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	return s, nil
}

// DefaultMaxHeaderBytes bounds the request headers of an S3 endpoint
// (S3 itself allows 8 KiB of user metadata; the rest is signatures and
// standard headers). A larger header section is 431.
const DefaultMaxHeaderBytes = 64 << 10

// Registry is the metrics registry served on /shardstore/metrics; other
// components may register their collectors in it.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Serve accepts connections on l until Shutdown; it returns nil after a
// clean shutdown.
func (s *Server) Serve(l net.Listener) error {
	err := s.http.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("s3api: serve: %w", err)
	}
	return nil
}

// Shutdown stops accepting connections and waits for in-flight requests
// until ctx ends, then closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if err != nil {
		// The wait was bounded: drop the stragglers rather than hang.
		cerr := s.http.Close()
		return errors.Join(fmt.Errorf("s3api: shutdown: %w", err), cerr)
	}
	return nil
}

// InFlight is the number of requests being served now.
func (s *Server) InFlight() int { return int(s.active.Load()) }

// Close closes the listeners and every connection at once, cutting
// requests in flight (their clients see a dropped connection; nothing
// they had not been answered for is acknowledged).
func (s *Server) Close() error { return s.http.Close() }

// request is the per-request state the handlers share.
type request struct {
	s      *Server
	w      *responseWriter
	r      *http.Request
	ctx    context.Context
	id     string
	api    string
	bucket string
	// importing marks a PutObject on the import path (import.go).
	importing bool
	key       string
	query     map[string][]string
	caller    Caller
	// body is the (decoded, verified) request body; length is its size
	// or -1 when unknown; trailer returns trailing headers after EOF.
	body    io.ReadCloser
	length  int64
	trailer func() http.Header
	// payloadSigned: the signature covers the body (AuthResult).
	payloadSigned bool
	// exact is the size-checked view of body that PUT handlers give the
	// engine; nil until bodySize is called.
	exact *exactBody
	// tags are the tags a PutObjectTagging body or a form's tagging
	// field sets, read before access is decided (requestTags); nil for
	// other requests.
	tags map[string]string
	// lock is the retention or legal hold a PutObjectRetention or
	// PutObjectLegalHold body sets, read before access is decided, for
	// the s3:object-lock-* condition keys; nil for other requests.
	lock *objectlock.Lock
	// sse is the encryption a write request asked for (putOptions).
	sse sseRequest
	// start is when the request arrived; counted counts its body.
	start   time.Time
	counted *countingReader
	// audited: the request's audit record is queued (notification.go).
	audited bool
	// errCode is the S3 error code answered, if any; aclRequired is
	// set when an ACL grant decided an access check. Both are for the
	// access log, as is alog, set when the bucket logs requests.
	errCode     string
	aclRequired bool
	alog        *accessLogState
	// events are the bucket events this request made, queued before
	// its answer (notification.go).
	events []pendingEvent
	// committedEvent: the write's event was enqueued at its commit
	// (commitHook).
	committedEvent bool
}

// responseWriter records what was written, for logs and metrics.
type responseWriter struct {
	http.ResponseWriter
	status  int
	written int64
	// unreadContinue reports a request that asked for 100-continue and
	// whose body the handler did not read to the end.
	unreadContinue func() bool
	// onHeader, when set, runs once before the answer's first byte is
	// written, with its status (the access log spools its record).
	onHeader func(status int)
	// beforeAnswer, when set, runs just before onHeader: the request's
	// bucket events are queued (notification.go).
	beforeAnswer func(status int)
	// onAnswer, when set, runs after onHeader: the request's audit
	// record is queued (notification.go).
	onAnswer func(status int)
}

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.beforeHeader()
	}
	w.ResponseWriter.WriteHeader(code)
}

// beforeHeader closes the connection after answering a 100-continue
// request without its body. net/http would otherwise read the body
// before sending our answer (it no longer sees its own expect-continue
// reader under our counting wrapper), so a refused PUT from boto3 or the
// aws cli would stall until the client gave up waiting for 100 Continue.
func (w *responseWriter) beforeHeader() {
	if w.unreadContinue != nil && w.unreadContinue() {
		w.Header().Set("Connection", "close")
	}
	if w.beforeAnswer != nil {
		w.beforeAnswer(w.status)
	}
	if w.onHeader != nil {
		w.onHeader(w.status)
	}
	if w.onAnswer != nil {
		w.onAnswer(w.status)
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
		w.beforeHeader()
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += int64(n)
	return n, err
}

// Flush lets streaming responses flush through the wrapper.
func (w *responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// countingReader counts request body bytes read, and notes when the
// last one was.
type countingReader struct {
	io.ReadCloser
	n     int64
	eof   bool
	eofAt time.Time
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	if err == io.EOF && !c.eof { //nolint:errorlint // io.EOF is returned unwrapped by contract
		c.eof, c.eofAt = true, time.Now()
	}
	return n, err
}

func (s *Server) newRequestID() string {
	return fmt.Sprintf("%s%08X", s.idPrefix, s.reqSeq.Add(1))
}

// ServeHTTP is the single entry point: it never lets a panic escape.
func (s *Server) ServeHTTP(hw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w := &responseWriter{ResponseWriter: hw}
	q := &request{s: s, w: w, r: r, ctx: r.Context(), id: s.newRequestID(), api: "Unknown", length: -1, start: start}
	h := w.Header()
	h.Set("X-Amz-Request-Id", q.id)
	h.Set("X-Amz-Id-2", s.hostID)
	h.Set("Server", "ShardStore")
	s.metrics.inflight.Inc()
	s.active.Add(1)
	var counted *countingReader
	defer func() {
		s.metrics.inflight.Dec()
		s.active.Add(-1)
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { //nolint:errorlint // sentinel compared by identity, as net/http does
				s.finish(q, start, counted)
				panic(v)
			}
			s.log.Error("panic serving request", "request_id", q.id, "api", q.api,
				"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v))
			if w.status == 0 {
				q.writeError(errInternal(fmt.Errorf("panic: %v", v)))
			}
		}
		s.finish(q, start, counted)
	}()
	if s.cfg.Audit != nil && s.cfg.Audit.HasAudit() {
		w.onAnswer = func(status int) { s.audit(q, status) }
	}
	if r.Body != nil {
		counted = &countingReader{ReadCloser: r.Body}
		q.counted = counted
		r.Body = counted
		if strings.EqualFold(r.Header.Get("Expect"), "100-continue") && r.ContentLength != 0 {
			w.unreadContinue = func() bool { return !counted.eof }
		}
	}
	s.serve(q)
}

// finish records metrics and the request log line.
func (s *Server) finish(q *request, start time.Time, counted *countingReader) {
	status := q.w.status
	if status == 0 {
		status = http.StatusOK
	}
	d := time.Since(start)
	q.finishAccessLog(status, d)
	s.metrics.requests.WithLabelValues(q.api, strconv.Itoa(status)).Inc()
	s.metrics.duration.WithLabelValues(q.api).Observe(d.Seconds())
	s.metrics.bytesOut.Add(float64(q.w.written))
	var in int64
	if counted != nil {
		in = counted.n
		s.metrics.bytesIn.Add(float64(in))
	}
	if o := s.cfg.ObserveLatency; o != nil && status < 500 && in+q.w.written <= latencyMaxBytes {
		switch q.api {
		case "GetObject", "HeadObject", "PutObject":
			o(d)
		}
	}
	if w := q.w; w.onAnswer != nil && !q.audited {
		// No answer was started (a panic, a client gone): the record
		// says how far the request got.
		s.audit(q, status)
	}
	if s.cfg.LogRequests {
		s.log.Info("request", "request_id", q.id, "api", q.api, "method", q.r.Method,
			"bucket", q.bucket, "key", q.key, "status", status, "caller", q.caller.AccessKey,
			"bytes_in", in, "bytes_out", q.w.written, "duration", d, "remote", q.r.RemoteAddr)
	}
}

// serve dispatches reserved paths, then routes and authenticates S3 calls.
func (s *Server) serve(q *request) {
	r := q.r
	bucket, key, vhost := s.parseTarget(r)
	if !vhost && s.reserved(q) {
		return
	}
	q.bucket, q.key = bucket, key
	q.query = r.URL.Query()
	rt := route(r.Method, bucket, key, q.query, r.Header)
	q.api = rt.api
	if rt.api == apiPreflight {
		// Browsers send CORS preflights unsigned: the bucket's CORS rules
		// alone decide the answer.
		q.caller = Caller{Anonymous: true}
		q.startAccessLog()
		if err := rt.handler(q); err != nil {
			q.writeError(toAPIError(err))
		}
		return
	}
	q.corsActual()
	// Authenticate before answering anything else, as S3 does, so a bad
	// signature is reported as such whatever the request asks for.
	res, err := s.cfg.Auth.Authenticate(r)
	if err != nil {
		q.writeError(toAPIError(err))
		return
	}
	q.caller = res.Caller
	q.startAccessLog()
	if rt.err != nil {
		q.writeError(rt.err)
		return
	}
	if len(key) > engine.MaxKeyLength {
		q.writeError(errorf("KeyTooLongError", http.StatusBadRequest, "Your key is too long"))
		return
	}
	q.caller = res.Caller
	q.body, q.length, q.trailer = res.Body, res.ContentLength, res.Trailer
	q.payloadSigned = res.PayloadSigned
	if q.body == nil {
		q.body = r.Body
		q.length = r.ContentLength
	}
	if q.body == nil {
		q.body = http.NoBody
	}
	if err := q.expectedBucketOwner(); err != nil {
		q.writeError(toAPIError(err))
		return
	}
	if err := rt.handler(q); err != nil {
		q.writeError(toAPIError(err))
	}
}

// healthAnswer answers a quorum health check: 200, or 503 when the
// quorum it asks about is lost.
func healthAnswer(q *request, ok bool) {
	q.w.Header().Set("Content-Length", "0")
	if ok {
		q.w.WriteHeader(http.StatusOK)
	} else {
		q.w.WriteHeader(http.StatusServiceUnavailable)
	}
}

// reserved serves /shardstore/... paths and MinIO's health checks; it
// reports whether it did.
func (s *Server) reserved(q *request) bool {
	p := q.r.URL.Path
	if alias, ok := minioHealth[p]; ok && (q.r.Method == http.MethodGet || q.r.Method == http.MethodHead) {
		p = alias
	}
	switch {
	case p == pathLive:
		q.api = "HealthLive"
		q.w.Header().Set("Content-Length", "0")
		q.w.WriteHeader(http.StatusOK)
		return true
	case p == pathReady:
		q.api = "HealthReady"
		healthAnswer(q, s.cfg.Store.Status().WriteQuorumOK)
		return true
	case p == pathRead:
		q.api = "HealthRead"
		healthAnswer(q, s.cfg.Store.Status().ReadQuorumOK)
		return true
	case p == pathMetrics:
		q.api = "Metrics"
		if s.cfg.MetricsAuth != nil {
			if err := s.cfg.MetricsAuth(q.r); err != nil {
				status := http.StatusForbidden
				if errors.Is(err, auth.ErrNoBearer) {
					status = http.StatusUnauthorized
					q.w.Header().Set("WWW-Authenticate", `Bearer realm="shardstore metrics"`)
				}
				http.Error(q.w, "metrics: "+err.Error(), status)
				return true
			}
		}
		promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}).ServeHTTP(q.w, q.r)
		return true
	case p == "/" && q.r.Method == http.MethodPost && s.cfg.STS != nil && (auth.IsSTSRequest(q.r) || auth.IsFederatedSTSRequest(q.r)):
		// STS on the S3 endpoint, as MinIO serves it: a form POST to "/"
		// signed for service "sts", or an unsigned one whose identity is
		// in its parameters (AssumeRoleWithLDAPIdentity).
		q.api = "STS"
		s.cfg.STS.ServeHTTP(q.w, q.r)
		return true
	case strings.HasPrefix(p, pathAdmin) || p == strings.TrimSuffix(pathAdmin, "/"):
		q.api = "Admin"
		if s.cfg.Admin != nil {
			s.cfg.Admin.ServeHTTP(q.w, q.r)
		} else {
			q.writeError(errNotImplemented("admin API"))
		}
		return true
	}
	return false
}

// parseTarget extracts bucket and key from the Host (virtual-host style,
// when a domain is configured) or from the path (path style).
func (s *Server) parseTarget(r *http.Request) (bucket, key string, vhost bool) {
	path := r.URL.Path
	if s.cfg.Domain != "" {
		host := strings.ToLower(r.Host)
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if b, ok := strings.CutSuffix(host, "."+s.cfg.Domain); ok && b != "" {
			return b, strings.TrimPrefix(path, "/"), true
		}
	}
	p := strings.TrimPrefix(path, "/")
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key, false
}

// resource is the S3 resource path named in error bodies.
func (q *request) resource() string {
	if q.bucket == "" {
		return "/"
	}
	if q.key == "" {
		return "/" + q.bucket
	}
	return "/" + q.bucket + "/" + q.key
}

// writeError answers with an S3 error; HEAD and 304 answers carry no body.
func (q *request) writeError(e *Error) {
	if q.w.status != 0 {
		// Headers are gone; all we can do is log.
		q.s.log.Warn("error after response started", "request_id", q.id, "api", q.api, "err", e)
		return
	}
	if e.Status >= 500 {
		q.s.log.Error("request failed", "request_id", q.id, "api", q.api, "bucket", q.bucket,
			"key", q.key, "code", e.Code, "err", e)
	} else {
		q.s.log.Debug("request error", "request_id", q.id, "api", q.api, "code", e.Code, "err", e)
	}
	q.errCode = e.Code
	h := q.w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	if e.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	if q.r.Method == http.MethodHead || e.Status == http.StatusNotModified {
		q.w.WriteHeader(e.Status)
		return
	}
	body := xmlError{Code: e.Code, Message: e.Message, Resource: q.resource(),
		RequestID: q.id, HostID: q.s.hostID, BucketName: q.bucket, Key: q.key}
	out, err := xml.Marshal(body)
	if err != nil {
		q.s.log.Error("marshal error answer", "request_id", q.id, "err", err)
		q.writeEmpty(http.StatusInternalServerError)
		return
	}
	// encoding/xml escapes quotes in text as &#34; and &#39;; S3 writes
	// them as they are (messages quote policy conditions, regions ...),
	// and tools that compare messages expect that. The error document
	// has no attributes, where the escapes would be needed.
	out = bytes.ReplaceAll(bytes.ReplaceAll(out, []byte("&#34;"), []byte(`"`)), []byte("&#39;"), []byte("'"))
	q.writeXMLBytes(e.Status, out)
}

// writeXML answers 200 with an XML document.
func (q *request) writeXML(v any) { q.writeXMLStatus(http.StatusOK, v) }

func (q *request) writeXMLStatus(status int, v any) {
	out, err := xml.Marshal(v)
	if err != nil {
		q.writeError(errInternal(fmt.Errorf("marshal response: %w", err)))
		return
	}
	q.writeXMLBytes(status, out)
}

// writeXMLBytes answers status with a marshalled XML document.
func (q *request) writeXMLBytes(status int, out []byte) {
	buf := make([]byte, 0, len(xml.Header)+len(out))
	buf = append(buf, xml.Header...)
	buf = append(buf, out...)
	h := q.w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(buf)))
	q.w.WriteHeader(status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(buf)
	}
}

// writeEmpty answers status with no body.
func (q *request) writeEmpty(status int) {
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(status)
}
