package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/drive"
)

// finish removes MinIO's names of every key the completed adoption
// recorded on the drive (its xl.meta and part files' first names).
func (a *adopter) finish(ctx context.Context) (*Report, error) {
	if a.opts.DryRun {
		return nil, fmt.Errorf("migrate: --finish and --dry-run together")
	}
	a.drives = make([]*drive.Local, a.n())
	defer a.closeDrives()
	for i, p := range a.paths {
		d, err := drive.OpenLocal(p, drive.LocalOptions{NoSync: a.opts.NoSync, NoCreate: true})
		if err != nil {
			return nil, fmt.Errorf("migrate: open drive %s: %w", p, err)
		}
		a.drives[i] = d
	}
	st, err := a.state(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if st != stateAdopted && st != stateFinished {
		return nil, fmt.Errorf("%w: the adoption has not completed (state %q): run it (again) without --finish first", ErrRefused, st)
	}
	touched := map[string]bool{}
	if a.poolSet == nil {
		// One pool, or a node's share of a cluster (its drives of every
		// pool): the moved entries first, checked against the journal
		// entries this loop then removes (finish_moved.go). A single
		// node's several pools did this before any pool's finish
		// (poolSet.finishMovedPools).
		moved, err := a.finishMoved(ctx, a.drives, a.paths, a.drives)
		if err != nil {
			return nil, err
		}
		for name := range moved {
			touched[name] = true
		}
	}
	for p, d := range a.drives {
		q := drive.ScanQuery{Prefix: journalPrefix, Limit: 1000}
		for {
			ents, err := d.Scan(ctx, drive.TableSystem, q)
			if err != nil {
				return nil, fmt.Errorf("migrate: journal on %s: %w", d, err)
			}
			b := &drive.Batch{}
			for _, e := range ents {
				bucket, _, ok := strings.Cut(strings.TrimPrefix(e.Key, journalPrefix), "/")
				if !ok || bucket == "" || len(e.Value) == 0 || !filepath.IsLocal(bucket) || !filepath.IsLocal(filepath.FromSlash(string(e.Value))) {
					continue // not an entry this package writes
				}
				if err := removeKeyDir(filepath.Join(a.paths[p], bucket), string(e.Value)); err != nil {
					return nil, fmt.Errorf("migrate: finish %s on %s: %w", e.Key, d, err)
				}
				touched[strings.TrimPrefix(e.Key, journalPrefix)] = true
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
	a.rep.Finished = len(touched)
	ups, err := a.finishUploads(ctx)
	if err != nil {
		return nil, err
	}
	if buckets, err := a.buckets(); err == nil {
		for _, bucket := range buckets {
			for _, p := range a.paths {
				os.Remove(filepath.Join(p, bucket)) // only if empty: refused keys stay
			}
		}
	}
	if err := a.setState(ctx, stateFinished); err != nil {
		return nil, err
	}
	fmt.Fprintf(a.opts.Out, "removed MinIO's names of %d adopted keys and %d adopted uploads; refused keys and the rest of %s (IAM, configuration) were left\n", a.rep.Finished, ups, minioSys)
	return &a.rep, nil
}

// removeKeyDir removes MinIO's files of one key (its xl.meta and data
// dirs, not the keys below it) and its parents once empty.
func removeKeyDir(root, rel string) error {
	dir := filepath.Join(root, filepath.FromSlash(rel))
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Name() == "xl.meta":
			if err := os.Remove(p); err != nil {
				return err
			}
		case e.IsDir():
			if _, err := uuid.Parse(e.Name()); err != nil {
				continue // a key below this one
			}
			if _, err := os.Stat(filepath.Join(p, "xl.meta")); err == nil {
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	for d := dir; d != root && strings.HasPrefix(d, root); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}
