package migrate

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/klauspost/compress/s2"
	"github.com/shardstore/shardstore/internal/bitrot"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/durable"
	"github.com/shardstore/shardstore/internal/erasure"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/minioformat"
	"github.com/shardstore/shardstore/internal/sse"
)

// Versions adopted by copy. shardstore has no compression, so a version
// MinIO stored S2-compressed (MINIO_COMPRESSION_ENABLE=on: the
// x-minio-internal-compression metadata says klauspost/compress/s2) cannot
// be linked: its data is read back instead (every drive's shard stream,
// HighwayHash-checked, Reed-Solomon decoded where a shard is missing or
// damaged: minioformat.DecodePart), decompressed with
// github.com/klauspost/compress/s2 (the library MinIO compresses with; it
// reads the S2 stream format, whose framing and CRCs it checks),
// checked against the version's size and ETag (each part's MD5), and
// erasure-coded afresh (the version's own M+N, shardstore's block size
// and bitrot algorithm) into new shard files under a data id derived
// from MinIO's (so a resumed run writes the same names). The version keeps
// its id, time, ETag, parts, metadata and checksums, and its records go
// into the key's batch with the linked ones: a key is still adopted whole
// or not at all. Encrypted versions stay refused: their keys are MinIO's
// KMS's or the client's.

// minioS2 is the only compression MinIO writes.
const minioS2 = "klauspost/compress/s2"

// copyRefusal says why a compressed version cannot be copied, or "".
func copyRefusal(o *minioformat.Object) string {
	if !o.Compressed() {
		return ""
	}
	for k, v := range o.MetaSys {
		if equalFold(k, minioformat.MetaCompression) && string(v) != minioS2 {
			return "compressed with " + string(v)
		}
	}
	if _, err := o.ActualSize(); err != nil {
		return "compressed: " + err.Error()
	}
	for _, p := range o.Parts {
		if p.ActualSize < 0 {
			return fmt.Sprintf("compressed part %d of unknown size", p.Number)
		}
	}
	return ""
}

func equalFold(a, b string) bool { return len(a) == len(b) && bytes.EqualFold([]byte(a), []byte(b)) }

// copiedVersion is a version whose data was written afresh: its record
// and, when it is inline, each drive's shard stream.
type copiedVersion struct {
	m      *meta.Object
	inline [][]byte // by drive position
	// partMD5 are the parts' MD5 sums, one after the other.
	partMD5 []byte
}

// forDrive is drive p's record of the version.
func (c *copiedVersion) forDrive(p int) *meta.Object {
	m := *c.m
	if m.Flags&meta.FlagDeleteMarker != 0 {
		return &m // a delete marker moved from another pool: no data
	}
	m.Erasure.Distribution = append([]int(nil), c.m.Erasure.Distribution...)
	m.Erasure.Index = m.Erasure.Distribution[p]
	if m.Inline {
		m.InlineData = c.inline[p]
	}
	return &m
}

// errNotCopyable is wrapped by what makes a version fail its copy in a
// way that refuses the key rather than stopping the adoption.
var errNotCopyable = errors.New("not copyable")

// copyVersion reads, decompresses, verifies and rewrites the data of the
// version c holds (base: its converted record), for every drive of the
// key's erasure set (c.copies are by position in it): the shards are
// read from that set's drives and the new ones written to them. An error
// wrapping errNotCopyable refuses the key; others stop the run.
func (a *adopter) copyVersion(set int, bucket, rel string, c *candidate, base *meta.Object) (*copiedVersion, error) {
	o := c.ver.Object
	return a.copyData(a.setPaths(set), a.setPaths(set), bucket, rel, c, base, o.DataBlocks, o.ParityBlocks, base.Erasure.Distribution,
		"minio-copy:"+a.format.DeploymentID+"/"+bucket+"/"+rel+"/"+c.ver.ID()+"/"+o.DataDirString())
}

