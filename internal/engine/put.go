package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/quorum"
	"github.com/shardstore/shardstore/internal/sse"
	"github.com/shardstore/shardstore/internal/wallclock"
)

var errDriveSkipped = errors.New("drive skipped: earlier failure in this operation")

// blocksInFlight bounds the memory of one stream: the reader may fill a
// new block while this many are still being hashed or written.
const blocksInFlight = 4

// writePlan says where one shard stream goes.
type writePlan struct {
	set   *erasureSet
	coder *erasure.Coder
	dist  []int // drive position → 1-based shard number
	// ref names the shard file on every drive: a fresh random data id
	// and the part number. Nothing about it derives from the key.
	ref drive.ShardRef
	// inlineOK allows keeping small data in the index instead.
	inlineOK bool
	// enc, when set, encrypts the data between hashing and coding.
	enc *encryptor
	// algo is the chunk checksum of the shard files; 0 means the
	// engine's (a part takes its upload's: an upload adopted from MinIO
	// keeps MinIO's, which its adopted parts have).
	algo bitrot.Algorithm
	// created records that shard files were opened; committed that a
	// record now owns them (otherwise cleanup removes them).
	created, committed bool
}

// sumAlgo is the plan's chunk checksum, or def when it names none.
func (p *writePlan) sumAlgo(def bitrot.Algorithm) bitrot.Algorithm {
	if p.algo.Valid() {
		return p.algo
	}
	return def
}

// PutPhases is where the time of one PUT (or part upload) went. Receive,
// Encode, Sync, HashWait and Commit are wall time on the request path;
// Hash, Bitrot and Write are work summed over the goroutines that did it,
// so they can add up to more than the request took.
type PutPhases struct {
	Bytes    int64
	Backend  string // hashing backend that ran the MD5
	Receive  time.Duration
	Hash     time.Duration
	HashWait time.Duration // part of hashing the commit had to wait for
	Encode   time.Duration
	Encrypt  time.Duration // sealing encrypted data (part of the request path)
	Bitrot   time.Duration
	Write    time.Duration
	Sync     time.Duration
	Commit   time.Duration
}

// writeResult is the outcome of writing one shard stream.
type writeResult struct {
	phases  PutPhases
	size    int64
	digests hashing.Digests
	inline  [][]byte // per position when the data is inline, else nil
	errs    []error  // per position; nil means the shard is complete and synced
}

func (r *writeResult) ok(p int) bool { return r.errs[p] == nil }

// shardSink receives one drive's shard stream.
type shardSink interface {
	io.Writer
	Close() error
	Abort()
}

type memSink struct{ bytes.Buffer }

func (m *memSink) Close() error { return nil }
func (m *memSink) Abort()       {}

// pooledBlock is a block shared by the hasher and every drive writer; it
// goes back to the stream's free list when the last of them releases it.
type pooledBlock struct {
	blk  *erasure.Block
	refs atomic.Int32
	free chan *erasure.Block
}

func (pb *pooledBlock) release() {
	if pb.refs.Add(-1) == 0 {
		pb.free <- pb.blk
	}
}

// readBlock fills buf from body. With a known size it reads exactly the
// bytes left (up to len(buf)) and reports a short body as
// ErrIncompleteBody; with an unknown size it reads until buf is full or
// the body ends. Errors from body (a failed signature check, say) are
// returned as they are so the caller aborts with them.
func readBlock(body io.Reader, buf []byte, size, done int64) (n int, last bool, err error) {
	if size >= 0 {
		want := int(min(int64(len(buf)), size-done))
		n, err = io.ReadFull(body, buf[:want])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, false, fmt.Errorf("%w: got %d of %d bytes", ErrIncompleteBody, done+int64(n), size)
		}
		if err != nil {
			return n, false, err
		}
		if done+int64(n) < size {
			return n, false, nil
		}
		// Read on to EOF: a verifying body (SigV4 payload hash, chunk and
		// trailer signatures) reports a failure only there, and nothing
		// unverified may be committed.
		var probe [1]byte
		m, err := io.ReadFull(body, probe[:])
		if m > 0 {
			return n, false, fmt.Errorf("%w: body longer than the declared %d bytes", ErrInvalidArgument, size)
		}
		if err != io.EOF {
			return n, false, err
		}
		return n, true, nil
	}
	n, err = io.ReadFull(body, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return n, true, nil
	}
	return n, false, err
}

