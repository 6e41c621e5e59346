package main

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardstore/shardstore/internal/access"
	"github.com/shardstore/shardstore/internal/accesslog"
	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/bench"
	"github.com/shardstore/shardstore/internal/cli"
	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/console"
	"github.com/shardstore/shardstore/internal/cpustat"
	"github.com/shardstore/shardstore/internal/ellipses"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/iam"
	"github.com/shardstore/shardstore/internal/kms"
	"github.com/shardstore/shardstore/internal/lifecycle"
	"github.com/shardstore/shardstore/internal/logring"
	"github.com/shardstore/shardstore/internal/metrics"
	"github.com/shardstore/shardstore/internal/notify"
	"github.com/shardstore/shardstore/internal/release"
	"github.com/shardstore/shardstore/internal/s3api"
)

// Defaults of the server command.
const (
	defaultAddress  = "127.0.0.1:9000"
	defaultDrives   = "./data/drive{1...16}"
	defaultRootUser = "shardstoreadmin"
	defaultRootPass = "shardstoreadmin"
)

// recentLogEntries is how many warnings and errors the console shows.
const recentLogEntries = 200

// serverOptions are the parsed flags and arguments of `shardstore server`.
type serverOptions struct {
	address      string
	usersFile    string
	domain       string
	region       string
	parity       int
	setSize      int
	inlineLimit  int64
	indexCache   sizeValue
	logRequests  bool
	logLevel     string
	hashOffload  string
	etagMode     string
	driveTimeout time.Duration
	shutdown     time.Duration
	allowRoot    bool
	drives       []string
	// console is the web console's address; consoleChosen is set when
	// the operator gave it (a taken default is not fatal).
	console       string
	consoleChosen bool
	// publicURL is --public-url: the S3 endpoint as clients reach it.
	publicURL string
	// addressChosen is set when --address was given (a cluster node
	// otherwise listens on all interfaces at its endpoint's port).
	addressChosen bool
	// certsDir is --certs-dir; certsChosen is set when the operator
	// named it (flag or environment), and then it must exist.
	certsDir    string
	certsChosen bool
	// allowDevCreds lets the development credentials serve beyond
	// loopback (--allow-default-credentials).
	allowDevCreds bool
	// metricsPublic serves /shardstore/metrics without a token.
	metricsPublic bool
	// encryptAll encrypts every new object (SSE-S3) unless a request
	// or bucket default says otherwise; allowSSECOverHTTP accepts
	// customer keys on plain HTTP.
	encryptAll        bool
	allowSSECOverHTTP bool
	// accessLogInterval batches server access log records into log
	// objects (--access-log-interval).
	accessLogInterval time.Duration
	// notifyRetryMax bounds the wait between retries of a notification
	// target that is down.
	notifyRetryMax time.Duration
	// notifyConfig is a file of notification and audit targets in the
	// format of `mc admin config export` (--notify-config).
	notifyConfig string
	// ldap is the LDAP sign-in configuration (ldap.go).
	ldap ldapFlags
	// readdRemoved lets a cluster node append pools the deployment had
	// taken out (--readd-removed-pools, docs/pools.md).
	readdRemoved bool
}

// serverUsage is the one-line synopsis a bad command line is answered with.
const serverUsage = "shardstore server [flags] [DRIVE...]"

