package migrate

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/hashing"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/minioformat"
)

// Unfinished multipart uploads. MinIO keeps each under
// .minio.sys/multipart/<sha256("bucket/key")>/<upload dir>/ on every
// drive (minioformat.ParseUploadID); the key itself is stored nowhere,
// and MinIO forgets it when it stops (ListMultipartUploads without a
// prefix answers from memory). An upload is adopted when its key is
// known: a key the adoption found in the bucket (an upload replacing an
// object), or one listed in Options.UploadKeys (what `mc ls --incomplete`
// showed before MinIO was stopped). It keeps MinIO's upload id, which the
// engine accepts beside its own (engine.IsMinIOUploadID), so clients in
// the middle of an upload carry on: ListMultipartUploads and ListParts
// show it, more parts can be uploaded and it can be completed or
// aborted. Its part files are hard-linked like object parts, each under
// a data id of its own (derived from the upload and the part, so a
// resumed run links the same names), and its records (engine.
// ImportUploadBatch) keep MinIO's bitrot algorithm, with which the parts
// uploaded later are written too. Uploads of an unknown key, and
// compressed or encrypted ones, are listed and left in place.

// uploadJournalPrefix keys, in each drive's system table, the uploads
// adopted (value: "<sha>/<dir>"), so that --finish removes MinIO's
// names of them.
const uploadJournalPrefix = "migrate/minio/uploads/"

// uploadTracker finds the keys of MinIO's unfinished uploads while the
// buckets are adopted.
type uploadTracker struct {
	mu    sync.Mutex
	dirs  map[string][]string  // sha hex -> upload dirs, on any drive
	sets  map[string]uint64    // "sha/dir" -> the erasure sets (bit s) whose drives hold it
	keyOf map[string][2]string // sha hex -> bucket, key
	known map[string]bool      // buckets adopted
}

// loadUploads lists MinIO's upload directories on every drive and the
// keys the operator gave.
func (a *adopter) loadUploads() error {
	t := &uploadTracker{dirs: map[string][]string{}, sets: map[string]uint64{}, keyOf: map[string][2]string{}, known: map[string]bool{}}
	a.uploads = t
	have := map[string]bool{}
	for g, p := range a.paths {
		root := filepath.Join(p, minioSys, "multipart")
		shas, err := a.readDir(root)
		if err != nil {
			continue
		}
		for _, s := range shas {
			if !isSHAHex(s.Name()) || !s.IsDir() {
				continue
			}
			ups, err := a.readDir(filepath.Join(root, s.Name()))
			if err != nil {
				continue
			}
			for _, u := range ups {
				if _, err := minioformat.ParseUploadDir(u.Name()); err != nil || !u.IsDir() {
					continue
				}
				id := s.Name() + "/" + u.Name()
				if !have[id] {
					have[id] = true
					t.dirs[s.Name()] = append(t.dirs[s.Name()], u.Name())
				}
				t.sets[id] |= 1 << (g / a.setSize)
			}
		}
	}
	for _, bk := range a.opts.UploadKeys {
		t.keyOf[uploadSHA(bk[0], bk[1])] = bk
	}
	return nil
}

func isSHAHex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// uploadSHA is the directory MinIO keeps bucket/key's uploads in.
func uploadSHA(bucket, key string) string {
	h := sha256.Sum256([]byte(bucket + "/" + key))
	return hex.EncodeToString(h[:])
}

// noteKeys records which of bucket's keys (MinIO's path form) have
// uploads; called once per bucket adopted.
func (a *adopter) noteKeys(bucket string, rels []string) {
	t := a.uploads
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.known[bucket] = true
	if len(t.dirs) == 0 {
		return
	}
	for _, rel := range rels {
		key := objectKey(rel)
		if s := uploadSHA(bucket, key); t.dirs[s] != nil {
			t.keyOf[s] = [2]string{bucket, key}
		}
	}
}