// copyFromPool copies the data of version c, which pool src holds, into
// this pool's set (an object whose versions MinIO spread over pools:
// pools.go): read from src's drives of the key's set there, written
// erasure-coded with this pool's geometry (its default parity, shards in
// drive order) to the drives of set here, under a data id derived from
// the version's (a resumed run writes the same names).
func (a *adopter) copyFromPool(src *adopter, set int, bucket, rel string, c *candidate, base *meta.Object) (*copiedVersion, error) {
	o := c.ver.Object
	if a.cl != nil && !o.Inline() {
		// Its shards are on every node's drives; the staged copies hold
		// MinIO's metadata only (inline data included).
		return nil, fmt.Errorf("%w: its data is in part files on every node's drives: copying it between pools is not supported yet for a node's share of a cluster (copy the key with from-s3)", errNotCopyable)
	}
	n := a.setSize
	parity := defaultParity(n)
	dist := make([]int, n)
	for i := range dist {
		dist[i] = i + 1
	}
	return a.copyData(src.setPaths(src.setOf(bucket, rel)), a.setPaths(set), bucket, rel, c, base, n-parity, parity, dist,
		"minio-pool-copy:"+a.format.DeploymentID+"/"+a.poolID+"/"+bucket+"/"+rel+"/"+c.ver.ID()+"/"+o.DataDirString())
}

// copyData reads version c's shards from srcPaths (by position in the
// version's own set), decodes (and decompresses) its data, checks it,
// and writes it erasure-coded data+parity with distribution dist to
// dstPaths, under a data id derived from seed.
func (a *adopter) copyData(srcPaths, dstPaths []string, bucket, rel string, c *candidate, base *meta.Object, data, parity int, dist []int, seed string) (*copiedVersion, error) {
	o := c.ver.Object
	n := len(dstPaths)
	paths := srcPaths
	var src *sseSource
	var actual int64
	var err error
	if o.Encrypted() {
		if src, err = a.openSSE(bucket, objectKey(rel), o); err != nil {
			return nil, err
		}
		actual, err = o.PlainSize()
	} else {
		actual, err = o.ActualSize()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotCopyable, err)
	}
	m := *base
	m.Size = actual
	m.DataID = uuid.NewSHA1(uuid.NameSpaceURL, []byte(seed)).String()
	m.Parts = append([]meta.Part(nil), base.Parts...)
	blockSize := erasure.DefaultBlockSize
	var dst *sseTarget
	if src != nil {
		if dst, err = a.reseal(bucket, objectKey(rel), src, &m); err != nil {
			return nil, err
		}
		blockSize = sse.EncryptedBlockSize(sse.PlainBlockSize(erasure.DefaultBlockSize))
		for i := range m.Parts {
			// Each part its own stream key (sse.PartKey of its data id).
			m.Parts[i].DataID = uuid.NewSHA1(uuid.NameSpaceURL, []byte(seed+"/part/"+strconv.Itoa(m.Parts[i].Number))).String()
		}
	}
	coder, err := erasure.New(data, parity, blockSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotCopyable, err)
	}
	m.Erasure = meta.Erasure{DataShards: data, ParityShards: parity, BlockSize: blockSize,
		Distribution: append([]int(nil), dist...), Bitrot: uint8(bitrot.Default)}
	algo := bitrot.Default
	stored := actual
	if dst != nil {
		stored = sse.EncryptedSize(actual)
	}
	inline := len(o.Parts) == 1 && coder.ShardFileSize(stored)+coder.Blocks(stored)*int64(algo.Size()) <= a.opts.InlineLimit
	if a.cl != nil && !inline {
		// A node's share of a cluster writes only its own drives' shards;
		// shard files for the others' drives would land in their staged
		// copies. Every node decides this alike.
		return nil, fmt.Errorf("%w: its copy would not fit in the records (%d bytes): copying a version between pools into shard files is not supported yet for a node's share of a cluster", errNotCopyable, actual)
	}
	m.Inline, m.InlineData = inline, nil
	out := &copiedVersion{m: &m}
	if inline {
		out.inline = make([][]byte, n)
	}
	var total int64
	for i, part := range o.Parts {
		shards := make([]io.Reader, o.DataBlocks+o.ParityBlocks)
		var files []*os.File
		for p, dv := range c.copies {
			k := int(o.Distribution[p]) - 1
			if dv.v.Object.Inline() {
				if data := dv.meta.InlineData(c.ver.ID()); data != nil {
					shards[k] = bytes.NewReader(data)
				}
				continue
			}
			f, err := os.Open(filepath.Join(paths[p], bucket, filepath.FromSlash(rel), o.DataDirString(), "part."+strconv.Itoa(part.Number)))
			if err != nil {
				continue // Reed-Solomon rebuilds it
			}
			files = append(files, f)
			shards[k] = f
		}
		size, written, err := a.copyPart(dstPaths, o, i, shards, coder, algo, &m, out, src, dst)
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			return nil, err
		}
		m.Parts[i].Size = size
		total += size
		a.add(func(r *Report) { r.CopiedShardBytes += written })
	}
	if total != actual {
		return nil, fmt.Errorf("%w: parts hold %d bytes, the version %d", errNotCopyable, total, actual)
	}
	if etag := o.ETag(); strings.Contains(etag, "-") && src == nil {
		// A multipart ETag: the MD5 of the parts' MD5s, "-", the count.
		// (An encrypted one is of what the client was answered for each
		// part, which MinIO does not keep: its DARE tags authenticated
		// every byte instead.)
		s := md5.Sum(out.partMD5)
		if got := hex.EncodeToString(s[:]) + "-" + strconv.Itoa(len(o.Parts)); got != etag {
			return nil, fmt.Errorf("%w: the parts' MD5s make the ETag %s, the version says %s", errNotCopyable, got, etag)
		}
	}
	a.add(func(r *Report) {
		r.CopiedVersions++
		r.CopiedBytes += total
		if src != nil {
			r.Decrypted++
		}
		if o.Compressed() {
			r.Decompressed++
		}
	})
	return out, nil
}