// writeShards streams body through erasure coding to one shard file per
// drive of the set (or into memory for small objects), hashing beside it.
// It returns when every shard is synced or failed; the caller decides
// about quorum and commits.
func (e *Engine) writeShards(ctx context.Context, plan *writePlan, body io.Reader, size int64, hreq hashing.Request) (*writeResult, error) {
	c := plan.coder
	n := len(plan.set.drives)
	stream, err := e.hasher.NewStream(hreq)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgument, err)
	}
	free := make(chan *erasure.Block, blocksInFlight)
	var allocated []*erasure.Block
	getBlock := func() *erasure.Block {
		select {
		case b := <-free:
			return b
		default:
		}
		if len(allocated) < blocksInFlight {
			b := c.GetBlock()
			allocated = append(allocated, b)
			return b
		}
		return <-free
	}
	res := &writeResult{errs: make([]error, n)}
	sinks := make([]shardSink, n)
	chans := make([]chan shardJob, n)
	var writers sync.WaitGroup
	started, success := false, false
	var closing []drive.Drive // sinks handed to Close (which owns them then, maybe in the background)
	// finish waits for everything that may still touch a block, then
	// hands the blocks back to the coder's pool: no path leaks a buffer.
	defer func() {
		if started {
			for _, ch := range chans {
				if ch != nil {
					close(ch)
				}
			}
			writers.Wait()
		}
		if !success {
			for p, s := range sinks {
				if s != nil && (closing == nil || closing[p] == nil) {
					s.Abort()
				}
			}
		}
		stream.Close()
		for _, b := range allocated {
			c.PutBlock(b)
		}
	}()

	ph := &res.phases
	var peek *peekingBody
	if plan.enc != nil && size < 0 {
		peek = &peekingBody{bufio.NewReaderSize(body, 4096)}
		body = peek
	}
	// read fills the next block: blk itself, or for encrypted data a
	// plaintext buffer (plainBuf) that seal turns into blk's ciphertext.
	var plainBuf *[]byte
	read := func(blk *erasure.Block, done int64) (int, bool, error) {
		dst := blk.Buf[:c.BlockSize()]
		if plan.enc != nil {
			plainBuf = plan.enc.bufs.get()
			dst = *plainBuf
		}
		t0 := time.Now()
		got, last, err := readBlock(body, dst, size, done)
		if err == nil && !last && peek != nil && got == len(dst) && peek.atEOF() {
			last = true // the last package must be sealed as the last
		}
		ph.Receive += time.Since(t0)
		if err != nil && plainBuf != nil {
			plan.enc.bufs.put(plainBuf)
			plainBuf = nil
		}
		return got, last, err
	}
	blk := getBlock()
	got, last, err := read(blk, 0)
	if err != nil {
		return nil, err
	}
	firstCoded := got
	if plan.enc != nil {
		firstCoded = int(sse.EncryptedSize(int64(got)))
	}
	algo := plan.sumAlgo(e.bitrot)
	inline := last && plan.inlineOK && e.inlineLimit > 0 &&
		int64(c.ShardSize(firstCoded)+algo.Size()) <= e.inlineLimit
	if err := e.openSinks(ctx, plan, inline, algo.Size()+c.ShardSize(firstCoded), sinks, res.errs); err != nil {
		return nil, err
	}
	started = true
	writerTimes := make([][2]time.Duration, n)
	for p := range sinks {
		chans[p] = make(chan shardJob, blocksInFlight)
		writers.Add(1)
		go func() {
			defer writers.Done()
			e.shardWriter(sinks[p], algo, plan.dist[p]-1, chans[p], &res.errs[p], &writerTimes[p])
		}()
	}
	var total int64
	for {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if got > 0 {
			pb := &pooledBlock{blk: blk, free: free}
			coded := got
			if plan.enc != nil {
				// Seal first, then hand the plaintext to the hasher, which
				// gives its buffer back to the pool when done: possibly
				// inside Write, so nothing may read the buffer after it.
				pbuf := plainBuf
				plain := (*pbuf)[:got]
				pb.refs.Store(int32(n))
				t0 := time.Now()
				coded = len(plan.enc.seal(blk.Buf[:0], plain, last))
				ph.Encrypt += time.Since(t0)
				stream.Write(plain, func() { plan.enc.bufs.put(pbuf) })
			} else {
				pb.refs.Store(int32(n + 1))
				stream.Write(blk.Buf[:got], pb.release)
			}
			t0 := time.Now()
			err := c.Encode(blk, coded)
			ph.Encode += time.Since(t0)
			if err != nil {
				pb.refs.Add(-int32(n))
				return nil, err
			}
			for p := range chans {
				chans[p] <- shardJob{pb}
			}
			total += int64(got)
		} else {
			free <- blk
			if plainBuf != nil {
				plan.enc.bufs.put(plainBuf)
			}
		}
		plainBuf = nil
		if last {
			break
		}
		if size < 0 && total > MaxPutSize {
			return nil, fmt.Errorf("%w: more than %d bytes in one upload", ErrEntityTooLarge, int64(MaxPutSize))
		}
		blk = getBlock()
		got, last, err = read(blk, total)
		if err != nil {
			free <- blk
			return nil, err
		}
	}
	for _, ch := range chans {
		close(ch)
	}
	started = false
	t0 := time.Now()
	writers.Wait()
	for _, wt := range writerTimes {
		ph.Bitrot += wt[0]
		ph.Write += wt[1]
	}
	// Close (fsync) every shard file in parallel, not waiting for drives
	// known to lag once write quorum is durable: a file closed after that
	// has no record pointing at it (the commit leaves its drive out and
	// queues a heal) and is removed as an orphan by the scanner.
	closing = make([]drive.Drive, n) // stands for the sinks to close: fanOut skips nil ones
	for p, s := range sinks {
		switch {
		case s == nil:
		case res.errs[p] != nil:
			s.Abort()
		default:
			closing[p] = plan.set.drives[p]
		}
	}
	wq := quorum.WriteQuorum(c.DataShards(), c.ParityShards())
	closeErrs := fanOutErr(&e.lag, closing, wq, func(p int, _ drive.Drive) error { return sinks[p].Close() }, nil, nil)
	for p, err := range closeErrs {
		if closing[p] != nil && err != nil {
			res.errs[p] = err
		}
	}
	ph.Sync = time.Since(t0)
	digests, err := stream.Sum()
	if err != nil {
		return nil, fmt.Errorf("hashing: %w", err)
	}
	ph.Hash, ph.HashWait, ph.Backend, ph.Bytes = digests.HashTime, digests.SumWait, string(digests.Backend), total
	success = true
	res.size = total
	res.digests = digests
	if inline {
		res.inline = make([][]byte, n)
		for p, s := range sinks {
			if res.errs[p] == nil {
				res.inline[p] = s.(*memSink).Bytes()
			}
		}
	}
	return res, nil
}