// logLevels are the names --log-level accepts.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// parseServerArgs parses flags that may appear before or after the drive
// arguments (`server /data{1...4} --address :9000` works too). -h prints
// the help to stderr and returns flag.ErrHelp; a bad flag comes back as a
// *cli.UsageError.
func parseServerArgs(args []string, stderr io.Writer) (serverOptions, error) {
	var o serverOptions
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.StringVar(&o.address, "address", defaultAddress, "`HOST:PORT` to listen on (port 0 picks a free port)")
	fs.StringVar(&o.usersFile, "users", "", "`FILE` of extra users, one \"ACCESS SECRET [DISPLAY NAME]\" per line")
	fs.StringVar(&o.domain, "domain", "", "`DOMAIN` for virtual-host-style requests (BUCKET.DOMAIN)")
	fs.StringVar(&o.region, "region", "", "`REGION` to require: signatures and new buckets must name it (empty = any region; buckets created without one are us-east-1)")
	fs.IntVar(&o.parity, "parity", 0, "parity shards per object (0 = recorded at format time, or the default for the set size)")
	fs.IntVar(&o.setSize, "set-size", 0, "drives per erasure set (0 = recorded at format time, or the largest of 2..16 dividing the drive count)")
	fs.Int64Var(&o.inlineLimit, "inline-limit", 0, "per-drive shard size in `BYTES` stored inline in the drive index (0 = default 32 KiB, <0 = never)")
	o.indexCache = sizeValue(engine.IndexCacheSize)
	fs.Var(&o.indexCache, "index-cache", "`SIZE` of memory the drive indexes share for cached blocks and records (256MiB, 1GiB, ...; at least 8MiB)")
	fs.BoolVar(&o.logRequests, "log-requests", false, "log one line per request")
	fs.StringVar(&o.logLevel, "log-level", "warn", "log `LEVEL`: debug, info, warn or error")
	fs.StringVar(&o.hashOffload, "hash-offload", "auto", "where PUT hashing (MD5/ETag) runs: auto, inline, pipelined or multibuffer")
	fs.StringVar(&o.etagMode, "etag", "md5", "ETag of single PUTs: md5 (what S3 clients expect) or fast (a content hash, MD5 only when a client sends Content-MD5)")
	cli.DurationVar(fs, &o.driveTimeout, "drive-timeout", engineDefaultDriveTimeout, "per-operation `deadline` after which a hung drive is taken offline (15 or 15s)")
	cli.DurationVar(fs, &o.notifyRetryMax, "notify-retry-max", notify.DefaultRetryMax, "longest wait between retries of a bucket notification or audit target that is down (retries back off exponentially, with jitter, up to this)")
	fs.StringVar(&o.notifyConfig, "notify-config", os.Getenv("SHARDSTORE_NOTIFY_CONFIG"), "`FILE` of bucket notification and audit targets, in the format of `mc admin config export` (notify_<kind>:<id> key=value ... lines); MINIO_NOTIFY_* variables override a target it names (env SHARDSTORE_NOTIFY_CONFIG)")
	cli.DurationVar(fs, &o.accessLogInterval, "access-log-interval", accesslog.DefaultInterval, "how long server access log records (buckets with ?logging) are batched before they are written into their target bucket as one log object (5m or 300s; 10000 records close a batch sooner)")
	cli.DurationVar(fs, &o.shutdown, "shutdown-timeout", defaultShutdownWait, "how long a stop (SIGTERM/SIGINT) waits for in-flight requests before cutting them (30 or 30s)")
	fs.StringVar(&o.console, "console-address", defaultConsoleAddress, "`HOST:PORT` of the web console (\"\" = no console)")
	fs.StringVar(&o.publicURL, "public-url", os.Getenv("SHARDSTORE_PUBLIC_URL"), "`URL` clients reach the S3 endpoint at (a proxy, load balancer or DNS name; also SHARDSTORE_PUBLIC_URL): the console's share links use it")
	fs.BoolVar(&o.readdRemoved, "readd-removed-pools", false, "on a cluster, take appended pools that name drives of pools the deployment had taken out (a shrink, a canceled expansion) as a new expansion; without it such a start is refused as a command line from before the removal (empty the drives first)")
	fs.BoolVar(&o.allowRoot, "allow-root-drives", false, "allow drives on the root filesystem (also SHARDSTORE_ALLOW_ROOT_DRIVES=1); meant for tests and trials")
	var envCertsChosen bool
	o.certsDir, envCertsChosen = defaultCertsDir(os.Getenv)
	certsHelp := "certificates `DIR`, laid out as MinIO's: public.crt + private.key (HTTPS when present), NAME/public.crt + NAME/private.key per extra name (SNI), CAs/ (authorities trusted as a client); also SHARDSTORE_CERTS_DIR or MINIO_CERTS_DIR"
	fs.StringVar(&o.certsDir, "certs-dir", o.certsDir, certsHelp)
	fs.StringVar(&o.certsDir, "S", o.certsDir, "short for --certs-dir (as MinIO's -S)")
	fs.BoolVar(&o.metricsPublic, "metrics-public", metricsPublicDefault(os.Getenv), "serve /shardstore/metrics to anyone who reaches the port, without a bearer token (also SHARDSTORE_PROMETHEUS_AUTH_TYPE=public or MINIO_PROMETHEUS_AUTH_TYPE=public)")
	fs.BoolVar(&o.allowDevCreds, "allow-default-credentials", false, "serve beyond loopback with the default development credentials (also SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS=1); meant for trials on a network you trust")
	fs.BoolVar(&o.encryptAll, "encrypt-all", envTrue(os.Getenv("SHARDSTORE_ENCRYPT_ALL")) || strings.EqualFold(os.Getenv("MINIO_KMS_AUTO_ENCRYPTION"), "on"),
		"encrypt every new object at rest (SSE-S3) unless the request or the bucket's default encryption says otherwise; needs a KMS (also SHARDSTORE_ENCRYPT_ALL=1, MINIO_KMS_AUTO_ENCRYPTION=on)")
	fs.BoolVar(&o.allowSSECOverHTTP, "allow-ssec-over-http", envTrue(os.Getenv("SHARDSTORE_ALLOW_SSEC_OVER_HTTP")),
		"accept SSE-C customer keys on plain HTTP requests, which S3 refuses since the key crosses the network in clear; for a TLS-terminating proxy in front (also SHARDSTORE_ALLOW_SSEC_OVER_HTTP=1)")
	o.ldap = addLDAPFlags(fs, os.Getenv)
	head := fmt.Sprintf("usage: %s\n\n"+
		"Runs the S3 server on the given drive directories.\n"+
		"DRIVE may use ellipses: /data/d{1...16}. Without drives the server uses %s.\n"+
		"Root credentials come from SHARDSTORE_ROOT_USER and SHARDSTORE_ROOT_PASSWORD\n"+
		"(MINIO_ROOT_USER / MINIO_ROOT_PASSWORD are accepted too).\n"+kmsHelp, serverUsage, defaultDrives)
	rest := args
	for {
		if err := cli.Parse(fs, rest, stderr, serverUsage, head); err != nil {
			return o, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		o.drives = append(o.drives, rest[0])
		rest = rest[1:]
	}
	o.certsChosen = envCertsChosen
	fs.Visit(func(f *flag.Flag) {
		o.consoleChosen = o.consoleChosen || f.Name == "console-address"
		o.addressChosen = o.addressChosen || f.Name == "address"
		o.certsChosen = o.certsChosen || f.Name == "certs-dir" || f.Name == "S"
	})
	return o, nil
}

// parsePublicURL checks --public-url: http or https, a host, no path (a
// presigned URL signs the path, so a proxy must pass it unchanged), and
// returns it without a trailing slash; "" when not set.
func parsePublicURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", cli.Usagef(serverUsage, "shardstore server -h", "bad --public-url %q: want http(s)://HOST[:PORT] with no path (share links sign the path, so a proxy must pass it unchanged)", s)
	}
	return u.Scheme + "://" + u.Host, nil
}

