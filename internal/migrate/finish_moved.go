package migrate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shardstore/shardstore/internal/drive"
)

// A key whose versions MinIO spread over several server pools is adopted
// by the pool holding its newest version, the other pools' versions
// copied into it (pools.go); the other pools' drives journal the key as
// moved (movedPrefix), so that --finish removes MinIO's files of it
// there too. The owning pool can still refuse the key while copying
// (an ETag that does not match, shards beyond repair: what only reading
// the data tells), after the other pools journaled it. So --finish
// removes what a moved entry names only where a drive's journal
// (journalPrefix: written in the same batch as the key's records, only
// by the pool that adopted it) says a pool adopted the key, and it does
// this for every moved entry of every pool before it removes (and
// forgets) any journalPrefix entry: a --finish killed anywhere and run
// again still finds the owning pool's entries of every moved key it has
// not done yet. A key the owner refused keeps MinIO's files in every
// pool and is listed.

// finishMoved removes MinIO's files named by the moved entries of
// drives (paths: their directories) whose key a journalPrefix entry on
// any drive of owners records as adopted, and lists (as refused) those
// it leaves. Returns the keys (bucket/key) whose files it removed.
func (a *adopter) finishMoved(ctx context.Context, drives []*drive.Local, paths []string, owners []*drive.Local) (map[string]bool, error) {
	removed := map[string]bool{}
	left := map[string]bool{}
	for p, d := range drives {
		q := drive.ScanQuery{Prefix: movedPrefix, Limit: 1000}
		for {
			ents, err := d.Scan(ctx, drive.TableSystem, q)
			if err != nil {
				return nil, fmt.Errorf("migrate: journal on %s: %w", d, err)
			}
			b := &drive.Batch{}
			for _, e := range ents {
				name := strings.TrimPrefix(e.Key, movedPrefix)
				bucket, key, ok := strings.Cut(name, "/")
				if !ok || bucket == "" || len(e.Value) == 0 || !filepath.IsLocal(bucket) || !filepath.IsLocal(filepath.FromSlash(string(e.Value))) {
					continue // not an entry this package writes
				}
				adopted, err := adoptedByAny(ctx, owners, journalKey(bucket, key))
				if err != nil {
					return nil, err
				}
				if !adopted {
					left[name] = true
					continue
				}
				if err := removeKeyDir(filepath.Join(paths[p], bucket), string(e.Value)); err != nil {
					return nil, fmt.Errorf("migrate: finish %s on %s: %w", e.Key, d, err)
				}
				removed[name] = true
				b.Delete(drive.TableSystem, e.Key)
			}
			if b.Len() > 0 {
				if err := d.Apply(ctx, b); err != nil {
					return nil, fmt.Errorf("migrate: journal on %s: %w", d, err)
				}
			}
			if len(ents) < q.Limit {
				break
			}
			q.After = ents[len(ents)-1].Key
		}
	}
	names := make([]string, 0, len(left))
	for name := range left {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		bucket, key, _ := strings.Cut(name, "/")
		a.rep.Refused = append(a.rep.Refused, Refusal{Bucket: bucket, Key: key,
			Reason: "its versions are in several pools, and the pool of its newest version did not adopt it (refused during the adoption: see its report): MinIO's files of it are left in every pool"})
		fmt.Fprintf(a.opts.Out, "left MinIO's files of %s: its versions are in several pools, and the pool of its newest version did not adopt it (the adoption refused it)\n", name)
	}
	return removed, nil
}

// adoptedByAny reports whether any of drives journals key (a
// journalPrefix key) as adopted.
func adoptedByAny(ctx context.Context, drives []*drive.Local, key string) (bool, error) {
	for _, d := range drives {
		_, err := d.Get(ctx, drive.TableSystem, key)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, drive.ErrNotFound) {
			return false, fmt.Errorf("migrate: journal on %s: %w", d, err)
		}
	}
	return false, nil
}

// finishMovedPools runs finishMoved over every pool of a single node's
// deployment of several pools (each pool's moved entries looked up in
// every pool's journal), before any pool's finish removes a journal
// entry.
func (ps *poolSet) finishMovedPools(ctx context.Context) ([]Refusal, error) {
	var all []*drive.Local
	defer func() {
		for _, p := range ps.all {
			p.closeDrives()
			p.drives = nil
		}
	}()
	for _, p := range ps.all {
		p.drives = make([]*drive.Local, p.n())
		for i, path := range p.paths {
			d, err := drive.OpenLocal(path, drive.LocalOptions{NoSync: p.opts.NoSync, NoCreate: true})
			if err != nil {
				return nil, fmt.Errorf("migrate: open drive %s: %w", path, err)
			}
			p.drives[i] = d
			all = append(all, d)
		}
	}
	var refused []Refusal
	seen := map[Refusal]bool{}
	for i, p := range ps.all {
		if _, err := p.finishMoved(ctx, p.drives, p.paths, all); err != nil {
			return nil, fmt.Errorf("pool %d (%s): %w", i+1, ps.args[i], err)
		}
		for _, r := range p.rep.Refused {
			if !seen[r] {
				seen[r] = true
				refused = append(refused, r)
			}
		}
		p.rep.Refused = nil
	}
	return refused, nil
}