type shardJob struct{ pb *pooledBlock }

// shardWriter writes [checksum][shard] for every block to one sink. After
// a failure it keeps draining so the pipeline never stalls on a bad drive.
// times receives the bitrot and write durations.
func (e *Engine) shardWriter(s shardSink, algo bitrot.Algorithm, shard int, jobs <-chan shardJob, errp *error, times *[2]time.Duration) {
	var sum [32]byte
	var bufs [2][]byte
	for j := range jobs {
		if *errp == nil {
			data := j.pb.blk.Shards[shard]
			t0 := time.Now()
			bufs[0] = algo.Sum(sum[:], data)
			bufs[1] = data
			t1 := time.Now()
			if err := drive.WriteBuffers(s, bufs[:]); err != nil {
				*errp = err
			}
			bufs[1] = nil
			times[0] += t1.Sub(t0)
			times[1] += time.Since(t1)
		}
		j.pb.release()
	}
}

// openSinks opens one shard file per drive in parallel (or memory sinks
// for inline data). A drive that cannot open its file is marked failed;
// the stream goes on while write quorum remains.
func (e *Engine) openSinks(ctx context.Context, plan *writePlan, inline bool, inlineSize int, sinks []shardSink, errs []error) error {
	if inline {
		for p := range sinks {
			m := &memSink{}
			m.Grow(inlineSize)
			sinks[p] = m
		}
		return nil
	}
	plan.created = true
	data := plan.coder.DataShards()
	wq := quorum.WriteQuorum(data, plan.coder.ParityShards())
	// A drive that opens its file only after the others streamed on
	// without it gets its file dropped (the heal writes it later).
	ws, werrs := fanOut(&e.lag, plan.set.drives, atLeast[drive.FileWriter](wq, succeeded), func(p int, d drive.Drive) (drive.FileWriter, error) {
		return d.CreateShard(ctx, plan.ref)
	}, nil, func(p int, w drive.FileWriter, err error) {
		if err == nil {
			w.Abort()
		}
	})
	for p, w := range ws {
		errs[p] = werrs[p]
		if werrs[p] == nil {
			sinks[p] = w
		}
	}
	if ok := countNil(errs); ok < wq {
		for _, s := range sinks {
			if s != nil {
				s.Abort()
			}
		}
		for p := range sinks {
			sinks[p] = nil
		}
		return quorumError("open shard files", errs, ok, wq)
	}
	return nil
}

// cleanupShards removes a write's shard files from every drive unless a
// commit made a record own them. Inline writes created none.
func (e *Engine) cleanupShards(plan *writePlan) {
	if !plan.created || plan.committed {
		return
	}
	refs := []drive.ShardRef{plan.ref}
	forEachDrive(plan.set.drives, func(i int, d drive.Drive) error {
		return d.DeleteShards(context.Background(), refs)
	})
}

// verifyDigests checks what the client told us about the body.
func verifyDigests(d hashing.Digests, contentMD5 []byte, algo string, expected func() (string, error)) (checksum string, err error) {
	if contentMD5 != nil && !bytes.Equal(contentMD5, d.MD5) {
		return "", fmt.Errorf("%w: Content-MD5 %s, body %s", ErrBadDigest,
			base64.StdEncoding.EncodeToString(contentMD5), base64.StdEncoding.EncodeToString(d.MD5))
	}
	if algo == "" {
		return "", nil
	}
	checksum = base64.StdEncoding.EncodeToString(d.Checksum)
	if expected != nil {
		want, err := expected()
		if err != nil {
			return "", err
		}
		if want != "" && want != checksum {
			return "", &ChecksumError{Algorithm: canonicalAlgo(algo), Detail: fmt.Sprintf("sent %s, body has %s", want, checksum)}
		}
	}
	return checksum, nil
}

// checkPutOptions validates what a PUT stores.
func checkPutOptions(opts *PutOptions) error {
	n := 0
	for k, v := range opts.UserMeta {
		n += len(k) + len(v)
	}
	if n > MaxUserMetaLen {
		return fmt.Errorf("%w: user metadata is %d bytes, more than %d", ErrInvalidArgument, n, MaxUserMetaLen)
	}
	if err := checkTags(opts.Tags); err != nil {
		return err
	}
	switch opts.StorageClass {
	case "", "STANDARD", "REDUCED_REDUNDANCY":
	default:
		return fmt.Errorf("%w: storage class %q", ErrInvalidArgument, opts.StorageClass)
	}
	if opts.ChecksumAlgorithm != "" {
		if _, err := hashing.NewChecksum(opts.ChecksumAlgorithm); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidArgument, err)
		}
	}
	return checkEncryption(opts.Encryption)
}

// PutObject stores body (size bytes, or -1 when unknown) as bucket/key.
func (e *Engine) PutObject(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions) (ObjectInfo, error) {
	return e.putObject(ctx, bucket, key, body, size, opts, nil)
}

