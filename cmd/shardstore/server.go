package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardstore/shardstore/internal/admin"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/cpustat"
	"github.com/shardstore/shardstore/internal/ellipses"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/metrics"
	"github.com/shardstore/shardstore/internal/s3api"
)

// Defaults of the server command.
const (
	defaultAddress   = "127.0.0.1:9000"
	defaultDrives    = "./data/drive{1...16}"
	defaultRootUser  = "shardstoreadmin"
	defaultRootPass  = "shardstoreadmin"
	shutdownDeadline = 30 * time.Second
)

// serverOptions are the parsed flags and arguments of `shardstore server`.
type serverOptions struct {
	address      string
	usersFile    string
	domain       string
	region       string
	parity       int
	setSize      int
	inlineLimit  int64
	logRequests  bool
	logLevel     string
	hashOffload  string
	etagMode     string
	driveTimeout time.Duration
	drives       []string
}

// parseServerArgs parses flags that may appear before or after the drive
// arguments (`server /data{1...4} --address :9000` works too).
func parseServerArgs(args []string, stderr io.Writer) (serverOptions, error) {
	var o serverOptions
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.address, "address", defaultAddress, "`HOST:PORT` to listen on (port 0 picks a free port)")
	fs.StringVar(&o.usersFile, "users", "", "`FILE` of extra users, one \"ACCESS SECRET [DISPLAY NAME]\" per line")
	fs.StringVar(&o.domain, "domain", "", "`DOMAIN` for virtual-host-style requests (BUCKET.DOMAIN)")
	fs.StringVar(&o.region, "region", "us-east-1", "`REGION` the server answers for")
	fs.IntVar(&o.parity, "parity", 0, "parity shards per object (0 = default for the set size)")
	fs.IntVar(&o.setSize, "set-size", 0, "drives per erasure set (0 = largest of 2..16 dividing the drive count)")
	fs.Int64Var(&o.inlineLimit, "inline-limit", 0, "per-drive shard size in `BYTES` stored inline in the drive index (0 = default 32 KiB, <0 = never)")
	fs.BoolVar(&o.logRequests, "log-requests", false, "log one line per request")
	fs.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	fs.StringVar(&o.hashOffload, "hash-offload", "auto", "where PUT hashing (MD5/ETag) runs: auto, inline, pipelined or multibuffer")
	fs.StringVar(&o.etagMode, "etag", "md5", "ETag of single PUTs: md5 (what S3 clients expect) or fast (a content hash, MD5 only when a client sends Content-MD5)")
	fs.DurationVar(&o.driveTimeout, "drive-timeout", 0, "per-operation deadline after which a hung drive is taken offline (0 = default 15s)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: shardstore server [flags] [DRIVE...]\n\n"+
			"DRIVE may use ellipses: /data/d{1...16}. Without drives the server uses %s.\n"+
			"Root credentials come from SHARDSTORE_ROOT_USER and SHARDSTORE_ROOT_PASSWORD.\n\nflags:\n", defaultDrives)
		fs.PrintDefaults()
	}
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return o, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		o.drives = append(o.drives, rest[0])
		rest = rest[1:]
	}
	return o, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("bad --log-level %q: %w", s, err)
	}
	return l, nil
}