// parseLevel reads --log-level.
func parseLevel(s string) (slog.Level, error) {
	if l, ok := logLevels[strings.ToLower(s)]; ok {
		return l, nil
	}
	return 0, cli.Usagef(serverUsage, "shardstore server -h", "bad --log-level %q: want debug, info, warn or error", s)
}

func runServer(args []string) error {
	o, err := parseServerArgs(args, os.Stderr)
	if err != nil {
		return err
	}
	level, err := parseLevel(o.logLevel)
	if err != nil {
		return err
	}
	publicURL, err := parsePublicURL(o.publicURL)
	if err != nil {
		return err
	}
	if o.logRequests && level > slog.LevelInfo {
		level = slog.LevelInfo
	}
	// Logs go to stderr so that stdout carries only the endpoint line
	// that test harnesses parse.
	// The console's "recent errors" view keeps the last warnings and
	// errors whatever --log-level lets through to stderr.
	recent := logring.New(recentLogEntries)
	logger := slog.New(recent.Handler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}), slog.LevelWarn))
	procs := setServerProcs(os.Getenv)
	logger.Debug("scheduler", "gomaxprocs", procs)
	if err := testHooks(logger); err != nil {
		return err
	}

	creds, err := rootCredentials(os.Getenv)
	if err != nil {
		return err
	}
	clustered := cluster.IsCluster(o.drives)
	var paths []string
	var pools []int
	if !clustered {
		if paths, pools, err = localDrivePaths(o); err != nil {
			return err
		}
	}
	if creds.dev() {
		if err := checkDevCredentials(o, clustered); err != nil {
			return err
		}
		fmt.Fprint(os.Stderr, strings.Join([]string{
			"",
			"######################################################################",
			"WARNING: SHARDSTORE_ROOT_USER / SHARDSTORE_ROOT_PASSWORD are not set.",
			"WARNING: using the default development credentials:",
			"WARNING:   access key: " + defaultRootUser,
			"WARNING:   secret key: " + defaultRootPass,
			"WARNING: anyone who can reach this server can use them.",
			"######################################################################",
			"", ""}, "\n"))
	} else if creds.alias {
		logger.Warn("root credentials taken from MINIO_ROOT_USER / MINIO_ROOT_PASSWORD; SHARDSTORE_ROOT_USER / SHARDSTORE_ROOT_PASSWORD take precedence when set")
	}
	certStore, err := loadCerts(o.certsDir, o.certsChosen, logger, os.Stderr)
	if err != nil {
		return err
	}
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	watchCerts(watchCtx, certStore, logger)
	root := auth.Identity{AccessKey: creds.user, SecretKey: creds.pass, DisplayName: "root", Root: true}
	users := auth.NewUsers(root)
	if o.usersFile != "" {
		if err := users.LoadFile(o.usersFile); err != nil {
			return fmt.Errorf("load users: %w", err)
		}
	}

	hashPolicy, err := hashing.ParsePolicy(o.hashOffload)
	if err != nil || hashPolicy == hashing.PolicyDevice {
		return cli.Usagef(serverUsage, "shardstore server -h", "bad --hash-offload %q: want auto, inline, pipelined or multibuffer", o.hashOffload)
	}
	etagMode, err := hashing.ParseETagMode(o.etagMode)
	if err != nil {
		return cli.Usagef(serverUsage, "shardstore server -h", "bad --etag %q: want md5 or fast", o.etagMode)
	}
	// The per-core CPU sampler feeds the hashing policy (offload only when
	// the CPU is busy) and the per-core metrics.
	sampler := cpustat.NewSampler(cpustat.SamplerOptions{})
	if err := sampler.Start(); err != nil {
		logger.Warn("per-core CPU sampling unavailable; the hashing policy treats the CPU as idle", "err", err)
	}
	defer sampler.Stop()
	hasher, err := hashing.New(hashing.Config{Policy: hashPolicy, ETagMode: etagMode, Load: sampler})
	if err != nil {
		return err
	}
	defer hasher.Close()
	registry := prometheus.NewRegistry()
	phases, err := metrics.NewPutPhases(registry)
	if err != nil {
		return err
	}
	if err := registry.Register(cpustat.NewCollector(sampler)); err != nil {
		return fmt.Errorf("register CPU metrics: %w", err)
	}
	if err := metrics.RegisterHashing(registry, hasher.Stats); err != nil {
		return err
	}
	keyServer, err := loadKMS(os.Getenv, certStore.RootCAs())
	if err != nil {
		return err
	}
	if keyServer == nil && o.encryptAll {
		return errors.New("--encrypt-all needs a KMS: set SHARDSTORE_KMS_SECRET_KEY (or MINIO_KMS_SECRET_KEY) to NAME:BASE64 of 32 random bytes, or a Vault KMS (see shardstore server -h)")
	}
	if keyServer != nil {
		mon, err := newKMSMonitor(keyServer, registry, logger.With("component", "kms"))
		if err != nil {
			return fmt.Errorf("register KMS metrics: %w", err)
		}
		monCtx, stopMon := context.WithCancel(context.Background())
		defer stopMon()
		go mon.run(monCtx, 30*time.Second)
	}

	engCfg := engine.Config{Paths: paths, Pools: pools, SetSize: o.setSize, Parity: o.parity,
		InlineLimit: o.inlineLimit, IndexCache: int64(o.indexCache), Logger: logger.With("component", "engine"),
		Hashing: hasher, PhaseObserver: phases.Observe, DriveTimeout: o.driveTimeout}
	// Bucket lifecycle rules run after every scanner cycle, on the node
	// that scans.
	// Their removals are bucket events (s3:LifecycleExpiration:*), sent
	// once the notification targets are open.
	var hubRef atomic.Pointer[notify.Hub]
	engCfg.AfterScanCycle = lifecycle.AfterScanCycleNotifying(engCfg.Logger, func(r lifecycle.Removal) {
		if h := hubRef.Load(); h != nil {
			publishExpiry(h, r, o.region)
		}
	})
	// A cluster node listens before its engine opens: the other nodes
	// need its drives to open theirs.
	var node *clusterNode
	var eng *engine.Engine
	if clustered {
		if node, err = openClusterNode(o, creds, certStore, logger, os.Stderr); err != nil {
			return err
		}
		defer node.close()
		eng, err = node.openEngine(engCfg, os.Stderr)
	} else {
		eng, err = engine.New(engCfg)
	}
	if err != nil {
		return fmt.Errorf("open drives: %w", err)
	}
	engineClosed := false
	defer func() {
		if !engineClosed {
			_ = eng.Close()
		}
	}()
	if err := metrics.RegisterStorage(registry, eng); err != nil {
		return err
	}
	cacheStats := eng.IndexCacheStats
	if node != nil {
		cacheStats = node.indexCache.Stats
	}
	if err := metrics.RegisterIndexCache(registry, cacheStats); err != nil {
		return err
	}
	if err := metrics.RegisterListAhead(registry, eng.ListAheadStats); err != nil {
		return err
	}
	localRoots := paths
	if node != nil {
		localRoots = node.localPaths()
		paths = node.endpoints()
	}
	printLayout(os.Stderr, eng.Layout(), paths, hashPolicy, etagMode)
	printPools(os.Stderr, eng.Pools(context.Background()))
	if node != nil {
		node.printPlacement(os.Stderr, eng.Layout().SetSize, eng.Layout().Parity)
	}

	directory, err := openLDAP(o.ldap, certStore.RootCAs(), logger.With("component", "ldap"))
	if err != nil {
		return err
	}
	openID, err := openOIDC(os.Environ(), certStore.RootCAs(), logger.With("component", "openid"))
	if err != nil {
		return err
	}
	idOpts := iam.Options{Backend: eng, Root: root,
		Key: os.Getenv("SHARDSTORE_IAM_KEY"), PreviousKey: os.Getenv("SHARDSTORE_IAM_PREVIOUS_KEY"),
		Taken: func(ak string) bool { _, ok := users.Lookup(ak); return ok },
		// Audit records are written whatever --log-level says.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("component", "audit")}
	ldapOptions(&idOpts, directory)
	ids, err := iam.Open(context.Background(), idOpts)
	if err != nil {
		return err
	}
	for _, u := range ids.Users() {
		if _, shadowed := users.Lookup(u.Name); shadowed {
			logger.Warn("a user of the identity store has the access key of the root user or of a --users entry, which takes precedence; remove one of them",
				"user", u.Name)
		}
	}
	verifier := &auth.Verifier{Region: o.region, Users: users, Domain: o.domain, Identities: ids}
	var metricsAuth func(*http.Request) error
	if !o.metricsPublic {
		metricsAuth = metricsAuthorize(verifier)
	}
	adm := admin.NewHandler(eng, adminAuthorize(verifier), ids)
	var gate func(string) error
	if node != nil {
		adm.Consensus = node.consensusStatus
		adm.Upgrade = node.upgradeStatus
		gate = node.gate
	} else {
		adm.Upgrade = func(context.Context) release.UpgradeStatus { return singleUpgradeStatus(o.address) }
	}
	var keys kms.KMS
	if keyServer != nil {
		keys = keyServer
		adm.KMS, adm.Objects = keyServer, eng
	}
	// Server access logs: records spooled on this node's drives, then
	// delivered as log objects through the S3 server (which exists once
	// New returns; a delivery waits for it).
	var srv *s3api.Server
	srvReady := make(chan struct{})
	spool, err := openAccessLog(localRoots, eng.Layout().Parity, o.accessLogInterval,
		func(ctx context.Context, obj accesslog.Object) error {
			select {
			case <-srvReady:
			case <-ctx.Done():
				return ctx.Err()
			}
			return srv.DeliverAccessLog(ctx, obj)
		}, logger.With("component", "accesslog"))
	if err != nil {
		return err
	}
	closeSpool := sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), accessLogCloseWait)
		defer cancel()
		return spool.Close(ctx)
	})
	defer func() { _ = closeSpool() }()
	if err := metrics.RegisterAccessLog(registry, spool.Stats); err != nil {
		return err
	}
	stsH := stsHandler(verifier, ids, directory, openID, logger.With("component", "sts"))
	if err := registerSSOMetrics(registry, stsH.Limiter, directory); err != nil {
		return err
	}
	// Bucket event notifications and audit records: one durable queue
	// per target on this node's drives.
	hub, err := openNotify(os.Environ(), o.notifyConfig, localRoots, eng.Layout().Parity, eng.SharedSync(), notifyKinds(certStore.RootCAs),
		o.notifyRetryMax, logger.With("component", "notify"))
	if err != nil {
		return err
	}
	defer func() { _ = hub.Close() }()
	hubRef.Store(hub)
	defer hubRef.Store(nil)
	// Targets added at run time (admin notify add) live in a config
	// document, re-read on every node when it changes.
	targets, err := notify.NewTargetStore(eng, hub, notifyKinds(certStore.RootCAs),
		notifyKeyMaterial(os.Getenv("SHARDSTORE_IAM_KEY"), root.AccessKey, root.SecretKey),
		engine.ErrNoConfig, engine.ErrConfigConflict, logger.With("component", "notify"))
	if err != nil {
		return err
	}
	if err := targets.Reload(context.Background()); err != nil {
		logger.Warn("notification targets added at run time not all restored", "err", err)
	}
	for _, o := range hub.Orphans() {
		logger.Warn("a notification queue on the drives belongs to a target that is not configured; its records are kept, not sent, until the target is configured again",
			"queue", o.Name, "records", o.Records)
	}
	adm.Notify = notifyAdmin{hub: hub, store: targets}
	adm.NotifyKinds = notifyKinds(certStore.RootCAs)
	if err := metrics.RegisterNotify(registry, hub.Targets); err != nil {
		return err
	}
	srv, err = s3api.New(s3api.Config{
		Store:             eng,
		Auth:              s3api.SigV4{Verifier: verifier},
		Registry:          registry,
		Admin:             adm,
		STS:               stsH,
		Region:            o.region,
		Domain:            o.domain,
		Logger:            logger.With("component", "s3api"),
		LogRequests:       o.logRequests,
		MetricsAuth:       metricsAuth,
		ObserveLatency:    eng.ObserveClientLatency,
		KMS:               keys,
		EncryptAll:        o.encryptAll,
		Gate:              gate,
		AllowSSECOverHTTP: o.allowSSECOverHTTP,
		AccessLog:         spool,
		Notify:            hub,
		Audit:             hub,
	})
	if err != nil {
		return err
	}
	close(srvReady)
	// Signals are watched before the endpoint is printed, so a stop sent
	// right after the endpoint line is never missed.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	var endpoint string
	var served chan error
	var stopper stoppable = srv
	stopReloads := func() {}
	if node != nil {
		// Every change of the cluster state this node applies updates
		// its bucket cache, and re-reads identities when theirs changed
		// (off the apply path: the re-read is a fresh read of the
		// group). A change made before this hook was set is caught by
		// the re-reads right after it.
		// One goroutine re-reads identities; changes that arrive while
		// it does are folded into its next re-read, which reads the
		// latest anyway.
		reload := make(chan struct{}, 1)
		done := make(chan struct{})
		var reloader sync.WaitGroup
		reloader.Add(1)
		go func() {
			defer reloader.Done()
			for {
				select {
				case <-done:
					return
				case <-reload:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := ids.Reload(ctx); err != nil {
					logger.Warn("re-reading identities after a change failed", "err", err)
				}
				if err := targets.Reload(ctx); err != nil {
					logger.Warn("re-reading notification targets after a change failed", "err", err)
				}
				cancel()
			}
		}()
		stopReloads = sync.OnceFunc(func() { close(done); reloader.Wait() })
		defer stopReloads()
		node.onStateChange(func(space, key string) {
			eng.StateChanged(space, key)
			if space == "config" {
				select {
				case reload <- struct{}{}:
				default: // a re-read is already due
				}
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := errors.Join(eng.ReloadBuckets(ctx), ids.Reload(ctx)); err != nil {
			// The majority went away since the engine loaded; what it
			// loaded stands, and the hook applies what comes later.
			logger.Warn("re-reading the cluster state at start failed", "err", err)
		}
		cancel()
		// A change notice from another node makes this one catch up
		// with the group before the other answers its client.
		node.ready(srv, func(kind, name string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var err error
			switch kind {
			case "bucket":
				err = eng.ReloadBucket(ctx, name)
			case "config":
				if name == engine.DecommissionDocument {
					// Answered once this node places no new key in a
					// pool being decommissioned (the decommission waits
					// for every node's answer before it completes).
					err = eng.ApplyDecommission(ctx)
					break
				}
				err = errors.Join(ids.Reload(ctx), targets.Reload(ctx))
			}
			if err != nil {
				logger.Warn("re-reading state another node changed failed", "kind", kind, "name", name, "err", err)
			}
			return err
		})
		endpoint = node.top.Scheme + "://" + endpointHost(node.ln.Addr())
		served = node.served
		stopper = nodeStopper{node, srv}
	} else {
		ln, err := net.Listen("tcp", o.address)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", o.address, err)
		}
		endpoint = scheme(certStore) + "://" + endpointHost(ln.Addr())
		ln = serveListener(ln, certStore)
		served = make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
	}
	fmt.Fprintf(os.Stdout, "S3 endpoint: %s\n", endpoint)
	cons, err := startConsole(os.Stdout, os.Stderr, o.console, o.consoleChosen, certStore, withOpenID(console.Config{
		S3: srv, Region: o.region, ShareEndpoint: cmp.Or(publicURL, endpoint), Usage: eng.BucketUsage, Metrics: registry,
		CPU: func() []float64 { return sampler.Snapshot().BusyFractions() }, Errors: recent, LDAP: directory != nil,
		StateSealer: ids, Logger: logger.With("component", "console"),
	}, openID), logger)
	if err != nil {
		_ = stopper.Shutdown(context.Background())
		if node == nil {
			_ = srv.Close()
		}
		<-served
		return err
	}
	var sig os.Signal
	select {
	case err := <-served:
		return err
	case sig = <-sigs:
	}
	// The console stops taking connections with the S3 endpoint; its
	// requests in flight are S3 requests in flight too, so they get the
	// same wait.
	consoleCtx, consoleCut := context.WithTimeout(context.Background(), o.shutdown)
	consoleStopped := make(chan error, 1)
	go func() { consoleStopped <- cons.stop(consoleCtx) }()
	serr := shutdown(os.Stderr, stopper, sig, sigs, o.shutdown, shutdownReportEvery)
	consoleCut()
	if err := <-consoleStopped; err != nil {
		serr = errors.Join(serr, fmt.Errorf("console: %w", err))
	}
	if err := <-served; err != nil {
		serr = errors.Join(serr, err)
	}
	stopReloads() // they read through the engine
	// Requests are over: the access log's last records are delivered
	// (what does not make it in time stays spooled for the next start).
	if err := closeSpool(); err != nil {
		logger.Warn("server access log records left spooled for the next start", "err", err)
	}
	engineClosed = true
	if err := closeWithin(eng.Close, engineCloseWait); err != nil {
		serr = errors.Join(serr, fmt.Errorf("close drives: %w", err))
	}
	if serr == nil {
		fmt.Fprintln(os.Stderr, "shutdown: done")
	}
	return serr
}

// checkDevCredentials refuses to serve with the development credentials
// on an address other machines can reach (a cluster node without
// --address listens on every interface): a store anyone on the network
// can administer is how self-hosted object stores leak. Loopback, or
// --allow-default-credentials, is allowed.
func checkDevCredentials(o serverOptions, clustered bool) error {
	if o.allowDevCreds || envTrue(os.Getenv("SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS")) {
		return nil
	}
	var exposed []string
	switch {
	case clustered && !o.addressChosen:
		exposed = append(exposed, "every interface (a cluster node without --address)")
	case !isLoopbackListen(o.address):
		exposed = append(exposed, o.address)
	}
	if o.console != "" && !isLoopbackListen(o.console) {
		exposed = append(exposed, o.console+" (the console)")
	}
	if len(exposed) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to start: the server would listen on %s, which other machines can reach, with the default development credentials (%s / %s). "+
		"Set SHARDSTORE_ROOT_USER and SHARDSTORE_ROOT_PASSWORD (or MINIO_ROOT_USER / MINIO_ROOT_PASSWORD), "+
		"or listen on 127.0.0.1 (--address, --console-address), "+
		"or pass --allow-default-credentials (SHARDSTORE_ALLOW_DEFAULT_CREDENTIALS=1) for a trial on a network you trust",
		strings.Join(exposed, " and "), defaultRootUser, defaultRootPass)
}

// metricsPublicDefault reads the environment's choice of metrics access,
// as MinIO's MINIO_PROMETHEUS_AUTH_TYPE ("public" or "jwt").
func metricsPublicDefault(getenv func(string) string) bool {
	for _, k := range []string{"SHARDSTORE_PROMETHEUS_AUTH_TYPE", "MINIO_PROMETHEUS_AUTH_TYPE"} {
		if v := strings.ToLower(strings.TrimSpace(getenv(k))); v != "" {
			return v == "public"
		}
	}
	return false
}

// envTrue reads a boolean environment variable (1, true, yes, on).
func envTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// adminAuthorize authorizes admin requests: signed by the root user, or
// by an identity whose policies allow the admin action. Only SigV4 in
// the Authorization header with the body's SHA-256 is accepted: an admin
// call's body is what it does, so a signature that does not cover it
// (SigV2, presigned URLs, UNSIGNED-PAYLOAD) could be replayed with
// another. The request body is replaced by the verified one, so the hash
// is checked as the handler reads it.
func adminAuthorize(v *auth.Verifier) admin.Authorize {
	return func(r *http.Request, action string, ownKeys func(admin.Actor) bool) (admin.Actor, error) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") || !isSHA256Hex(r.Header.Get("X-Amz-Content-Sha256")) {
			return admin.Actor{}, errors.New("admin requests must be signed with SigV4 in the Authorization header, with the body's SHA-256 in x-amz-content-sha256")
		}
		res, err := s3api.SigV4{Verifier: v}.Authenticate(r)
		if err != nil {
			return admin.Actor{}, err
		}
		if res.Body != nil {
			r.Body = res.Body
		}
		return adminDecide(res.Caller, action, r, ownKeys)
	}
}

