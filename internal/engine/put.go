package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
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
	tmpID string
	// file is the shard file's path under tmp/<tmpID>/ on every drive.
	file string
	// inlineOK allows keeping small data in the metadata file instead.
	inlineOK bool
	// created records that shard files were opened under tmp.
	created bool
}

func (p *writePlan) tmpPath(rel string) string { return drive.TmpDir + "/" + p.tmpID + "/" + rel }

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
			for _, s := range sinks {
				if s != nil {
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
	blk := getBlock()
	t0 := time.Now()
	got, last, err := readBlock(body, blk.Buf[:c.BlockSize()], size, 0)
	ph.Receive += time.Since(t0)
	if err != nil {
		return nil, err
	}
	inline := last && plan.inlineOK && e.inlineLimit > 0 &&
		int64(c.ShardSize(got)+e.bitrot.Size()) <= e.inlineLimit
	if err := e.openSinks(ctx, plan, inline, e.bitrot.Size()+c.ShardSize(got), sinks, res.errs); err != nil {
		return nil, err
	}
	started = true
	writerTimes := make([][2]time.Duration, n)
	for p := range sinks {
		chans[p] = make(chan shardJob, blocksInFlight)
		writers.Add(1)
		go func() {
			defer writers.Done()
			e.shardWriter(sinks[p], plan.dist[p]-1, chans[p], &res.errs[p], &writerTimes[p])
		}()
	}
	var total int64
	for {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if got > 0 {
			pb := &pooledBlock{blk: blk, free: free}
			pb.refs.Store(int32(n + 1))
			stream.Write(blk.Buf[:got], pb.release)
			t0 := time.Now()
			err := c.Encode(blk, got)
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
		}
		if last {
			break
		}
		if size < 0 && total > MaxPutSize {
			return nil, fmt.Errorf("%w: more than %d bytes in one upload", ErrEntityTooLarge, int64(MaxPutSize))
		}
		blk = getBlock()
		t0 := time.Now()
		got, last, err = readBlock(body, blk.Buf[:c.BlockSize()], size, total)
		ph.Receive += time.Since(t0)
		if err != nil {
			free <- blk
			return nil, err
		}
	}
	for _, ch := range chans {
		close(ch)
	}
	started = false
	t0 = time.Now()
	writers.Wait()
	for _, wt := range writerTimes {
		ph.Bitrot += wt[0]
		ph.Write += wt[1]
	}
	// Close (fsync) every shard file in parallel.
	var wg sync.WaitGroup
	for p, s := range sinks {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res.errs[p] != nil {
				s.Abort()
				return
			}
			if err := s.Close(); err != nil {
				res.errs[p] = err
			}
		}()
	}
	wg.Wait()
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
func (e *Engine) shardWriter(s shardSink, shard int, jobs <-chan shardJob, errp *error, times *[2]time.Duration) {
	var sum [32]byte
	var bufs [2][]byte
	for j := range jobs {
		if *errp == nil {
			data := j.pb.blk.Shards[shard]
			t0 := time.Now()
			bufs[0] = e.bitrot.Sum(sum[:], data)
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
	var wg sync.WaitGroup
	for p, d := range plan.set.drives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := d.CreateFile(ctx, drive.SystemVolume, plan.tmpPath(plan.file))
			if err != nil {
				errs[p] = err
				return
			}
			sinks[p] = w
		}()
	}
	wg.Wait()
	data := plan.coder.DataShards()
	if ok := countNil(errs); ok < writeQuorum(data, plan.coder.ParityShards()) {
		for _, s := range sinks {
			if s != nil {
				s.Abort()
			}
		}
		for p := range sinks {
			sinks[p] = nil
		}
		return quorumError("open shard files", errs, ok, writeQuorum(data, plan.coder.ParityShards()))
	}
	return nil
}

// cleanupTmp removes a write's tmp directory from every drive. After a
// commit it is empty (its contents were renamed into place), so a plain
// remove does; only failed writes need the recursive delete. Inline
// writes never created one.
func (e *Engine) cleanupTmp(plan *writePlan) {
	if !plan.created {
		return
	}
	dir := drive.TmpDir + "/" + plan.tmpID
	forEachDrive(plan.set.drives, func(i int, d drive.Drive) error {
		ctx := context.Background()
		err := d.Delete(ctx, drive.SystemVolume, dir, false)
		if err != nil && !errors.Is(err, drive.ErrFileNotFound) {
			err = d.Delete(ctx, drive.SystemVolume, dir, true)
		}
		return err
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
			return "", fmt.Errorf("%w: %s sent %s, body has %s", ErrChecksumMismatch, algo, want, checksum)
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
	return nil
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
	if _, err := e.BucketInfo(ctx, bucket); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkObjectName(key); err != nil {
		return ObjectInfo{}, err
	}
	if size > MaxPutSize {
		return ObjectInfo{}, fmt.Errorf("%w: %d bytes in one PUT, at most %d", ErrEntityTooLarge, size, int64(MaxPutSize))
	}
	if err := checkPutOptions(&opts); err != nil {
		return ObjectInfo{}, err
	}
	set := e.setFor(bucket, key)
	parity := set.parityFor(opts.StorageClass)
	coder, err := e.coders.Get(len(set.drives)-parity, parity, e.blockSize)
	if err != nil {
		return ObjectInfo{}, err
	}
	dataDir := dataDirPrefix + uuid.NewString()
	plan := &writePlan{set: set, coder: coder, dist: e.distribution(key, len(set.drives)),
		tmpID: uuid.NewString(), file: dataDir + "/part.1", inlineOK: true}
	defer e.cleanupTmp(plan)
	res, err := e.writeShards(ctx, plan, body, size, hashing.Request{Size: size, ETag: true, MD5: opts.ContentMD5 != nil, Checksum: opts.ChecksumAlgorithm})
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	checksum, err := verifyDigests(res.digests, opts.ContentMD5, opts.ChecksumAlgorithm, opts.ExpectedChecksum)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	etag := res.digests.ETag
	m := e.newMeta(opts, res.size, etag, coder, plan.dist)
	m.Parts = []meta.Part{{Number: 1, Size: res.size, ETag: etag, Checksum: checksum}}
	if opts.ChecksumAlgorithm != "" {
		m.ChecksumAlgo, m.ChecksumVal, m.ChecksumType = canonicalAlgo(opts.ChecksumAlgorithm), checksum, "FULL_OBJECT"
	}
	if res.inline == nil {
		m.DataDir = dataDir
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	t0 := time.Now()
	if err := e.commitObject(ctx, set, bucket, key, m, plan, res, opts); err != nil {
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
	return &meta.Object{
		Size: size, ModTime: time.Now().UnixNano(), ETag: etag,
		ContentType: opts.ContentType, StorageClass: sc, Owner: opts.Owner, ACL: acl,
		Headers: opts.Headers, UserMeta: opts.UserMeta,
		Erasure: meta.Erasure{DataShards: coder.DataShards(), ParityShards: coder.ParityShards(),
			BlockSize: coder.BlockSize(), Distribution: dist, Bitrot: uint8(e.bitrot)},
	}
}

// commitObject makes a written object visible: under the object lock it
// checks preconditions, then on every drive whose shard is complete moves
// the data directory into place and replaces the metadata file. Fewer than
// write quorum commits roll back to the previous version.
func (e *Engine) commitObject(ctx context.Context, set *erasureSet, bucket, key string, m *meta.Object, plan *writePlan, res *writeResult, opts PutOptions) error {
	unlock := e.locks.Lock(lockName(bucket, key))
	defer unlock()
	var srcDir string
	if m.DataDir != "" {
		srcDir = plan.tmpPath(m.DataDir)
	}
	return e.commitMeta(ctx, set, bucket, key, m, srcDir, plan.dist, res, opts)
}

// checkPutConditions applies If-None-Match: * and If-Match to the object
// as read under the commit's lock (readErr is readObject's error).
func checkPutConditions(cur *objectState, readErr error, opts PutOptions) error {
	if !opts.IfNoneMatchAny && opts.IfMatch == "" {
		return nil
	}
	exists := readErr == nil
	if readErr != nil && !errors.Is(readErr, ErrObjectNotFound) {
		return readErr
	}
	if opts.IfNoneMatchAny && exists {
		return fmt.Errorf("%w: object exists and If-None-Match is *", ErrPreconditionFailed)
	}
	if opts.IfMatch != "" && (!exists || !etagMatches(opts.IfMatch, cur.fi.ETag)) {
		return fmt.Errorf("%w: If-Match %s", ErrPreconditionFailed, opts.IfMatch)
	}
	return nil
}

// commitMeta writes per-drive metadata (moving srcDir, a tmp data
// directory, into place first when set) with write quorum, rolling back on
// failure and removing the replaced version's data on success. res may be
// nil when every drive is to be written. The caller holds the object's
// write lock; cond's preconditions are checked against the same read the
// commit uses.
//
// While the commit is in flight every drive keeps the record of the
// version readers see now as <meta>.prev (readObject counts it when no
// version has quorum), so a crash mid-commit leaves that version readable.
// A drive's current record of that version is renamed aside (no copy); a
// drive whose readable record already is its previous one keeps it.
func (e *Engine) commitMeta(ctx context.Context, set *erasureSet, bucket, key string, m *meta.Object, srcDir string, dist []int, res *writeResult, cond PutOptions) error {
	n := len(set.drives)
	metaPath, prevPath := objectMetaPath(key), prevMetaPath(key)
	dir := objectDir(key)
	cur, err := e.readObject(ctx, set, bucket, key)
	if err := checkPutConditions(cur, err, cond); err != nil {
		return err
	}
	if err != nil {
		cur = nil // nothing readable to keep as the previous version
	}
	renamed := make([]bool, n)    // current record moved to prev
	staleRaw := make([][]byte, n) // a stale current record, for rollback
	replaced := make([]map[string]bool, n)
	errs := forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if res != nil && !res.ok(p) {
			return res.errs[p]
		}
		dm := *m
		dm.Erasure.Index = dist[p]
		if res != nil && res.inline != nil {
			dm.Inline = res.inline[p]
		}
		replaced[p] = map[string]bool{}
		var readable *meta.Object
		if cur != nil {
			readable = cur.metas[p]
		}
		switch {
		case readable != nil && !cur.isPrev(p):
			if err := d.Rename(ctx, bucket, metaPath, bucket, prevPath); err != nil {
				return err
			}
			renamed[p] = true
			replaced[p][readable.DataDir] = true
		default:
			// No readable current record here: keep what the drive has (a
			// stale version, or nothing) for rollback and cleanup. A drive
			// that does not hold the readable version's shard gets no
			// previous record: it must not count towards that version.
			raw, err := d.ReadFile(ctx, bucket, metaPath)
			if err != nil && !errors.Is(err, drive.ErrFileNotFound) {
				return err
			}
			if err == nil {
				staleRaw[p] = raw
				if old, err := meta.Unmarshal(raw); err == nil {
					replaced[p][old.DataDir] = true
				}
			}
			if readable != nil {
				replaced[p][readable.DataDir] = true // already the prev record
			}
		}
		if srcDir != "" {
			if err := d.Rename(ctx, drive.SystemVolume, srcDir, bucket, dir+"/"+m.DataDir); err != nil {
				return err
			}
		}
		if err := d.WriteFile(ctx, bucket, metaPath, dm.Marshal()); err != nil {
			if srcDir != "" {
				d.Delete(ctx, bucket, dir+"/"+m.DataDir, true)
			}
			return err
		}
		return nil
	})
	if ok := countNil(errs); ok < writeQuorum(m.Erasure.DataShards, m.Erasure.ParityShards) {
		forEachDrive(set.drives, func(p int, d drive.Drive) error {
			switch {
			case renamed[p]:
				d.Rename(ctx, bucket, prevPath, bucket, metaPath)
			case errs[p] != nil:
				return nil
			case staleRaw[p] != nil:
				d.WriteFile(ctx, bucket, metaPath, staleRaw[p])
			default:
				d.Delete(ctx, bucket, metaPath, false)
			}
			if errs[p] == nil && m.DataDir != "" && !replaced[p][m.DataDir] {
				d.Delete(ctx, bucket, dir+"/"+m.DataDir, true)
			}
			return nil
		})
		return quorumError("commit", errs, ok, writeQuorum(m.Erasure.DataShards, m.Erasure.ParityShards))
	}
	forEachDrive(set.drives, func(p int, d drive.Drive) error {
		if errs[p] != nil || len(replaced[p]) == 0 {
			return nil
		}
		// The previous record goes first: it must never outlive the data
		// directory it points to.
		d.Delete(ctx, bucket, prevPath, false)
		for dd := range replaced[p] {
			if dd != "" && dd != m.DataDir {
				d.Delete(ctx, bucket, dir+"/"+dd, true)
			}
		}
		return nil
	})
	if countNil(errs) < n {
		e.heal.add(bucket, key)
	}
	return nil
}

func objectInfo(bucket, key string, m *meta.Object) ObjectInfo {
	info := ObjectInfo{
		Bucket: bucket, Key: key, Size: m.Size, ETag: m.ETag, ModTime: time.Unix(0, m.ModTime).UTC(),
		ContentType: m.ContentType, StorageClass: m.StorageClass, Owner: m.Owner, ACL: m.ACL,
		Headers: m.Headers, UserMeta: m.UserMeta,
		Checksum:   Checksum{Algorithm: m.ChecksumAlgo, Value: m.ChecksumVal, Type: m.ChecksumType},
		DataShards: m.Erasure.DataShards, ParityShards: m.Erasure.ParityShards,
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
