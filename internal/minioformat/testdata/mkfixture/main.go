// Command mkfixture makes the MinIO drive fixture of internal/minioformat:
// it starts a given MinIO binary (it never builds one) on 16 fresh drive
// directories on loopback, fills it through S3 with the cases in-place
// adoption must handle, records what MinIO answers about every bucket,
// object and version into a JSON file, stops MinIO and packs the drives
// into a zstd-compressed tarball. Run it through ../mkfixture.sh; see
// ../README.md.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/klauspost/compress/zstd"

	"github.com/shardstore/shardstore/internal/minioformat"
	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
	"github.com/shardstore/shardstore/internal/placement"
)

const (
	rootUser = "fixtureadmin"
	rootPass = "fixture-secret-key"
	region   = "us-east-1"
	mib      = 1 << 20
	kib      = 1 << 10
)

func main() {
	minioBin := flag.String("minio", "", "path of a MinIO server binary (required; never built here)")
	out := flag.String("out", "internal/minioformat/testdata", "directory receiving the tarball and the JSON")
	name := flag.String("name", "minio-16drives", "base name of the tarball (.tar.zst) and JSON (.json)")
	source := flag.String("source", "", "where the binary came from (recorded in the JSON), e.g. a commit")
	keep := flag.Bool("keep", false, "keep the work directory (its path is printed)")
	flag.IntVar(&drives, "drives", 16, "drive directories MinIO runs on (it forms its erasure sets by its own rules: 32 drives are 2 sets of 16)")
	flag.IntVar(&pools, "pools", 1, "server pools the drives are split into (MinIO started with one drive{a...b} argument per pool)")
	flag.StringVar(&contents, "fill", "full", "what to write: full (every case, the 16-drive fixture), sets (a few objects of every kind, spread over the erasure sets) or tiny (one bucket of 4 small objects: the pools fixture, whose adoption is refused)")
	flag.IntVar(&nodes, "nodes", 1, "MinIO server processes forming one multi-node deployment (-fill cluster): each gets every drive argument, drive i+1 being node i%nodes's")
	flag.StringVar(&clusterHost, "host", "127.0.0.1", "with -nodes: the address the nodes listen on (MinIO in a container refuses loopback endpoints: give an address of this machine that is not 127.0.0.1)")
	kind := flag.String("kind", "main", `which fixture: "main" (minio-16drives) or "compressed" (minio-compressed: MINIO_COMPRESSION_ENABLE=on, compressed objects and unfinished uploads)`)
	poolSizes := flag.String("pool-drives", "", "with -fill pools: the pools' drive counts, e.g. 4,8 (default: -pools even pools)")
	flag.IntVar(&decommissionPool, "decommission", 0, "decommission pool N (1-based) through MinIO's admin API after filling, before recording")
	unpack := flag.String("unpack", "", "only unpack the fixture's drives (-out/-name) into this directory, for tests in other languages (tests/python); needs no MinIO")
	flag.Parse()
	if *kind == "compressed" && *name == "minio-16drives" {
		*name = "minio-compressed"
	}
	if *unpack != "" {
		if err := miniofixture.Unpack(filepath.Join(*out, *name), *unpack); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *minioBin == "" {
		log.Fatal("-minio is required")
	}
	if contents != "full" && contents != "sets" && contents != "tiny" && contents != "cluster" && contents != "pools" && contents != "sse" && contents != "clusterpools" {
		log.Fatalf("-fill %q: want full, sets, tiny, cluster, pools, clusterpools or sse", contents)
	}
	if *poolSizes != "" {
		if err := parsePoolDrives(*poolSizes); err != nil {
			log.Fatal(err)
		}
	}
	if err := run(*minioBin, *out, *name, *source, *kind, *keep); err != nil {
		log.Fatal(err)
	}
}

var (
	// drives is how many drive directories MinIO runs on (-drives).
	drives = 16
	// contents is what the filler writes (-fill).
	contents = "full"
	// pools is how many server pools the drives form (-pools).
	pools = 1
	// nodes is how many MinIO processes form the deployment (-nodes),
	// clusterHost the address they listen on (-host).
	nodes       = 1
	clusterHost = "127.0.0.1"
	// scheme, httpClient and certsDir: MinIO over TLS for -fill sse
	// (sse_tls.go), plain HTTP otherwise.
	scheme     = "http"
	httpClient = http.DefaultClient
	certsDir   string
)

func run(minioBin, out, name, source, kind string, keep bool) error {
	work, err := os.MkdirTemp("", "minio-fixture-")
	if err != nil {
		return err
	}
	if keep {
		log.Printf("work directory: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	ver, err := exec.Command(minioBin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v: %s", minioBin, err, ver)
	}
	var driveDirs []string
	for i := 1; i <= drives; i++ {
		d := filepath.Join(work, fmt.Sprintf("drive%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		driveDirs = append(driveDirs, d)
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	var env []string
	switch {
	case kind == "compressed":
		env = compressionEnv()
	case contents == "sets":
		env = setsCompressionEnv()
	case contents == "sse":
		env = sseEnv()
		if certsDir, httpClient, err = minioTLS(work); err != nil {
			return err
		}
		scheme = "https"
	}
	args := driveDirs
	poolDirs := [][]string{driveDirs}
	if pools > 1 || poolDrives != nil {
		// One ellipses argument per pool: work/drive{1...4} work/drive{5...8}.
		if args, poolDirs, err = poolArgs(work, driveDirs); err != nil {
			return err
		}
	}
	var srv interface{ stop() error }
	if contents == "clusterpools" {
		var cl *cluster
		cl, addr, args, err = startClusterPools(minioBin, work, env)
		if err != nil {
			return err
		}
		srv = cl
	} else if nodes > 1 {
		var cl *cluster
		cl, addr, err = startCluster(minioBin, work, driveDirs, env)
		if err != nil {
			return err
		}
		srv = cl
	} else {
		s, err := startMinIO(minioBin, addr, args, filepath.Join(work, "minio.log"), env)
		if err != nil {
			return err
		}
		srv = s
	}
	defer srv.stop()

	ctx := context.Background()
	c := s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(scheme + "://" + addr),
		Credentials:  credentials.NewStaticCredentialsProvider(rootUser, rootPass, ""),
		UsePathStyle: true,
		HTTPClient:   httpClient,
	})
	f := &filler{c: c, ctx: ctx, kind: kind, poolDirs: poolDirs}
	if f.sets, f.placer, err = minioPlacement(driveDirs[0]); err != nil {
		return err
	}
	if err := f.fill(); err != nil {
		return fmt.Errorf("fill: %w (MinIO log: %s)", err, filepath.Join(work, "minio.log"))
	}
	if decommissionPool > 0 {
		if decommissionPool > len(args) {
			return fmt.Errorf("-decommission %d: there are %d pools", decommissionPool, len(args))
		}
		if err := decommission(ctx, addr, args[decommissionPool-1]); err != nil {
			return fmt.Errorf("decommission: %w (MinIO log: %s)", err, filepath.Join(work, "minio.log"))
		}
	}
	exp, err := record(ctx, c)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	exp.MinIO.Version = strings.TrimSpace(string(ver))
	exp.MinIO.Source = source
	exp.Drives = drives
	if err := srv.stop(); err != nil {
		return fmt.Errorf("stopping MinIO: %w", err)
	}

	js, err := json.MarshalIndent(exp, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, name+".json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	n, err := pack(work, filepath.Join(out, name+".tar.zst"))
	if err != nil {
		return err
	}
	log.Printf("wrote %s.json and %s.tar.zst (%d bytes)", name, name, n)
	return nil
}

// minioPlacement reads MinIO's set count and placement from a drive's
// format.json.
func minioPlacement(drive string) (int, *placement.Placer, error) {
	raw, err := os.ReadFile(filepath.Join(drive, ".minio.sys", "format.json"))
	if err != nil {
		return 0, nil, err
	}
	mf, err := minioformat.ParseFormat(raw)
	if err != nil {
		return 0, nil, err
	}
	alg, err := placement.FromMinIO(mf.DistributionAlgo)
	if err != nil {
		return 0, nil, err
	}
	p, err := placement.New(alg, mf.DeploymentID)
	return len(mf.Sets), p, err
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

type server struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	done   bool
}

func startMinIO(bin, addr string, dirs []string, logPath string, env []string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"server", "--address", addr, "--quiet"}
	if certsDir != "" {
		args = append([]string{"--certs-dir", certsDir}, args...)
	}
	args = append(args, dirs...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"MINIO_CI_CD=on", // drives may sit on the root filesystem
		"MINIO_ROOT_USER="+rootUser,
		"MINIO_ROOT_PASSWORD="+rootPass,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, exited: make(chan struct{})}
	go func() { s.err = cmd.Wait(); logf.Close(); close(s.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("MinIO exited at start: %v (log: %s)", s.err, logPath)
		default:
		}
		resp, err := httpClient.Get(scheme + "://" + addr + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("MinIO not ready after 60s (log: %s)", logPath)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *server) stop() error {
	if s.done {
		return nil
	}
	s.done = true
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil // MinIO exits with a status of its own on SIGTERM
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("MinIO did not stop within 30s of SIGTERM")
	}
}

// body is the content of an object: small ones are random; big ones repeat
// a 1 MiB random pattern (64 KiB with -fill sets) (so the tarball compresses) with a 32-byte stamp,
// unique to the object and offset, every 64 KiB (so every block, and every
// data shard of it, differs from any other and a misplaced block or shard
// changes the SHA-256).
func body(name string, size int) []byte {
	b := make([]byte, size)
	if size <= 256*kib {
		seed := sha256.Sum256([]byte(name))
		r := rand.NewChaCha8(seed)
		_, _ = r.Read(b)
		return b
	}
	pat := pattern()
	for off := 0; off < size; off += len(pat) {
		copy(b[off:], pat)
	}
	var ob [8]byte
	for off := 0; off < size; off += 64 * kib {
		binary.BigEndian.PutUint64(ob[:], uint64(off))
		st := sha256.Sum256(append([]byte(name), ob[:]...))
		copy(b[off:], st[:])
	}
	return b
}

var patternBuf []byte

func pattern() []byte {
	if patternBuf == nil {
		size := mib
		if contents == "sets" || contents == "cluster" || contents == "pools" || contents == "clusterpools" {
			size = 64 * kib // a smaller fixture: parity shards repeat too
		}
		patternBuf = make([]byte, size)
		r := rand.NewChaCha8(sha256.Sum256([]byte("shardstore minio fixture pattern")))
		_, _ = r.Read(patternBuf)
	}
	return patternBuf
}

type filler struct {
	c   *s3.Client
	ctx context.Context
	// sets and placer are MinIO's erasure sets and their placement
	// (-fill sets chooses names per set).
	sets   int
	placer *placement.Placer
	kind   string // the -kind flag: which fixture
	// poolDirs are the drives of each server pool.
	poolDirs [][]string
}

type putOpt func(*s3.PutObjectInput)

func (f *filler) put(bucket, key string, data []byte, opts ...putOpt) (string, error) {
	in := &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	for _, o := range opts {
		o(in)
	}
	out, err := f.c.PutObject(f.ctx, in)
	if err != nil {
		return "", fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	return aws.ToString(out.VersionId), nil
}

func (f *filler) mkBucket(name string, lock bool) error {
	_, err := f.c.CreateBucket(f.ctx, &s3.CreateBucketInput{Bucket: &name, ObjectLockEnabledForBucket: aws.Bool(lock)})
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return nil
}

func (f *filler) versioning(bucket string, st types.BucketVersioningStatus) error {
	_, err := f.c.PutBucketVersioning(f.ctx, &s3.PutBucketVersioningInput{Bucket: &bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: st}})
	return err
}

func (f *filler) del(bucket, key string) error {
	_, err := f.c.DeleteObject(f.ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return fmt.Errorf("delete %s/%s: %w", bucket, key, err)
	}
	return nil
}

func (f *filler) fill() error {
	steps := []func() error{f.fillPlain, f.fillVersioned, f.fillLocked, func() error { return f.mkBucket("empty-bucket", false) }}
	switch contents {
	case "sets":
		steps = []func() error{f.fillSetsPlain, f.fillSetsVersioned}
	case "cluster":
		steps = []func() error{f.fillSetsPlain, f.fillSetsVersioned, f.fillConfigured}
	case "tiny":
		steps = []func() error{f.fillTiny}
	case "pools":
		steps = []func() error{f.fillPools}
	case "clusterpools":
		steps = []func() error{f.fillClusterPools}
	case "sse":
		steps = []func() error{f.fillSSE}
	case "full":
		if f.kind == "compressed" {
			steps = []func() error{f.fillCompressed, f.fillCompressedVersioned}
		}
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// plain: an unversioned bucket with every size class, a multipart object,
// unusual keys and metadata, and bucket policy, lifecycle and tagging.
func (f *filler) fillPlain() error {
	const b = "plain"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	type obj struct {
		key  string
		size int
		opts []putOpt
	}
	objs := []obj{
		{"empty", 0, nil},
		{"small.txt", 0, []putOpt{func(in *s3.PutObjectInput) {
			in.Body = strings.NewReader("hello from minio\n")
			in.ContentLength = aws.Int64(17)
			in.ContentType = aws.String("text/plain; charset=utf-8")
		}}},
		{"inline-100k.bin", 100 * kib, nil},
		{"inline-1m.bin", mib, nil}, // one full block; 12+4 shards of 87382 B still fit inline
		{"multi-block.bin", 3*mib + 512*kib + 123, nil},
		{"ünïcødé/日本語/ファイル名.txt", 2 * kib, nil},
		{"deep/a/b/c/d/e/f/g/h/i/j/k/leaf.txt", 300, nil},
		{"meta/non-ascii.txt", 5 * kib, []putOpt{func(in *s3.PutObjectInput) {
			in.Metadata = map[string]string{
				"greeting": "Grüße, 世界 🌍",
				"encoded":  "=?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte("Ärger über Öl")) + "?=",
				"plain":    "ascii value",
			}
			in.ContentType = aws.String("application/x-fixture")
			in.ContentDisposition = aws.String(`attachment; filename="report.txt"`)
			in.ContentLanguage = aws.String("de-DE")
			in.CacheControl = aws.String("max-age=3600")
			in.ContentEncoding = aws.String("identity")
		}}},
		{"tagged.txt", 1000, []putOpt{func(in *s3.PutObjectInput) {
			in.Tagging = aws.String("project=adoption&tier=gold&note=two%20words")
		}}},
		{"checksum/sha256.bin", 40 * kib, []putOpt{func(in *s3.PutObjectInput) {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmSha256
		}}},
		{"checksum/crc32c.bin", 400 * kib, []putOpt{func(in *s3.PutObjectInput) {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32c
		}}},
		{"public/readme.txt", 64, nil},
		{"folder/", 0, nil}, // a "directory object": MinIO stores it as folder__XLDIR__
	}
	for _, o := range objs {
		if _, err := f.put(b, o.key, body(b+"/"+o.key, o.size), o.opts...); err != nil {
			return err
		}
	}
	if err := f.multipart(b, "multipart.bin"); err != nil {
		return err
	}
	// An upload left unfinished: it lives under .minio.sys/multipart.
	up, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("unfinished.bin")})
	if err != nil {
		return fmt.Errorf("create multipart: %w", err)
	}
	part := body(b+"/unfinished.bin", 100*kib)
	if _, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("unfinished.bin"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part)))}); err != nil {
		return fmt.Errorf("upload part: %w", err)
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Sid":"PublicRead","Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::plain/public/*"]}]}`
	if _, err := f.c.PutBucketPolicy(f.ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: &policy}); err != nil {
		return fmt.Errorf("bucket policy: %w", err)
	}
	if _, err := f.c.PutBucketLifecycleConfiguration(f.ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(b),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{
			ID:         aws.String("expire-tmp"),
			Status:     types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(30)},
		}}},
	}); err != nil {
		return fmt.Errorf("lifecycle: %w", err)
	}
	if _, err := f.c.PutBucketTagging(f.ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("team"), Value: aws.String("storage")}, {Key: aws.String("cost-center"), Value: aws.String("42")}}}}); err != nil {
		return fmt.Errorf("bucket tagging: %w", err)
	}
	return nil
}

// multipart uploads parts 1 and 3 (5 MiB, then 1.2 MiB and a bit) with
// CRC32C checksums and completes with those two: uneven, non-contiguous.
func (f *filler) multipart(bucket, key string) error {
	data := body(bucket+"/"+key, 5*mib+mib+200*kib+7)
	cr, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
		ContentType: aws.String("application/x-multipart-fixture"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
		Metadata: map[string]string{"origin": "multipart"}})
	if err != nil {
		return fmt.Errorf("create multipart: %w", err)
	}
	parts := []struct {
		num        int32
		start, end int
	}{{1, 0, 5 * mib}, {3, 5 * mib, len(data)}}
	var done []types.CompletedPart
	for _, p := range parts {
		chunk := data[p.start:p.end]
		up, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(p.num), Body: bytes.NewReader(chunk), ContentLength: aws.Int64(int64(len(chunk))),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
		if err != nil {
			return fmt.Errorf("upload part %d: %w", p.num, err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(p.num), ETag: up.ETag, ChecksumCRC32C: up.ChecksumCRC32C})
	}
	_, err = f.c.CompleteMultipartUpload(f.ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		return fmt.Errorf("complete multipart: %w", err)
	}
	return nil
}

// versioned: a null version from before versioning, versions around delete
// markers, a key whose latest version is a delete marker, a one-block
// object with part files, tags on an older version. (A DELETE of a key
// that never existed is sent too: AWS would write a delete marker, the
// MinIO the fixture was made with writes none.)
func (f *filler) fillVersioned() error {
	const b = "versioned"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	if _, err := f.put(b, "pre.txt", body(b+"/pre.txt#null", 700)); err != nil {
		return err
	}
	if err := f.versioning(b, types.BucketVersioningStatusEnabled); err != nil {
		return fmt.Errorf("versioning: %w", err)
	}
	if _, err := f.put(b, "pre.txt", body(b+"/pre.txt#2", 900)); err != nil {
		return err
	}
	v1, err := f.put(b, "doc.txt", body(b+"/doc.txt#1", 20))
	if err != nil {
		return err
	}
	if _, err := f.put(b, "doc.txt", body(b+"/doc.txt#2", 300*kib)); err != nil { // above the versioned inline limit
		return err
	}
	if err := f.del(b, "doc.txt"); err != nil {
		return err
	}
	if _, err := f.put(b, "doc.txt", body(b+"/doc.txt#3", 50), func(in *s3.PutObjectInput) {
		in.Metadata = map[string]string{"revision": "3"}
	}); err != nil {
		return err
	}
	if _, err := f.c.PutObjectTagging(f.ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("doc.txt"), VersionId: &v1,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("state"), Value: aws.String("first draft")}}}}); err != nil {
		return fmt.Errorf("tag version: %w", err)
	}
	if _, err := f.put(b, "gone.txt", body(b+"/gone.txt#1", 10*kib)); err != nil {
		return err
	}
	if err := f.del(b, "gone.txt"); err != nil {
		return err
	}
	if err := f.del(b, "never-existed.txt"); err != nil {
		return err
	}
	if _, err := f.put(b, "one-block.bin", body(b+"/one-block.bin", mib)); err != nil {
		return err
	}
	if _, err := f.put(b, "dir/ñ/versioned-unicode.txt", body(b+"/dir/ñ/versioned-unicode.txt", 3*kib)); err != nil {
		return err
	}
	return nil
}

// fillSetsPlain (-fill sets): an unversioned bucket with, in every
// erasure set, an object of every storage kind (empty, inline, part
// files of several blocks, a one-part multipart upload, a directory
// object), plus a dozen small keys spread by the hash.
func (f *filler) fillSetsPlain() error {
	const b = "plain"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	kinds := []struct {
		name string // %d: the set's candidate number
		size int
	}{
		{"empty-%d", 0}, {"small-%d.txt", 17}, {"inline-%d.bin", 20 * kib}, {"multi-block-%d.bin", 2*mib + 300*kib + 5},
		{"folder-%d/", 0}, {"deep/%d/a/b/leaf.txt", 300}, {"ünïcødé/名前-%d.txt", 2 * kib},
	}
	for _, k := range kinds {
		for _, key := range f.perSet(k.name) {
			if _, err := f.put(b, key, body(b+"/"+key, k.size)); err != nil {
				return err
			}
		}
	}
	for i := range 12 {
		key := fmt.Sprintf("spread/k%02d.txt", i)
		if _, err := f.put(b, key, body(b+"/"+key, 100+37*i)); err != nil {
			return err
		}
	}
	for _, key := range f.perSet("multipart-%d.bin") {
		if err := f.onePartUpload(b, key, mib+100*kib+3); err != nil {
			return err
		}
	}
	// S2-compressed objects (setsCompressionEnv compresses .s2z keys
	// only): adopted by copy, on their set's drives.
	for _, key := range f.perSet("compressed-%d.s2z") {
		if _, err := f.put(b, key, text(b+"/"+key, 300*kib+11)); err != nil {
			return err
		}
	}
	// Unfinished uploads, one in each set (MinIO keeps an upload in
	// its object's set): part 1 only, left open.
	for _, key := range f.perSet("unfinished-%d.bin") {
		up, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key)})
		if err != nil {
			return fmt.Errorf("create multipart %s: %w", key, err)
		}
		part := body(b+"/"+key, 70*kib+9)
		if _, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part)))}); err != nil {
			return fmt.Errorf("upload part of %s: %w", key, err)
		}
	}
	return nil
}

// fillTiny (-fill tiny): one bucket with four small objects.
func (f *filler) fillTiny() error {
	const b = "plain"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	for i := range 4 {
		key := fmt.Sprintf("k%d.txt", i)
		if _, err := f.put(b, key, body(b+"/"+key, 100+i)); err != nil {
			return err
		}
	}
	return nil
}

// perSet returns one name per erasure set made from pattern (with %d),
// each one that MinIO places in its set: the first candidate number
// landing there. placement.MinIOSipMod computes MinIO's placement; the
// tests check every key's xl.meta is where it says.
func (f *filler) perSet(pattern string) []string {
	names := make([]string, f.sets)
	left := f.sets
	for n := 0; left > 0; n++ {
		name := fmt.Sprintf(pattern, n)
		if s := f.placer.Set("", name, f.sets); names[s] == "" {
			names[s] = name
			left--
		}
	}
	return names
}

// onePartUpload makes a multipart object of one part numbered 2 (a
// part below 5 MiB may only be the last one; one part keeps the fixture
// small), two erasure blocks long.
func (f *filler) onePartUpload(bucket, key string, size int) error {
	data := body(bucket+"/"+key, size)
	cr, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return fmt.Errorf("create multipart: %w", err)
	}
	up, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
		PartNumber: aws.Int32(2), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		return fmt.Errorf("upload part: %w", err)
	}
	_, err = f.c.CompleteMultipartUpload(f.ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(2), ETag: up.ETag}}}})
	if err != nil {
		return fmt.Errorf("complete multipart: %w", err)
	}
	return nil
}

// fillSetsVersioned (-fill sets): in every set, a key with a null
// version from before versioning, versions inline and with part files,
// a delete marker between them, and a key whose latest version is a
// delete marker.
func (f *filler) fillSetsVersioned() error {
	const b = "versioned"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	pre := f.perSet("pre-%d.txt")
	for _, key := range pre {
		if _, err := f.put(b, key, body(b+"/"+key+"#null", 700)); err != nil {
			return err
		}
	}
	if err := f.versioning(b, types.BucketVersioningStatusEnabled); err != nil {
		return fmt.Errorf("versioning: %w", err)
	}
	for _, key := range f.perSet("doc-%d.txt") {
		if _, err := f.put(b, key, body(b+"/"+key+"#1", 20)); err != nil {
			return err
		}
		if _, err := f.put(b, key, body(b+"/"+key+"#2", 300*kib)); err != nil { // part files
			return err
		}
		if err := f.del(b, key); err != nil {
			return err
		}
		if _, err := f.put(b, key, body(b+"/"+key+"#3", 50)); err != nil {
			return err
		}
	}
	for _, key := range f.perSet("gone-%d.txt") {
		if _, err := f.put(b, key, body(b+"/"+key+"#1", 10*kib)); err != nil {
			return err
		}
		if err := f.del(b, key); err != nil {
			return err
		}
	}
	for _, key := range pre {
		if _, err := f.put(b, key, body(b+"/"+key+"#2", 900)); err != nil {
			return err
		}
	}
	return nil
}

// locked: object lock with explicit retention, a legal hold, and a bucket
// default retention applied to a later object.
func (f *filler) fillLocked() error {
	const b = "locked"
	if err := f.mkBucket(b, true); err != nil {
		return err
	}
	until := time.Date(2099, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := f.put(b, "governance.txt", body(b+"/governance.txt", 1500), func(in *s3.PutObjectInput) {
		in.ObjectLockMode = types.ObjectLockModeGovernance
		in.ObjectLockRetainUntilDate = &until
	}); err != nil {
		return err
	}
	if _, err := f.put(b, "compliance.txt", body(b+"/compliance.txt", 2500), func(in *s3.PutObjectInput) {
		in.ObjectLockMode = types.ObjectLockModeCompliance
		in.ObjectLockRetainUntilDate = &until
	}); err != nil {
		return err
	}
	if _, err := f.put(b, "held.txt", body(b+"/held.txt", 3500), func(in *s3.PutObjectInput) {
		in.ObjectLockLegalHoldStatus = types.ObjectLockLegalHoldStatusOn
	}); err != nil {
		return err
	}
	if _, err := f.c.PutObjectLockConfiguration(f.ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(b),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(3650)}}}}); err != nil {
		return fmt.Errorf("lock config: %w", err)
	}
	if _, err := f.put(b, "defaulted.bin", body(b+"/defaulted.bin", 2*mib+99)); err != nil {
		return err
	}
	return nil
}

// The recorded answers' shapes are miniofixture's, which the tests read.
type (
	Expected  = miniofixture.Expected
	Bucket    = miniofixture.Bucket
	Upload    = miniofixture.Upload
	ListEntry = miniofixture.ListEntry
	Version   = miniofixture.Version
	Head      = miniofixture.Head
)

const ms = "2006-01-02T15:04:05.000Z"

func tstr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(ms)
}

func record(ctx context.Context, c *s3.Client) (*Expected, error) {
	exp := &Expected{}
	lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		return nil, err
	}
	for _, bi := range lb.Buckets {
		b := Bucket{Name: aws.ToString(bi.Name), Created: tstr(bi.CreationDate), Objects: []ListEntry{}, Versions: []Version{}}
		if err := recordBucket(ctx, c, &b); err != nil {
			return nil, fmt.Errorf("bucket %s: %w", b.Name, err)
		}
		exp.Buckets = append(exp.Buckets, b)
	}
	return exp, nil
}

func recordBucket(ctx context.Context, c *s3.Client, b *Bucket) error {
	name := &b.Name
	if v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: name}); err == nil {
		b.Versioning = string(v.Status)
	} else {
		return err
	}
	if lc, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: name}); err == nil && lc.ObjectLockConfiguration != nil {
		b.ObjectLock = string(lc.ObjectLockConfiguration.ObjectLockEnabled)
		if r := lc.ObjectLockConfiguration.Rule; r != nil && r.DefaultRetention != nil {
			b.LockDefault = fmt.Sprintf("%s/%dd", r.DefaultRetention.Mode, aws.ToInt32(r.DefaultRetention.Days))
		}
	}
	if p, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: name}); err == nil {
		b.Policy = aws.ToString(p.Policy)
	}
	if l, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: name}); err == nil {
		for _, r := range l.Rules {
			b.LifecycleRules = append(b.LifecycleRules, aws.ToString(r.ID))
		}
	}
	if t, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: name}); err == nil {
		b.Tags = tagMap(t.TagSet)
	}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: name})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			b.Objects = append(b.Objects, ListEntry{Key: aws.ToString(o.Key), ETag: aws.ToString(o.ETag), Size: aws.ToInt64(o.Size), LastModified: tstr(o.LastModified)})
		}
	}
	mu, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: name})
	if err != nil {
		return err
	}
	for _, u := range mu.Uploads {
		up := Upload{Key: aws.ToString(u.Key), UploadID: aws.ToString(u.UploadId)}
		lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: name, Key: u.Key, UploadId: u.UploadId})
		if err != nil {
			return err
		}
		for _, p := range lp.Parts {
			up.Parts = append(up.Parts, int(aws.ToInt32(p.PartNumber)))
			up.PartETags = append(up.PartETags, aws.ToString(p.ETag))
			up.PartSizes = append(up.PartSizes, aws.ToInt64(p.Size))
		}
		b.Uploads = append(b.Uploads, up)
	}
	var keyMarker, vidMarker *string
	for {
		lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: name, KeyMarker: keyMarker, VersionIdMarker: vidMarker})
		if err != nil {
			return err
		}
		// One listing order: versions and delete markers of a key, newest first.
		var page []Version
		for _, v := range lv.Versions {
			page = append(page, Version{Key: aws.ToString(v.Key), VersionID: aws.ToString(v.VersionId), IsLatest: aws.ToBool(v.IsLatest),
				ETag: aws.ToString(v.ETag), Size: aws.ToInt64(v.Size), LastModified: tstr(v.LastModified)})
		}
		for _, d := range lv.DeleteMarkers {
			page = append(page, Version{Key: aws.ToString(d.Key), VersionID: aws.ToString(d.VersionId), IsLatest: aws.ToBool(d.IsLatest),
				DeleteMarker: true, LastModified: tstr(d.LastModified)})
		}
		sort.SliceStable(page, func(i, j int) bool {
			if page[i].Key != page[j].Key {
				return page[i].Key < page[j].Key
			}
			return page[i].LastModified > page[j].LastModified
		})
		b.Versions = append(b.Versions, page...)
		if !aws.ToBool(lv.IsTruncated) {
			break
		}
		keyMarker, vidMarker = lv.NextKeyMarker, lv.NextVersionIdMarker
	}
	for i := range b.Versions {
		v := &b.Versions[i]
		if v.DeleteMarker {
			continue
		}
		if err := recordVersion(ctx, c, b.Name, v); err != nil {
			return fmt.Errorf("%s@%s: %w", v.Key, v.VersionID, err)
		}
	}
	return nil
}

func recordVersion(ctx context.Context, c *s3.Client, bucket string, v *Version) error {
	alg, ckey, ckeyMD5 := sseCFor(v.Key) // nil unless an SSE-C object of -fill sse
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &v.Key, VersionId: &v.VersionID, ChecksumMode: types.ChecksumModeEnabled,
		SSECustomerAlgorithm: alg, SSECustomerKey: ckey, SSECustomerKeyMD5: ckeyMD5})
	if err != nil {
		return err
	}
	hd := &Head{
		ETag: aws.ToString(h.ETag), ContentLength: aws.ToInt64(h.ContentLength), LastModified: tstr(h.LastModified),
		ContentType: aws.ToString(h.ContentType), ContentDisposition: aws.ToString(h.ContentDisposition),
		ContentEncoding: aws.ToString(h.ContentEncoding), ContentLanguage: aws.ToString(h.ContentLanguage),
		CacheControl: aws.ToString(h.CacheControl), Metadata: h.Metadata, PartsCount: aws.ToInt32(h.PartsCount),
		LockMode: string(h.ObjectLockMode), LockRetainUntil: tstr(h.ObjectLockRetainUntilDate),
		LegalHold: string(h.ObjectLockLegalHoldStatus), TagCount: aws.ToInt32(h.TagCount),
		SSE: string(h.ServerSideEncryption), SSEKMSKeyID: aws.ToString(h.SSEKMSKeyId),
	}
	if len(hd.Metadata) == 0 {
		hd.Metadata = nil
	}
	sums := map[string]*string{"CRC32": h.ChecksumCRC32, "CRC32C": h.ChecksumCRC32C, "CRC64NVME": h.ChecksumCRC64NVME,
		"SHA1": h.ChecksumSHA1, "SHA256": h.ChecksumSHA256}
	for k, s := range sums {
		if s != nil {
			if hd.Checksums == nil {
				hd.Checksums = map[string]string{}
			}
			hd.Checksums[k] = *s
			if h.ChecksumType != "" {
				hd.Checksums["type"] = string(h.ChecksumType)
			}
		}
	}
	if hd.TagCount > 0 {
		t, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: &bucket, Key: &v.Key, VersionId: &v.VersionID})
		if err != nil {
			return err
		}
		hd.Tags = tagMap(t.TagSet)
	}
	v.Head = hd
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &v.Key, VersionId: &v.VersionID,
		SSECustomerAlgorithm: alg, SSECustomerKey: ckey, SSECustomerKeyMD5: ckeyMD5})
	if err != nil {
		return err
	}
	defer g.Body.Close()
	sh := sha256.New()
	n, err := io.Copy(sh, g.Body)
	if err != nil {
		return err
	}
	if n != v.Size {
		return fmt.Errorf("body of %d bytes, listed %d", n, v.Size)
	}
	v.SHA256 = hex.EncodeToString(sh.Sum(nil))
	return nil
}

func tagMap(ts []types.Tag) map[string]string {
	if len(ts) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, t := range ts {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// pack writes the drives as one tar, entries ordered by path inside the
// drive and then by drive (so one object's files on all drives sit side by
// side and compress against each other), owners and times normalised,
// compressed with zstd and a 64 MiB window.
func pack(work, dst string) (int64, error) {
	type entry struct {
		rel   string
		drive int
		path  string
		info  fs.FileInfo
	}
	var entries []entry
	for d := 1; d <= drives; d++ {
		root := filepath.Join(work, fmt.Sprintf("drive%d", d))
		err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if rel == "." {
				rel = ""
			}
			info, err := de.Info()
			if err != nil {
				return err
			}
			if !info.Mode().IsRegular() && !info.IsDir() {
				return fmt.Errorf("%s: neither file nor directory", p)
			}
			entries = append(entries, entry{rel: filepath.ToSlash(rel), drive: d, path: p, info: info})
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].rel != entries[j].rel {
			return entries[i].rel < entries[j].rel
		}
		return entries[i].drive < entries[j].drive
	})
	f, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(64<<20))
	if err != nil {
		return 0, err
	}
	tw := tar.NewWriter(zw)
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range entries {
		name := fmt.Sprintf("drive%d", e.drive)
		if e.rel != "" {
			name += "/" + e.rel
		}
		hdr := &tar.Header{Name: name, Mode: int64(e.info.Mode().Perm()), ModTime: epoch, Format: tar.FormatPAX}
		if e.info.IsDir() {
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, e.info.Size()
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, err
		}
		if e.info.Mode().IsRegular() {
			data, err := os.ReadFile(e.path)
			if err != nil {
				return 0, err
			}
			if _, err := tw.Write(data); err != nil {
				return 0, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}