// metricsAuthorize decides who reads /shardstore/metrics: a bearer token
// (shardstore admin prometheus generate, or mc's) of an identity allowed
// admin:Prometheus, decided as every admin action is.
func metricsAuthorize(v *auth.Verifier) func(*http.Request) error {
	return func(r *http.Request) error {
		c, err := s3api.SigV4{Verifier: v}.AuthenticateBearer(r)
		if err != nil {
			return err
		}
		_, err = adminDecide(c, metricsAction, r, nil)
		return err
	}
}

// metricsAction is the admin action that reads the metrics (MinIO's name).
const metricsAction = "admin:Prometheus"

// adminDecide answers the admin access decision for an authenticated
// caller, which access.Decide makes (admin actions on
// access.AdminResource): root may do anything; an identity of the
// identity store what its policies allow, and its own access keys with
// its own key (ownKeys says whether the call manages those; it is asked
// only when the policies alone do not allow, as it may read the body);
// anyone else nothing.
func adminDecide(c s3api.Caller, action string, r *http.Request, ownKeys func(admin.Actor) bool) (admin.Actor, error) {
	who := c.AccessCaller()
	decide := func(action string, own bool) access.Decision {
		q := access.Request{Caller: who, Op: access.AdminAction, Action: action, OwnAccessKeys: own}
		if q.NeedsConditions() {
			q.Conditions = s3api.ConditionKeys(r, c)
		}
		return access.Decide(q)
	}
	d := decide(action, false)
	if d.Reason == access.ReasonNotIdentity {
		return admin.Actor{Name: c.AccessKey, Key: c.AccessKey},
			fmt.Errorf("admin requests need the root user or a user of the identity store with %s", action)
	}
	a := adminActor(c)
	a.Can = func(action string) bool { return decide(action, false).Allowed }
	if !d.Allowed && !d.ExplicitDeny && ownKeys != nil && a.User != "" && a.Key == a.User && ownKeys(a) {
		d = decide(action, true)
	}
	switch {
	case d.Allowed:
		return a, nil
	case d.ExplicitDeny:
		return a, fmt.Errorf("%s is explicitly denied %s", c.User, action)
	}
	return a, fmt.Errorf("%w: %s is not allowed %s", admin.ErrDenied, c.User, action)
}