// putObject writes the shards without holding the object lock (so
// concurrent PUTs of one key overlap their transfers), then takes the lock
// only to check preconditions and commit. beforeCommit runs between the
// two; CopyObject uses it to release the source before locking the
// destination, which rules out lock-order deadlocks between copies.
func (e *Engine) putObject(ctx context.Context, bucket, key string, body io.Reader, size int64, opts PutOptions, beforeCommit func()) (ObjectInfo, error) {
	info, err := e.BucketInfo(ctx, bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := checkObjectName(key); err != nil {
		return ObjectInfo{}, err
	}
	// An import in parts keeps a multipart object's parts, each at most
	// MaxPutSize (checkImportParts), so it may be as large as an object.
	if limit := int64(MaxPutSize); size > limit && (opts.Import == nil || len(opts.Import.Parts) == 0 || size > MaxObjectSize) {
		if opts.Import != nil && len(opts.Import.Parts) > 0 {
			limit = MaxObjectSize
		}
		return ObjectInfo{}, fmt.Errorf("%w: %d bytes in one PUT, at most %d", ErrEntityTooLarge, size, limit)
	}
	if err := checkPutOptions(&opts); err != nil {
		return ObjectInfo{}, err
	}
	if opts.Import != nil {
		if err := CheckImport(opts.Import); err != nil {
			return ObjectInfo{}, err
		}
		if opts.Import.DeleteMarker {
			if size > 0 {
				return ObjectInfo{}, fmt.Errorf("%w: an imported delete marker has no body", ErrInvalidArgument)
			}
			return e.importDeleteMarker(ctx, bucket, key, opts.Import)
		}
		// A retention the source set may have expired since: it is
		// kept as it was, not checked against now.
		l := opts.Lock
		l.RetainUntil = time.Time{}
		if l.Mode != "" {
			l.RetainUntil = e.Now().Add(time.Hour)
		}
		if err := e.checkPutLock(info, l); err != nil {
			return ObjectInfo{}, err
		}
	} else if err := e.checkPutLock(info, opts.Lock); err != nil {
		return ObjectInfo{}, err
	}
	if opts.Import != nil && len(opts.Import.Parts) > 0 {
		if opts.Encryption != nil {
			return ObjectInfo{}, fmt.Errorf("%w: an import in parts into an encrypted write is not supported", ErrInvalidArgument)
		}
		return e.importParts(ctx, bucket, key, body, size, opts)
	}
	set, err := e.writeSet(ctx, bucket, key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	parity := set.parityFor(opts.StorageClass)
	coder, err := e.coders.Get(len(set.drives)-parity, parity, e.blockSizeFor(opts.Encryption))
	if err != nil {
		return ObjectInfo{}, err
	}
	dataID := uuid.NewString()
	plan := &writePlan{set: set, coder: coder, dist: e.distribution(key, len(set.drives)),
		ref: drive.ShardRef{ID: dataID, Part: 1}, inlineOK: true}
	if opts.Encryption != nil {
		if plan.enc, err = e.newEncryptor(opts.Encryption, dataID); err != nil {
			return ObjectInfo{}, err
		}
	}
	defer e.cleanupShards(plan)
	res, err := e.writeShards(ctx, plan, body, size, hashing.Request{Size: size, ETag: true, MD5: opts.ContentMD5 != nil, Checksum: opts.ChecksumAlgorithm})
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	checksum, err := verifyDigests(res.digests, opts.ContentMD5, opts.ChecksumAlgorithm, opts.ExpectedChecksum)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	m := e.newMeta(opts, res.size, "", coder, plan.dist)
	etag := res.digests.ETag
	if opts.Encryption != nil {
		etag = shownETag(m, opts.Encryption.Key, etag)
	}
	if imp := opts.Import; imp != nil && imp.ETag != "" && imp.ETag != etag {
		if !isMultipartETag(imp.ETag) || opts.Encryption != nil {
			return ObjectInfo{}, fmt.Errorf("put %s/%s: %w: import ETag %s, body has %s", bucket, key, ErrBadDigest, imp.ETag, etag)
		}
		etag = imp.ETag
	}
	m.ETag = etag
	m.Parts = []meta.Part{{Number: 1, Size: res.size, ETag: etag, Checksum: checksum}}
	if opts.ChecksumAlgorithm != "" {
		m.ChecksumAlgo, m.ChecksumVal, m.ChecksumType = canonicalAlgo(opts.ChecksumAlgorithm), checksum, "FULL_OBJECT"
	}
	m.DataID, m.Inline = dataID, res.inline != nil
	if beforeCommit != nil {
		beforeCommit()
	}
	t0 := time.Now()
	lctx, unlock, err := e.locks.LockCtx(ctx, lockName(bucket, key))
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	leave := e.enterCommit()
	err = e.checkSole(lctx, set, bucket, key)
	if err == nil {
		err = e.commitMeta(lctx, set, bucket, key, commitReq{m: m, res: res, cond: opts, owner: objectOwner(bucket, key), newVersion: true, imp: opts.Import})
	}
	leave()
	if err == nil {
		plan.committed = true
		if opts.Committed != nil {
			opts.Committed(objectInfo(bucket, key, m))
		}
	}
	if errors.Is(err, errImportedBefore) {
		err = nil // nothing written: the shards just made are removed
		if opts.Import != nil {
			m.ModTime, m.VersionID = opts.Import.ModTime, opts.Import.VersionID
		}
	}
	unlock()
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	res.phases.Commit = time.Since(t0)
	e.observe(res.phases)
	return objectInfo(bucket, key, m), nil
}

func (e *Engine) newMeta(opts PutOptions, size int64, etag string, coder *erasure.Coder, dist []int) *meta.Object {
	sc := opts.StorageClass
	if sc == "" {
		sc = "STANDARD"
	}
	acl := opts.ACL
	if acl == "" {
		acl = "private"
	}
	m := &meta.Object{
		Size: size, ModTime: wallclock.Now().UnixNano(), ETag: etag,
		ContentType: opts.ContentType, StorageClass: sc, Owner: opts.Owner, ACL: acl,
		Headers: opts.Headers, UserMeta: opts.UserMeta, Tags: tagSet(opts.Tags),
		Erasure: meta.Erasure{DataShards: coder.DataShards(), ParityShards: coder.ParityShards(),
			BlockSize: coder.BlockSize(), Distribution: dist, Bitrot: uint8(e.bitrot)},
	}
	setLock(m, opts.Lock)
	setEncryption(m, opts.Encryption)
	return m
}

// checkPutConditions applies If-None-Match: * and If-Match to the object
// as read under the commit's lock (readErr is readObject's error).
func checkPutConditions(cur *objectState, readErr error, opts PutOptions) error {
	if !opts.IfNoneMatchAny && opts.IfMatch == "" && opts.IfNoneMatch == "" {
		return nil
	}
	exists := readErr == nil && !cur.fi.IsDeleteMarker()
	if readErr != nil && !errors.Is(readErr, ErrObjectNotFound) {
		return readErr
	}
	// S3's order: a missing key fails If-Match with 404 NoSuchKey, an
	// ETag mismatch with 412; If-Match is decided before If-None-Match.
	if opts.IfMatch != "" {
		if !exists {
			return fmt.Errorf("%w: If-Match %s on a key that does not exist", ErrObjectNotFound, opts.IfMatch)
		}
		if !etagMatches(opts.IfMatch, cur.fi.ETag) {
			return fmt.Errorf("%w: If-Match %s", ErrPreconditionFailed, opts.IfMatch)
		}
	}
	if opts.IfNoneMatchAny && exists {
		return fmt.Errorf("%w: object exists and If-None-Match is *", ErrPreconditionFailed)
	}
	if opts.IfNoneMatch != "" && exists && etagMatches(opts.IfNoneMatch, cur.fi.ETag) {
		return fmt.Errorf("%w: If-None-Match %s", ErrPreconditionFailed, opts.IfNoneMatch)
	}
	return nil
}

// commitReq is one version to commit with commitMeta.
type commitReq struct {
	// m is the new version; each drive's copy gets its shard index from
	// m.Erasure.Distribution.
	m *meta.Object
	// res is the per-drive outcome of writing the data (drives that
	// failed are skipped, and inline data comes from it); nil commits to
	// every drive.
	res *writeResult
	// cond holds the PUT preconditions, checked on the commit's own read.
	cond PutOptions
	// owner is the ref the new version's data ids get; priorOwner is what
	// a rollback restores (empty: delete the refs, the ids were fresh).
	owner, priorOwner string
	// extra adds changes to each committed drive's clean-up batch
	// (multipart completion drops the upload's records there).
	extra func(p int, b *drive.Batch)
	// newVersion marks a write that makes a new version (a PUT, a copy, a
	// completed upload, a delete marker), as opposed to an in-place
	// update of the current one: in a versioned bucket it gets its
	// version id and time here, under the lock, and the version it
	// replaces is kept as a noncurrent version.
	newVersion bool
	// imp, on an imported version (PutOptions.Import), fixes its id and
	// time; one older than the current version goes to the versions
	// table without touching the current one (commitNoncurrent).
	imp *ImportVersion
}

// commitMeta makes a version visible with write quorum. The caller holds
// the object's write lock. Each drive applies one synced index batch: its
// record becomes [new version, previous version] (the previous one is what
// readers see now, kept with FlagPrev so an interrupted commit leaves it
// readable), with refs for the new data and inline data if any. Fewer than
// write quorum commits roll back to each drive's old record. Otherwise a
// second, lazy batch settles the previous version: in a versioned bucket
// it moves to the versions table (FlagKeep), otherwise it is dropped with
// the refs of its data, whose shard files are then removed (once no
// reader pins them). A lost lazy batch leaves [new, previous] on the
// drive, which the next commit or a heal settles the same way.
func (e *Engine) commitMeta(ctx context.Context, set *erasureSet, bucket, key string, req commitReq) error {
	m, res := req.m, req.res
	okey := drive.ObjectKey(bucket, key)
	var usable func(p int) bool
	if res != nil {
		usable = res.ok
	}
	cur, err := e.readObjectNeed(ctx, set, bucket, key, quorum.WriteQuorum(m.Erasure.DataShards, m.Erasure.ParityShards), usable)
	if err := checkPutConditions(cur, err, req.cond); err != nil {
		return err
	}
	readable := make([]*meta.Object, len(set.drives))
	switch {
	case err == nil:
		copy(readable, cur.metas)
	case errors.Is(err, ErrReadQuorum) && cur != nil:
		// No version has read quorum (an unversioned write goes ahead;
		// a versioned one is refused below): each drive keeps the
		// version it holds as its previous record until the commit
		// settles, as a drive holding the quorum version does. One of
		// those may be an acknowledged version on drives this node
		// cannot reach (a bridge partition: the other side's write on
		// its four drives and the bridge's two), and while this commit
		// is in flight a reader hearing every drive finds that version
		// from the previous records, instead of no version at all: a
		// listing took such a key for a damaged one and left it out
		// (finding L2 in docs/consistency.md). The settling drops them,
		// with their data, as it drops a replaced version.
		for p, m := range cur.metas {
			if cur.readErrs[p] == nil {
				readable[p] = m
			}
		}
	}
	versioning := ""
	if req.newVersion {
		info, berr := e.BucketInfo(ctx, bucket)
		if berr != nil {
			return berr
		}
		versioning = info.Versioning
		if err != nil && !errors.Is(err, ErrObjectNotFound) && versioning != "" {
			// A versioned bucket keeps the version a write replaces; when
			// which one that is cannot be read (no read quorum), the
			// commit would drop what the drives hold instead (finding R1
			// in docs/consistency.md: an acknowledged version on a read
			// quorum's worth of drives only with drives not heard).
			return err
		}
		if req.imp != nil {
			if err == nil && cur.fi.VersionID == req.imp.VersionID && cur.fi.ModTime == req.imp.ModTime {
				return errImportedBefore
			}
			if err == nil && cur.fi.ModTime > req.imp.ModTime {
				if versioning == "" {
					return errImportedBefore // an unversioned bucket keeps only the newest
				}
				vid := req.imp.VersionID
				if vid == "" {
					vid = NullVersionID
				}
				if st, _, verr := e.resolveVersion(ctx, set, bucket, key, vid); verr == nil {
					if st.fi.ModTime == req.imp.ModTime && st.fi.IsDeleteMarker() == m.IsDeleteMarker() {
						return errImportedBefore
					}
					return fmt.Errorf("%w: version %s of %s/%s exists with another time", ErrInvalidArgument, vid, bucket, key)
				} else if !errors.Is(verr, ErrNoSuchVersion) {
					return verr
				}
				m.ModTime, m.VersionID = req.imp.ModTime, req.imp.VersionID
				return e.commitNoncurrent(ctx, set, bucket, key, req)
			}
			switch {
			case versioning == VersioningSuspended && req.imp.VersionID != "":
				// An imported version with an id keeps what it replaces,
				// the null version included, as in an Enabled bucket.
				versioning = VersioningEnabled
			case versioning == VersioningEnabled && req.imp.VersionID == "":
				// An imported null version replaces the null version
				// wherever it is, as in a Suspended bucket.
				versioning = VersioningSuspended
			}
		} else if err := applyDefaultRetention(info, m, e.Now()); err != nil {
			return err
		}
		// A version the new one replaces without keeping it (unversioned
		// and suspended buckets) must not be under object lock. A bucket
		// with object lock is always versioned, so this only guards the
		// invariant.
		if err == nil && !keepReplaced(versioning, cur.fi) {
			if lerr := e.checkRemovable(bucket, key, cur.fi, false); lerr != nil {
				return lerr
			}
		}
	}
	// In a versioned bucket the new version's time and id are fixed here,
	// under the lock, newer than the version it replaces: version order
	// is commit order, and a version id names its place in the versions
	// table (see VersionKey).
	var nulls []*nullVersion
	if req.imp != nil && versioning == "" {
		m.ModTime = req.imp.ModTime
	}
	if req.newVersion && req.imp == nil && versioning == "" {
		// An unversioned bucket's new object gets its time here too,
		// under the lock and after the one it replaces: its
		// Last-Modified and its event's sequencer follow commit order
		// (the time newMeta gave it was taken before the lock, so two
		// concurrent writes could commit in the other order).
		t := wallclock.Now().UnixNano()
		if err == nil && cur.fi.ModTime >= t {
			t = cur.fi.ModTime + 1
		}
		m.ModTime = t
	}
	if versioning != "" {
		t := wallclock.Now().UnixNano()
		if err == nil && cur.fi.ModTime >= t {
			t = cur.fi.ModTime + 1
		}
		m.ModTime, m.VersionID = t, ""
		if req.imp != nil {
			m.ModTime, m.VersionID = req.imp.ModTime, req.imp.VersionID
		}
		if versioning == VersioningEnabled && req.imp == nil {
			m.VersionID = newVersionID(t)
		} else if versioning != VersioningEnabled && (req.imp == nil || req.imp.VersionID == "") {
			// A suspended bucket's write replaces the null version
			// wherever it is: current (dropped below) or noncurrent.
			nulls = e.findNullVersions(ctx, set, bucket, key)
			for _, n := range nulls {
				if n != nil {
					if lerr := e.checkRemovable(bucket, key, n.m, false); lerr != nil {
						return lerr
					}
				}
			}
		}
	}
	newIDs := m.DataIDs()
	versions := make([]*meta.Object, len(set.drives))
	moved := make([][]*meta.Object, len(set.drives)) // leftover pending versions moved in the main batch
	// committed[p] is the record this commit wrote on drive p: the
	// rollback and the settling below change it only while it is still
	// there (drive.Batch.Expect), as the commit itself changes only the
	// record it read. A writer whose cluster lock expired while it was
	// paused is thereby refused wherever a later writer got first.
	committed := make([][]byte, len(set.drives))
	wq := quorum.WriteQuorum(m.Erasure.DataShards, m.Erasure.ParityShards)
	// Once write quorum applied the batch, the commit stands; a lagging
	// drive still applying is left out of the settling below and healed
	// (its late batch holds the same version, and reads of the key leave
	// the drive out until it ends: indexWrites).
	commitLeft, commitLate := e.leftIndexWrites(set, okey)
	// The drives of one node commit in one call.
	errs := fanOutErr(&e.lag, set.drives, wq, grouped(ctx, set.drives, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		if res != nil && !res.ok(p) {
			return res.errs[p]
		}
		if rerr := cur.readErrs[p]; rerr != nil && !errors.Is(rerr, drive.ErrNotFound) && !errors.Is(rerr, meta.ErrCorrupt) {
			return rerr // what this drive holds is unknown: it cannot be replaced safely
		}
		dm := *m
		dm.Erasure.Index = m.Erasure.Distribution[p]
		dm.InlineData = nil
		versions[p] = &dm
		rec := &meta.Record{Versions: []*meta.Object{&dm}}
		old := readable[p]
		if old != nil && !old.SameVersion(&dm) {
			pv := *old
			pv.Flags = pv.Flags&^meta.FlagKeep | meta.FlagPrev
			if keepReplaced(versioning, old) {
				pv.Flags |= meta.FlagKeep
			}
			rec.Versions = append(rec.Versions, &pv)
		}
		b := &drive.Batch{}
		committed[p] = rec.Marshal()
		b.Expect(drive.TableObjects, okey, cur.raws[p])
		b.Put(drive.TableObjects, okey, committed[p])
		// A version an earlier commit left pending (FlagKeep, its
		// successor had quorum) becomes noncurrent now, since this record
		// no longer holds it.
		if r := cur.recs[p]; r != nil && !cur.isPrev(p) {
			for _, v := range r.Versions {
				if v.Flags&meta.FlagKeep != 0 && (old == nil || !v.SameVersion(old)) && !v.SameVersion(&dm) {
					putNoncurrent(b, bucket, key, v)
					moved[p] = append(moved[p], v)
				}
			}
		}
		if nulls != nil && nulls[p] != nil {
			b.Delete(drive.TableVersions, nulls[p].key)
			dropVersions(b, []*meta.Object{nulls[p].m}, nil)
			e.queueFrees(b, []*meta.Object{nulls[p].m}, nil)
		}
		for _, id := range newIDs {
			b.Put(drive.TableRefs, id, []byte(req.owner))
		}
		if res != nil && res.inline != nil {
			b.Put(drive.TableInline, drive.DataKey(m.DataID, 1), res.inline[p])
		}
		return apply(b)
	}), commitLeft, commitLate)
	if ok := countNil(errs); ok < wq {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			if errs[p] != nil {
				return nil
			}
			b := &drive.Batch{}
			b.Expect(drive.TableObjects, okey, committed[p])
			if raw := cur.raws[p]; raw != nil {
				b.Put(drive.TableObjects, okey, raw)
			} else {
				b.Delete(drive.TableObjects, okey)
			}
			held := map[string]bool{}
			if r := cur.recs[p]; r != nil {
				for _, v := range r.Versions {
					for _, id := range v.DataIDs() {
						held[id] = true
					}
				}
			}
			for _, id := range newIDs {
				switch {
				case held[id]:
				case req.priorOwner != "":
					b.Put(drive.TableRefs, id, []byte(req.priorOwner))
				default:
					b.Delete(drive.TableRefs, id)
				}
			}
			if res != nil && res.inline != nil {
				b.Delete(drive.TableInline, drive.DataKey(m.DataID, 1))
			}
			if nulls != nil && nulls[p] != nil {
				nulls[p].restore(b, bucket, key)
			}
			return d.Apply(context.Background(), b)
		})
		return quorumError("commit", errs, ok, wq)
	}
	keep := map[string]bool{}
	for _, id := range newIDs {
		keep[id] = true
	}
	settling := make([]drive.Drive, len(set.drives)) // the drives that took the commit
	took := 0
	for p, d := range set.drives {
		if errs[p] == nil {
			settling[p] = d
			took++
		}
	}
	// Settling is best effort (a lost batch is settled by the next commit
	// or a heal), so the answer does not wait for a lagging drive either;
	// except with extra changes, whose caller reads what extra noted.
	need := wq
	if req.extra != nil {
		need = took
	}
	settleLeft, settleLate := e.leftIndexWrites(set, okey)
	// One call per node here too, under a context that is not the
	// request's: settling goes on after the answer.
	fanOutErr(&e.lag, settling, need, grouped(context.Background(), settling, func(p int, d drive.Drive, apply func(*drive.Batch) error) error {
		var replaced []*meta.Object
		b := &drive.Batch{Lazy: req.extra == nil}
		b.Expect(drive.TableObjects, okey, committed[p])
		others := false // the record holds more than the new version
		if r := cur.recs[p]; r != nil {
			for _, v := range r.Versions {
				if v.SameVersion(versions[p]) {
					continue
				}
				others = true
				switch {
				case slices.Contains(moved[p], v):
				case readable[p] != nil && v.SameVersion(readable[p]) && keepReplaced(versioning, readable[p]):
					putNoncurrent(b, bucket, key, v)
				default:
					replaced = append(replaced, v)
				}
			}
		}
		if others {
			b.Put(drive.TableObjects, okey, (&meta.Record{Versions: []*meta.Object{versions[p]}}).Marshal())
		}
		if req.extra != nil {
			req.extra(p, b)
		}
		if nulls != nil && nulls[p] != nil {
			// Its index entries went with the main batch; its files go now.
			e.freeData(d, []*meta.Object{nulls[p].m}, nil)
		}
		if err := e.applyDroppingWith(apply, d, b, replaced, keep); err != nil {
			e.jobs.QueueHeal(bucket, key)
			return err
		}
		return nil
	}), settleLeft, settleLate)
	if countNil(errs) < len(errs) {
		e.jobs.QueueHeal(bucket, key)
	}
	return nil
}