// rootIdentity reads the root credentials from the environment; dev is
// true when the built-in defaults are used.
func rootIdentity() (id auth.Identity, dev bool, err error) {
	user, pass := os.Getenv("SHARDSTORE_ROOT_USER"), os.Getenv("SHARDSTORE_ROOT_PASSWORD")
	switch {
	case user == "" && pass == "":
		return auth.Identity{AccessKey: defaultRootUser, SecretKey: defaultRootPass, DisplayName: "root", Root: true}, true, nil
	case user == "" || pass == "":
		return id, false, errors.New("set both SHARDSTORE_ROOT_USER and SHARDSTORE_ROOT_PASSWORD, or neither")
	}
	return auth.Identity{AccessKey: user, SecretKey: pass, DisplayName: "root", Root: true}, false, nil
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
	// Logs go to stderr so that stdout carries only the endpoint line
	// that test harnesses parse.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if o.logRequests && level > slog.LevelInfo {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}

	drives := o.drives
	embedded := len(drives) == 0
	if embedded {
		drives = []string{defaultDrives}
	}
	paths, err := ellipses.ExpandAll(drives)
	if err != nil {
		return fmt.Errorf("drives: %w", err)
	}
	if embedded {
		for _, p := range paths {
			if err := os.MkdirAll(p, 0o750); err != nil {
				return fmt.Errorf("create embedded drive: %w", err)
			}
		}
		abs, _ := filepath.Abs(filepath.Dir(paths[0]))
		fmt.Fprintf(os.Stderr, "No drives given: using the embedded default %s (%d drives under %s)\n",
			defaultDrives, len(paths), abs)
	}

	root, dev, err := rootIdentity()
	if err != nil {
		return err
	}
	if dev {
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
	}
	users := auth.NewUsers(root)
	if o.usersFile != "" {
		if err := users.LoadFile(o.usersFile); err != nil {
			return fmt.Errorf("load users: %w", err)
		}
	}

	policy, err := hashing.ParsePolicy(o.hashOffload)
	if err != nil || policy == hashing.PolicyDevice {
		return fmt.Errorf("bad --hash-offload %q: want auto, inline, pipelined or multibuffer", o.hashOffload)
	}
	etagMode, err := hashing.ParseETagMode(o.etagMode)
	if err != nil {
		return fmt.Errorf("bad --etag: %w", err)
	}
	// The per-core CPU sampler feeds the hashing policy (offload only when
	// the CPU is busy) and the per-core metrics.
	sampler := cpustat.NewSampler(cpustat.SamplerOptions{})
	if err := sampler.Start(); err != nil {
		logger.Warn("per-core CPU sampling unavailable; the hashing policy treats the CPU as idle", "err", err)
	}
	defer sampler.Stop()
	hasher, err := hashing.New(hashing.Config{Policy: policy, ETagMode: etagMode, Load: sampler})
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

	eng, err := engine.New(engine.Config{Paths: paths, SetSize: o.setSize, Parity: o.parity,
		InlineLimit: o.inlineLimit, Logger: logger.With("component", "engine"),
		Hashing: hasher, PhaseObserver: phases.Observe, DriveTimeout: o.driveTimeout})
	if err != nil {
		return fmt.Errorf("open drives: %w", err)
	}
	engineClosed := false
	defer func() {
		if !engineClosed {
			_ = eng.Close()
		}
	}()

	verifier := &auth.Verifier{Region: o.region, Users: users, Domain: o.domain}
	srv, err := s3api.New(s3api.Config{
		Store:       eng,
		Auth:        s3api.SigV4{Verifier: verifier},
		Registry:    registry,
		Admin:       admin.NewHandler(eng, rootOnly(verifier)),
		Region:      o.region,
		Domain:      o.domain,
		Logger:      logger.With("component", "s3api"),
		LogRequests: o.logRequests,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.address)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.address, err)
	}
	fmt.Fprintf(os.Stdout, "S3 endpoint: http://%s\n", endpointHost(ln.Addr()))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Warn("shutting down: finishing in-flight requests", "deadline", shutdownDeadline)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	serr := srv.Shutdown(sctx)
	if err := <-served; err != nil {
		serr = errors.Join(serr, err)
	}
	engineClosed = true
	if err := eng.Close(); err != nil {
		serr = errors.Join(serr, fmt.Errorf("close engine: %w", err))
	}
	return serr
}

// rootOnly authorizes admin requests: SigV4-signed by the root user.
func rootOnly(v *auth.Verifier) func(r *http.Request) error {
	return func(r *http.Request) error {
		res, err := s3api.SigV4{Verifier: v}.Authenticate(r)
		if err != nil {
			return err
		}
		if !res.Caller.Root {
			return errors.New("admin requests need the root user's credentials")
		}
		return nil
	}
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
