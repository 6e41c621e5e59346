package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// Progress. Before anything is adopted, a counting pass walks one drive
// of each erasure set (the first of the set that can be read) and counts
// the keys on it (directories holding an xl.meta, as the adoption lists
// them on every drive): a key lives in one set, on every drive of it, so
// the sum over the sets is the deployment's key count, for 1/setSize of
// the listing work; it is the total the progress lines give a rate and
// an ETA against. A key missing from that drive is still adopted, so the
// count can fall short by a few; the ETA is then "almost done" rather
// than negative.

// countKeys counts the keys of every bucket on one drive of each set.
func (a *adopter) countKeys() int {
	total := 0
	for s := range a.sets {
		total += a.countSetKeys(a.setPaths(s))
	}
	return total
}

// countSetKeys counts the keys of every bucket on the first readable
// drive of paths (one set's drives).
func (a *adopter) countSetKeys(paths []string) int {
	for _, p := range paths {
		ents, err := a.readDir(p)
		if err != nil {
			continue
		}
		total := 0
		for _, e := range ents {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "lost+found" {
				continue
			}
			a.walkDir(filepath.Join(p, name), func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return nil
					}
					return fs.SkipDir
				}
				if !d.IsDir() && d.Name() == "xl.meta" {
					total++
				}
				return nil
			})
		}
		return total
	}
	return 0
}

// noteBatch counts the bytes of index entries a batch writes, and of
// them the inline shard data (MinIO's inline shards kept inline).
func (a *adopter) noteBatch(b *drive.Batch) {
	var n, inline int64
	for _, c := range b.Changes {
		n += int64(len(c.Key) + len(c.Value))
		if c.Table == drive.TableInline {
			inline += int64(len(c.Value))
		}
	}
	a.add(func(r *Report) { r.MetaBytes += n; r.InlineBytes += inline })
}

// progressLine prints one progress line (a.mu held).
func (a *adopter) progressLine(now time.Time) {
	r := &a.rep
	el := now.Sub(a.start).Seconds()
	done := r.Keys + len(r.Refused)
	// The rate of the ETA is measured from the first progress line on:
	// before it, the counting pass and the first listing ran.
	if a.etaFrom.IsZero() {
		a.etaFrom, a.etaDone = now, done
	}
	rate := 0.0
	if d := now.Sub(a.etaFrom).Seconds(); d > 0 {
		rate = float64(done-a.etaDone) / d
	}
	line := fmt.Sprintf("progress: %d", done)
	if r.Total > 0 {
		pct := 100 * float64(done) / float64(r.Total)
		line += fmt.Sprintf("/%d keys (%.1f%%)", r.Total, min(pct, 100))
	} else {
		line += " keys"
	}
	line += fmt.Sprintf(", %d versions, %d refused, %.0f objects/s", r.Versions, len(r.Refused), float64(r.Versions)/el)
	if r.Total > 0 && rate > 0 {
		if left := r.Total - done; left > 0 {
			line += ", ETA " + time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String()
		} else {
			line += ", almost done"
		}
	}
	fmt.Fprintln(a.opts.Out, line)
}

// printStats prints the run's totals.
func (a *adopter) printStats() {
	r := &a.rep
	out := a.opts.Out
	verb := "adopted"
	if a.opts.DryRun {
		verb = "to adopt"
	}
	fmt.Fprintf(out, "uploads: unfinished multipart uploads %s: %d (%d parts linked)", verb, r.Uploads, r.UploadParts)
	if r.UploadPartsLeft > 0 {
		fmt.Fprintf(out, ", %d parts left out (not on enough drives, or compressed/encrypted)", r.UploadPartsLeft)
	}
	fmt.Fprintln(out)
	if r.UploadsUnknown > 0 {
		fmt.Fprintf(out, "uploads: %d unfinished uploads not adopted: MinIO keeps only the SHA-256 of their bucket/key, and no adopted key has it; list their keys with --upload-keys FILE (bucket/key a line, e.g. from `mc ls --incomplete` before MinIO was stopped) to adopt them:\n", r.UploadsUnknown)
		for _, u := range r.UnknownUploads {
			fmt.Fprintf(out, "  .minio.sys/multipart/%s\n", u)
		}
	}
	fmt.Fprintf(out, "copied (read, checked and written again, not linked): %d versions, %d bytes of objects, %d bytes of shard files written\n",
		r.CopiedVersions, r.CopiedBytes, r.CopiedShardBytes)
	if r.Decompressed > 0 {
		fmt.Fprintf(out, "of them compressed by MinIO (decompressed, written uncompressed): %d versions\n", r.Decompressed)
	}
	if r.PoolCopied > 0 {
		fmt.Fprintf(out, "of them moved from another server pool into the pool of their key's newest version: %d versions\n", r.PoolCopied)
	}
	if r.Decrypted > 0 {
		fmt.Fprintf(out, "of them encrypted by MinIO (decrypted with the KMS key given, encrypted again by shardstore): %d versions\n", r.Decrypted)
	}
	secs := r.Elapsed.Seconds()
	perMillion := 0.0
	if r.Versions > 0 {
		perMillion = secs / float64(r.Versions) * 1e6
	}
	fmt.Fprintf(out, "totals: objects %s %d (versions), refused %d, %d bytes linked, %d bytes copied, %d bytes of index entries written (%d of them inline shard data), %d bytes of inline shards written as files, elapsed %s, %.0f s per million objects\n",
		verb, r.Versions, len(r.Refused), r.ShardBytes, r.CopiedShardBytes, r.MetaBytes, r.InlineBytes, r.Written, r.Elapsed.Round(time.Millisecond), perMillion)
}