// keepReplaced reports whether a version that a new one replaces as
// current stays as a noncurrent version: always in an Enabled bucket;
// in a Suspended one unless it is the null version (which the new null
// version replaces); never in an unversioned bucket or in an in-place
// update (versioning "").
func keepReplaced(versioning string, old *meta.Object) bool {
	switch versioning {
	case VersioningEnabled:
		return true
	case VersioningSuspended:
		return old.VersionID != ""
	}
	return false
}

// putNoncurrent adds to b the move of v into the versions table.
func putNoncurrent(b *drive.Batch, bucket, key string, v *meta.Object) {
	nv := *v
	nv.Flags &^= meta.FlagsPending
	nv.InlineData = nil
	b.Put(drive.TableVersions, drive.VersionKey(bucket, key, nv.ModTime, nv.VersionID), nv.Marshal())
}

// objectOwner and uploadOwner are the TableRefs values naming what owns a
// data id: an object, or a multipart upload still in progress.
func objectOwner(bucket, key string) string { return "o:" + bucket + "/" + key }
func uploadOwner(uploadID string) string    { return "u:" + uploadID }

// applyDropping applies b on d together with the removal of the refs and
// inline data of versions (except data ids in keep), and once that batch
// is in, frees the versions' shard files. The order is the invariant: no
// index entry may point at a shard file after it is gone. An empty batch
// is not sent.
func (e *Engine) applyDropping(ctx context.Context, d drive.Drive, b *drive.Batch, versions []*meta.Object, keep map[string]bool) error {
	return e.applyDroppingWith(func(b *drive.Batch) error { return d.Apply(ctx, b) }, d, b, versions, keep)
}