// adoptUploads adopts every upload whose key is known.
func (a *adopter) adoptUploads(ctx context.Context) error {
	t := a.uploads
	if t == nil {
		return nil
	}
	shas := make([]string, 0, len(t.dirs))
	for s := range t.dirs {
		shas = append(shas, s)
	}
	sort.Strings(shas)
	for _, s := range shas {
		dirs := t.dirs[s]
		sort.Strings(dirs)
		bk, ok := t.keyOf[s]
		if !ok || !t.known[bk[0]] {
			a.rep.UploadsUnknown += len(dirs)
			for _, d := range dirs {
				a.rep.UnknownUploads = append(a.rep.UnknownUploads, s+"/"+d)
			}
			continue
		}
		for _, d := range dirs {
			if err := a.adoptUpload(ctx, bk[0], bk[1], s, d); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// uploadPart is one part of an upload as the drives agree on it.
type uploadPart struct {
	pm      *minioformat.PartMeta
	holders []bool // by drive position: meta agrees and the part file is whole
	dataID  string
}

// adoptUpload adopts one upload of bucket/key (MinIO's directory
// .minio.sys/multipart/sha/dir on each drive of the key's erasure set).
// MinIO keeps an upload in the set of its object (cmd/erasure-sets.go
// hashes the object name for NewMultipartUpload and PutObjectPart as
// for PutObject), and the engine looks for it there (setFor): its files
// are read from that set's drives and its records written to them.
func (a *adopter) adoptUpload(ctx context.Context, bucket, key, sha, dir string) error {
	uploadID := minioformat.UploadIDString(a.format.DeploymentID, dir)
	refuse := func(reason string) error {
		a.refuse(bucket, key, "unfinished upload "+uploadID+": "+reason)
		return nil
	}
	n := a.setSize
	set := a.placer.Set(bucket, key, a.sets)
	off := set * n // the set's first drive in a.paths
	paths := a.setPaths(set)
	// MinIO hashes an upload's key as given, the engine a key ending in
	// "/" as MinIO names such an object ("a/" as "a__XLDIR__"): should
	// the two sets differ, or the upload lie in another set than its key
	// (a deployment changed under MinIO), its part files cannot be
	// linked where the engine looks for them.
	if other := a.uploads.sets[sha+"/"+dir] &^ (1 << set); other != 0 {
		return refuse(fmt.Sprintf("MinIO's files of it are on drives of set(s) %s, but the key is served from set %d", setList(other, a.sets), set+1))
	}
	rel := filepath.Join(minioSys, "multipart", sha, dir)
	// The upload's own xl.meta: one null version, decided by quorum.
	var order []string
	cands := map[string]*candidate{}
	for i, p := range paths {
		raw, err := a.readFile(filepath.Join(p, rel, "xl.meta"))
		if err != nil {
			continue
		}
		m, err := minioformat.Decode(raw)
		if err != nil {
			if errors.Is(err, minioformat.ErrUnsupported) {
				return refuse(fmt.Sprintf("xl.meta on %s: %v", p, err))
			}
			continue
		}
		if len(m.Versions) != 1 || m.Versions[0].Object == nil {
			continue
		}
		v := &m.Versions[0]
		id := versionIdentity(v)
		c := cands[id]
		if c == nil {
			c = &candidate{ver: v, copies: map[int]driveVersion{}}
			cands[id] = c
			order = append(order, id)
		}
		if o := v.Object; i < len(o.Distribution) && int(o.Distribution[i]) == o.Index {
			c.copies[i] = driveVersion{v: v, meta: m}
		}
	}
	var best *candidate
	for _, id := range order {
		if c := cands[id]; best == nil || len(c.copies) > len(best.copies) {
			best = c
		}
	}
	if best == nil {
		return refuse("no readable xl.meta")
	}
	o := best.ver.Object
	if len(best.copies) < o.DataBlocks {
		return refuse(fmt.Sprintf("on %d drives, %d needed", len(best.copies), o.DataBlocks))
	}
	// The upload's checksum settings are metadata of MinIO's own; the
	// rest must be what an object version may carry.
	v := *best.ver
	ov := *o
	ov.MetaUser = map[string]string{}
	algo, ctype := "", ""
	for k, val := range o.MetaUser {
		switch strings.ToLower(k) {
		case "x-minio-multipart-checksum":
			algo = strings.ToUpper(val)
		case "x-minio-multipart-checksum-type":
			ctype = val
		default:
			ov.MetaUser[k] = val
		}
	}
	v.Object = &ov
	if ov.Compressed() {
		return refuse("compressed: its parts are S2 streams, to which plain parts cannot be added (the client uploads it again)")
	}
	if ov.Encrypted() {
		return refuse("encrypted: its parts are MinIO's DARE streams under MinIO's object key, to which shardstore's parts cannot be added (the client uploads it again)")
	}
	if reason := refusal(&v); reason != "" {
		return refuse(reason)
	}
	if len(ov.Parts) != 0 || ov.Size != 0 {
		return refuse(fmt.Sprintf("upload record with %d parts and %d bytes", len(ov.Parts), ov.Size))
	}
	up, err := a.convert(bucket, key, &v)
	if err != nil {
		return refuse(err.Error())
	}
	up.Bucket, up.Key, up.UploadID = bucket, key, uploadID
	up.VersionID, up.Inline, up.InlineData, up.ETag, up.Parts = "", false, nil, "", nil
	if algo != "" {
		up.ChecksumAlgo = algo
		if ctype != "" {
			t, err := hashing.CanonicalChecksumType(ctype)
			if err != nil || !hashing.SupportsChecksumType(algo, t) {
				return refuse(fmt.Sprintf("checksum %s of type %q", algo, ctype))
			}
			up.ChecksumType = t
		} else {
			up.ChecksumType = hashing.DefaultChecksumType(algo)
		}
	}
	parts, skipped := a.uploadParts(paths, o, rel, dir, algo)
	if skipped > 0 {
		a.add(func(r *Report) { r.UploadPartsLeft += skipped })
	}
	// Per drive: the upload record and the parts it holds, their part
	// files linked first.
	for p := 0; p < n; p++ {
		if !a.isLocal(off + p) {
			continue // another node's drive: that node adopts its share
		}
		dm := *up
		dm.Erasure.Distribution = append([]int(nil), up.Erasure.Distribution...)
		dm.Erasure.Index = up.Erasure.Distribution[p]
		var mine []*meta.Object
		for _, part := range parts {
			if !part.holders[p] {
				continue
			}
			num := part.pm.Number
			src := filepath.Join(paths[p], rel, o.DataDirString(), "part."+strconv.Itoa(num))
			if !a.opts.DryRun {
				a.step()
				dst := drive.ShardPath(paths[p], drive.ShardRef{ID: part.dataID, Part: num})
				if err := linkShard(src, dst, !a.opts.NoSync); err != nil {
					return fmt.Errorf("migrate: upload %s of %s/%s: %w", uploadID, bucket, key, err)
				}
			}
			pm := &meta.Object{Size: part.pm.Size, ModTime: part.pm.ModTime.UnixNano(), ETag: part.pm.ETag,
				Parts: []meta.Part{{Number: num, Size: part.pm.Size, ETag: part.pm.ETag, DataID: part.dataID}}}
			if pm.ModTime <= 0 {
				pm.ModTime = up.ModTime
			}
			if sum, salgo := partChecksum(part.pm, algo); sum != "" {
				pm.Parts[0].Checksum, pm.ChecksumAlgo = sum, salgo
			}
			mine = append(mine, pm)
		}
		if a.opts.DryRun {
			continue
		}
		b := &drive.Batch{}
		engine.ImportUploadBatch(b, &dm, mine)
		b.Put(drive.TableSystem, uploadJournalPrefix+sha+"/"+dir, []byte(sha+"/"+dir))
		a.noteBatch(b)
		a.step()
		if err := a.drives[off+p].Apply(ctx, b); err != nil {
			return fmt.Errorf("migrate: upload %s of %s/%s on %s: %w", uploadID, bucket, key, a.drives[off+p], err)
		}
	}
	a.add(func(r *Report) {
		r.Uploads++
		for _, part := range parts {
			r.UploadParts++
			for p, h := range part.holders {
				if h && a.isLocal(off+p) {
					r.Linked++
					r.ShardBytes += o.ShardFileSize(part.pm.Size)
				}
			}
		}
	})
	return nil
}

// uploadParts reads every drive's part.N.meta of the upload (paths: the
// drives of its set, by position) and returns the parts enough drives
// agree on (same ETag and size, the part file of the size the layout
// gives), and how many part numbers were left out.
func (a *adopter) uploadParts(paths []string, o *minioformat.Object, rel, dir, algo string) ([]*uploadPart, int) {
	type variant struct {
		pm      *minioformat.PartMeta
		holders []bool
	}
	byNum := map[int]map[string]*variant{}
	for p, path := range paths {
		dd := filepath.Join(path, rel, o.DataDirString())
		ents, err := a.readDir(dd)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			num, ok := partMetaNumber(name)
			if !ok {
				continue
			}
			raw, err := a.readFile(filepath.Join(dd, name))
			if err != nil {
				continue
			}
			pm, err := minioformat.DecodePartMeta(raw)
			if err != nil || pm.Number != num {
				continue
			}
			fi, err := a.stat(filepath.Join(dd, "part."+strconv.Itoa(num)))
			whole := err == nil && fi.Mode().IsRegular() && fi.Size() == o.ShardFileSize(pm.Size)
			id := fmt.Sprintf("%s/%d/%d/%v/%s", pm.ETag, pm.Size, pm.ActualSize, pm.Checksums, pm.Error)
			if byNum[num] == nil {
				byNum[num] = map[string]*variant{}
			}
			vr := byNum[num][id]
			if vr == nil {
				vr = &variant{pm: pm, holders: make([]bool, len(paths))}
				byNum[num][id] = vr
			}
			vr.holders[p] = whole
		}
	}
	nums := make([]int, 0, len(byNum))
	for num := range byNum {
		nums = append(nums, num)
	}
	sort.Ints(nums)
	var out []*uploadPart
	left := 0
	for _, num := range nums {
		var best *variant
		bestN := 0
		for _, vr := range byNum[num] {
			if c := countTrue(vr.holders); c > bestN {
				best, bestN = vr, c
			}
		}
		if best == nil || bestN < o.DataBlocks || !adoptablePart(best.pm) {
			left++
			continue
		}
		id := uuid.NewSHA1(uuid.NameSpaceURL, []byte(fmt.Sprintf("minio-upload:%s/%s/%d/%s", a.format.DeploymentID, dir, num, best.pm.ETag))).String()
		out = append(out, &uploadPart{pm: best.pm, holders: best.holders, dataID: id})
	}
	return out, left
}

// adoptablePart: a part stored as sent (not compressed or encrypted),
// with nothing this package does not know.
func adoptablePart(pm *minioformat.PartMeta) bool {
	return pm.Error == "" && len(pm.Unknown) == 0 && (pm.ActualSize == pm.Size || pm.ActualSize == -1) &&
		len(pm.Index) == 0 && pm.ETag != ""
}

// partChecksum is the part's S3 checksum to keep: of the upload's
// algorithm when it has one, else the one the part was sent with.
func partChecksum(pm *minioformat.PartMeta, algo string) (sum, salgo string) {
	if algo != "" {
		for k, v := range pm.Checksums {
			if strings.EqualFold(k, algo) {
				return v, algo
			}
		}
		return "", ""
	}
	if len(pm.Checksums) == 1 {
		for k, v := range pm.Checksums {
			return v, strings.ToUpper(k)
		}
	}
	return "", ""
}

func partMetaNumber(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "part.")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".meta")
	if !ok || s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= engine.MaxPartNumber
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// finishUploads removes MinIO's directories of the adopted uploads
// (their part files keep shardstore's names), as each drive's journal
// lists them.
func (a *adopter) finishUploads(ctx context.Context) (int, error) {
	done := map[string]bool{}
	for p, d := range a.drives {
		ents, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: uploadJournalPrefix})
		if err != nil {
			return 0, fmt.Errorf("migrate: upload journal on %s: %w", d, err)
		}
		b := &drive.Batch{}
		for _, e := range ents {
			sha, dir, ok := strings.Cut(string(e.Value), "/")
			if _, err := minioformat.ParseUploadDir(dir); !ok || !isSHAHex(sha) || err != nil {
				continue // not ours to interpret: left
			}
			shaDir := filepath.Join(a.paths[p], minioSys, "multipart", sha)
			if err := os.RemoveAll(filepath.Join(shaDir, dir)); err != nil {
				return 0, fmt.Errorf("migrate: finish upload %s on %s: %w", e.Value, d, err)
			}
			os.Remove(shaDir) // only if empty
			done[string(e.Value)] = true
			b.Delete(drive.TableSystem, e.Key)
		}
		if b.Len() > 0 {
			if err := d.Apply(ctx, b); err != nil {
				return 0, fmt.Errorf("migrate: upload journal on %s: %w", d, err)
			}
		}
	}
	return len(done), nil
}

