package migrate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Deletions on the source (S3Options.Delete, `--delete`, off by
// default, like rclone sync's): once a bucket's versions are copied,
// every version or delete marker the target listed before the run that
// no source version accounts for is deleted from the target by its
// version id (a permanent deletion, no delete marker made), so a key
// gone from the source is gone from the target and a version deleted
// there is deleted here. A target version is accounted for by the
// source version of the same id, or, for versions imported under new
// ids, the one whose derived half its id ends in (ids.go). Each
// deletion is printed; a version under retention or legal hold on the
// target is not deleted (the failure is reported, the run exits
// non-zero). Versions written to the target since it was listed are not
// looked at. Deletions are idempotent: a run killed while deleting is
// completed by running it again.

// goneFromSource lists the target's versions (have, by key) that no
// source version (src, by key, planned) accounts for, keys in order and
// each key's newest first.
func goneFromSource(src, have map[string][]srcVersion) []srcVersion {
	var gone []srcVersion
	keys := make([]string, 0, len(have))
	for k := range have {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vs := src[k]
		hs := have[k]
		for i := len(hs) - 1; i >= 0; i-- {
			h := hs[i]
			if !slices.ContainsFunc(vs, func(v srcVersion) bool { return accounts(v, h) }) {
				gone = append(gone, h)
			}
		}
	}
	return gone
}

// accounts reports whether source version v is target version h.
func accounts(v, h srcVersion) bool {
	if v.suffix != "" {
		return remappedSuffix(h.id) == v.suffix
	}
	return v.id == h.id
}

// deleteGone deletes from the target the versions of bucket b gone from
// the source, and returns the ids it deleted.
func (m *s3Mover) deleteGone(ctx context.Context, b string, src, have map[string][]srcVersion) map[string]bool {
	gone := goneFromSource(src, have)
	deleted := map[string]bool{}
	jobs := make(chan srcVersion)
	var wg sync.WaitGroup
	for range m.opts.Workers {
		wg.Go(func() {
			for h := range jobs {
				_, err := m.dst.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b, Key: &h.key, VersionId: &h.id})
				m.mu.Lock()
				if err != nil {
					atomic.AddInt64(&m.stats.Failed, 1)
					m.stats.Failures = append(m.stats.Failures, fmt.Sprintf("%s/%s version %s: delete (gone from the source): %v", b, h.key, h.id, err))
				} else {
					atomic.AddInt64(&m.stats.Deleted, 1)
					deleted[h.id] = true
					kind := "version"
					if h.marker {
						kind = "delete marker"
					}
					fmt.Fprintf(m.opts.Out, "deleted: %s/%s %s %s (not on the source)\n", b, h.key, kind, h.id)
				}
				m.mu.Unlock()
			}
		})
	}
	for _, h := range gone {
		select {
		case jobs <- h:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
	return deleted
}