// applyDroppingWith is applyDropping with the batch applied by apply
// (a node's group call, applyGroups).
func (e *Engine) applyDroppingWith(apply func(*drive.Batch) error, d drive.Drive, b *drive.Batch, versions []*meta.Object, keep map[string]bool) error {
	dropVersions(b, versions, keep)
	e.queueFrees(b, versions, keep)
	if b.Len() == 0 {
		return nil
	}
	if err := apply(b); err != nil {
		return err
	}
	e.freeData(d, versions, keep)
	return nil
}

// dropVersions adds to b the removal of the refs and inline data of
// versions, except data ids in keep.
func dropVersions(b *drive.Batch, versions []*meta.Object, keep map[string]bool) {
	for _, v := range versions {
		for _, id := range v.DataIDs() {
			if !keep[id] {
				b.Delete(drive.TableRefs, id)
			}
		}
		if v.Inline && !keep[v.DataID] {
			b.Delete(drive.TableInline, drive.DataKey(v.DataID, 1))
		}
	}
}

// shardRefs lists the shard files of version m on a drive.
func shardRefs(m *meta.Object) []drive.ShardRef {
	if m.Inline {
		return nil
	}
	refs := make([]drive.ShardRef, 0, len(m.Parts))
	for i, p := range m.Parts {
		refs = append(refs, drive.ShardRef{ID: m.PartDataID(i), Part: p.Number})
	}
	return refs
}