// copyPart decodes part i, decompresses it, checks it and writes its new
// shards: files on every drive of the set (paths, by position), or into
// out.inline. It returns the plain size and the bytes written.
func (a *adopter) copyPart(paths []string, o *minioformat.Object, i int, shards []io.Reader, coder *erasure.Coder, algo bitrot.Algorithm, m *meta.Object, out *copiedVersion, src *sseSource, dst *sseTarget) (int64, int64, error) {
	part := o.Parts[i]
	n := len(paths)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(minioformat.DecodePart(pw, o, i, shards)) }()
	defer pr.Close()
	var zr io.Reader = pr
	switch {
	case src != nil:
		zr = src.partReader(pr, o, i)
	case o.Compressed():
		zr = s2.NewReader(pr)
	}
	var enc *sse.Stream
	var seq uint64
	var plainBuf []byte
	readSize := coder.BlockSize()
	if dst != nil {
		var err error
		if enc, err = sse.NewStream(dst.c, sse.PartKey(dst.key, m.PartDataID(i))); err != nil {
			return 0, 0, fmt.Errorf("%w: %v", errNotCopyable, err)
		}
		readSize = sse.PlainOfBlock(coder.BlockSize())
		plainBuf = make([]byte, readSize)
	}
	sum := md5.New()
	plain := io.TeeReader(zr, sum)
	// Each drive's shard stream: a temporary file beside its final name,
	// or a buffer for an inline version.
	sinks := make([]io.Writer, n)
	var tmps []*os.File
	var finals []string
	cleanup := func() {
		for _, f := range tmps {
			f.Close()
			os.Remove(f.Name())
		}
	}
	for p := range n {
		switch {
		case out.inline != nil:
			out.inline[p] = []byte{}
			sinks[p] = (*sliceWriter)(&out.inline[p])
		case a.opts.DryRun:
			sinks[p] = io.Discard
		default:
			dst := drive.ShardPath(paths[p], drive.ShardRef{ID: m.PartDataID(i), Part: part.Number})
			f, err := os.Create(dst + ".migrate-tmp")
			if err != nil {
				cleanup()
				return 0, 0, fmt.Errorf("migrate: %w", err)
			}
			tmps = append(tmps, f)
			finals = append(finals, dst)
			sinks[p] = f
		}
	}
	blk := coder.GetBlock()
	defer coder.PutBlock(blk)
	var size, written int64
	var sbuf [32]byte
	for {
		buf := blk.Buf[:coder.BlockSize()]
		if enc != nil {
			buf = plainBuf
		}
		got, err := io.ReadFull(plain, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			cleanup()
			return 0, 0, fmt.Errorf("%w: part %d: %v", errNotCopyable, part.Number, err)
		}
		if got == 0 {
			break
		}
		size += int64(got)
		coded := got
		if enc != nil {
			// The part's plaintext size is known (checked below): the
			// block that reaches it seals the stream's final package.
			last := size >= part.ActualSize
			sealed := enc.SealBlock(blk.Buf[:0], buf[:got], seq, last)
			seq += uint64(sse.Packages(int64(got)))
			coded = len(sealed)
		}
		if err := coder.Encode(blk, coded); err != nil {
			cleanup()
			return 0, 0, err
		}
		for p := range n {
			shard := blk.Shards[m.Erasure.Distribution[p]-1]
			s := algo.Sum(sbuf[:], shard)
			_, werr := sinks[p].Write(s)
			if werr == nil {
				_, werr = sinks[p].Write(shard)
			}
			if werr != nil {
				cleanup()
				return 0, 0, fmt.Errorf("migrate: %w", werr)
			}
			written += int64(len(s) + len(shard))
		}
		if got < readSize {
			break
		}
	}
	if size != part.ActualSize {
		cleanup()
		return 0, 0, fmt.Errorf("%w: part %d decompresses to %d bytes, not %d", errNotCopyable, part.Number, size, part.ActualSize)
	}
	want := part.ETag
	if want == "" && len(o.Parts) == 1 {
		want = o.ETag()
	}
	md := sum.Sum(nil)
	if src != nil {
		// An SSE-S3 single PUT's sealed ETag is the MD5 of its
		// plaintext. MinIO makes an SSE-KMS one a random UUID unless the
		// client sent Content-MD5, and keeps no part ETags of a multipart
		// version: those are not checked (the DARE tags authenticated
		// every package).
		want = ""
		if src.s.Kind == "SSE-S3" {
			want = src.plainMD5
		}
	}
	out.partMD5 = append(out.partMD5, md...)
	if strings.Contains(want, "-") {
		want = "" // a multipart ETag: checked over every part's MD5 (copyData)
	}
	if got := hex.EncodeToString(md); want != "" && got != want {
		cleanup()
		return 0, 0, fmt.Errorf("%w: part %d has MD5 %s, its ETag says %s", errNotCopyable, part.Number, got, want)
	}
	for j, f := range tmps {
		a.step()
		var err error
		if !a.opts.NoSync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), finals[j])
		}
		if err == nil && !a.opts.NoSync {
			err = durable.SyncDir(filepath.Dir(finals[j]))
		}
		if err != nil {
			for _, g := range tmps[j:] {
				g.Close()
				os.Remove(g.Name())
			}
			return 0, 0, fmt.Errorf("migrate: %w", err)
		}
	}
	return size, written, nil
}