// adminActor is who an admin call is recorded as, and which user and
// own access key it acts with.
func adminActor(c s3api.Caller) admin.Actor {
	if c.Root {
		return admin.Actor{Name: "root", Key: c.AccessKey}
	}
	a := admin.Actor{Name: c.User, User: c.User, Key: c.AccessKey}
	if c.AccessKey != c.User {
		a.Name = c.User + " (key " + c.AccessKey + ")"
	}
	if c.Session {
		a.Key = "" // a session never counts as the user's own key
	}
	return a
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// endpointHost is the HOST:PORT to print for a listener; a wildcard
// address is shown as the loopback address, which is reachable.
func endpointHost(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// localDrivePaths expands the drive arguments of a single node (the
// embedded default when none are given) and checks where they are.
func localDrivePaths(o serverOptions) ([]string, []int, error) {
	drives := o.drives
	embedded := len(drives) == 0
	if embedded {
		drives = []string{defaultDrives}
	}
	// Several arguments with ellipses are server pools, one each.
	pools, err := ellipses.Pools(drives)
	if err != nil {
		return nil, nil, fmt.Errorf("drives: %w", err)
	}
	var paths []string
	var sizes []int
	for _, p := range pools {
		paths = append(paths, p...)
		sizes = append(sizes, len(p))
	}
	if embedded {
		abs, _ := filepath.Abs(filepath.Dir(paths[0]))
		fmt.Fprintf(os.Stderr, "No drives given: using the embedded default %s (%d drives under %s)\n",
			defaultDrives, len(paths), abs)
	}
	allowRoot := o.allowRoot || envTrue(os.Getenv("SHARDSTORE_ALLOW_ROOT_DRIVES"))
	if err := checkPlacement(os.Stderr, paths, "/", allowRoot, embedded); err != nil {
		return nil, nil, err
	}
	return paths, sizes, nil
}

// sizeValue is a flag holding a byte count written with a unit (256MiB,
// 1GiB; bench.ParseSize), of at least minIndexCache.
type sizeValue int64

// minIndexCache is the smallest --index-cache: below it the row cache's
// shards are too small to hold a record.
const minIndexCache = 8 << 20

func (v *sizeValue) String() string {
	switch n := int64(*v); {
	case n != 0 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n != 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	default:
		return fmt.Sprint(n)
	}
}

func (v *sizeValue) Set(s string) error {
	n, err := bench.ParseSize(s)
	if err != nil {
		return err
	}
	if n < minIndexCache {
		return fmt.Errorf("%s is below the minimum of 8MiB", s)
	}
	*v = sizeValue(n)
	return nil
}