// ReadUploadKeys reads the keys of unfinished uploads an operator lists
// for adoption: one "bucket/key" a line (the key may hold further
// slashes); blank lines and lines starting with # are skipped.
func ReadUploadKeys(path string) ([][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("migrate: upload keys: %w", err)
	}
	defer f.Close()
	return parseUploadKeys(bufio.NewScanner(f), path)
}

func parseUploadKeys(sc *bufio.Scanner, name string) ([][2]string, error) {
	sc.Buffer(make([]byte, 4096), 4096)
	var out [][2]string
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		bucket, key, ok := strings.Cut(s, "/")
		switch {
		case !ok || bucket == "" || key == "":
			return nil, fmt.Errorf("migrate: %s line %d: want bucket/key", name, line)
		case len(bucket) > 63 || strings.ContainsAny(bucket, " \t\x00") || strings.HasPrefix(bucket, "."):
			return nil, fmt.Errorf("migrate: %s line %d: bucket %q", name, line, bucket)
		case len(key) > 1024 || !utf8.ValidString(key) || strings.ContainsRune(key, 0):
			return nil, fmt.Errorf("migrate: %s line %d: key is not valid UTF-8 of at most 1024 bytes without NUL", name, line)
		}
		out = append(out, [2]string{bucket, key})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("migrate: %s: %w", name, err)
	}
	return out, nil
}