type sliceWriter []byte

func (w *sliceWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// clusterMoveRefusal says why a node's share of a cluster cannot move
// version o of another pool into this one ("": it can): its data must be
// inline in MinIO's xl.meta (the staged copies of the other nodes'
// drives hold it; part files are on every node's drives), plain (the
// cluster adoption copies no compressed or encrypted version), and its
// copy must fit inline in this pool's records, so that every node
// computes the same shards and writes its own drives' only.
func (a *adopter) clusterMoveRefusal(o *minioformat.Object) string {
	const how = " for a node's share of a cluster (copy the key with from-s3)"
	switch {
	case o.Encrypted():
		return "encrypted by MinIO: moving it between pools is not supported yet" + how
	case o.Compressed():
		return "compressed by MinIO: moving it between pools is not supported yet" + how
	case !o.Inline():
		return "its data is in part files on every node's drives: moving it between pools is not supported yet" + how
	}
	size, err := o.ActualSize()
	if err != nil {
		return err.Error()
	}
	n := a.setSize
	parity := defaultParity(n)
	coder, err := erasure.New(n-parity, parity, erasure.DefaultBlockSize)
	if err != nil {
		return err.Error()
	}
	if len(o.Parts) != 1 || coder.ShardFileSize(size)+coder.Blocks(size)*int64(bitrot.Default.Size()) > a.opts.InlineLimit {
		return fmt.Sprintf("its copy (%d bytes) would not fit in this pool's records: moving it between pools is not supported yet", size) + how
	}
	return ""
}