// freeData removes the shard files of versions from d, except data ids in
// keep, once no reader pins them.
func (e *Engine) freeData(d drive.Drive, versions []*meta.Object, keep map[string]bool) {
	for id, refs := range freedRefs(versions, keep) {
		e.pins.free(id, func() { e.deleteFreed(d, id, refs, 0) })
	}
}

// deleteFreed removes the shard files of a freed data id from d. A drive
// offline when the free comes due (ErrDriveFaulty: I/O errors, or an
// index stopped on a full disk, which only freeing space brings back) is
// tried again every freeRetry, up to freeRetries times, while the engine
// runs; what is left then is an orphan for the scanner (OrphanGrace).
// Before, such a free was given up at once (finding H1 in
// docs/consistency.md: a full drive's replaced data waited an hour).
func (e *Engine) deleteFreed(d drive.Drive, id string, refs []drive.ShardRef, attempt int) {
	err := d.DeleteShards(context.Background(), refs)
	if err == nil {
		return
	}
	if errors.Is(err, drive.ErrDriveFaulty) && attempt < freeRetries {
		e.pins.later(e.freeRetry, func() { e.deleteFreed(d, id, refs, attempt+1) })
		return
	}
	e.log.Warn("cannot remove replaced shard files; the scanner will", "drive", d.String(), "id", id, "err", err)
}

// freeRetries bounds the attempts of deleteFreed on an offline drive:
// with DefaultFreeRetry, half an hour.
const freeRetries = 30

// DefaultFreeRetry is how long deleteFreed waits before it tries an
// offline drive again.
const DefaultFreeRetry = time.Minute

func objectInfo(bucket, key string, m *meta.Object) ObjectInfo {
	info := ObjectInfo{
		Bucket: bucket, Key: key, Size: m.Size, ETag: m.ETag, ModTime: time.Unix(0, m.ModTime).UTC(),
		ContentType: m.ContentType, StorageClass: m.StorageClass, Owner: m.Owner, ACL: m.ACL,
		Headers: m.Headers, UserMeta: m.UserMeta, Tags: m.Tags,
		Checksum:   Checksum{Algorithm: m.ChecksumAlgo, Value: m.ChecksumVal, Type: m.ChecksumType},
		DataShards: m.Erasure.DataShards, ParityShards: m.Erasure.ParityShards,
		VersionID: m.VersionID, DeleteMarker: m.IsDeleteMarker(), Lock: lockOf(m),
		Cipher: m.Cipher, Sealed: m.Sealed,
	}
	if len(m.Parts) > 1 || (len(m.Parts) == 1 && isMultipartETag(m.ETag)) {
		for _, p := range m.Parts {
			info.Parts = append(info.Parts, ObjectPart{Number: p.Number, Size: p.Size, ETag: p.ETag, Checksum: p.Checksum})
		}
	}
	return info
}

func isMultipartETag(etag string) bool { return bytes.IndexByte([]byte(etag), '-') >= 0 }

// observe reports a PUT's phases to the configured observer.
func (e *Engine) observe(p PutPhases) {
	if e.cfg.PhaseObserver != nil {
		e.cfg.PhaseObserver(p)
	}
}
