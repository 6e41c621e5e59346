package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/background"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/placement"
)

type layout struct {
	deploymentID string
	// placement is the set placement the formats record ("":
	// shardstore's; an adopted MinIO deployment's is MinIO's).
	placement placement.Algorithm
	// pools are the server pools in command-line order.
	pools []poolLayout
	// fresh is true when the whole deployment was formatted by this start.
	fresh bool
}

// poolLayout is one server pool as its formats record it.
type poolLayout struct {
	start, n int // its drives are drives[start:start+n]
	setSize  int
	parity   int
	id       string
	// fresh is true when this start formatted the pool (an expansion,
	// or a new deployment).
	fresh bool
}

// loadFormats reads every drive's format record, formats a fresh
// deployment (or a pool appended to an existing one: an expansion),
// adopts blank drives into their slots, and refuses any drive that
// belongs elsewhere with an error naming it and the problem. groups are
// the drive counts of the pools in order (they add up to len(drives));
// setSize and parity are what was asked for (0: recorded, or the default
// for the pool's size).
func loadFormats(ctx context.Context, drives []drive.Drive, groups []int, setSize, parity int, log *slog.Logger, cluster *ClusterConfig) (layout, error) {
	n := len(drives)
	formats := make([]drive.Format, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, d := range drives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			formats[i], errs[i] = d.ReadFormat(ctx)
		}()
	}
	wg.Wait()
	for i := range drives {
		if errors.Is(errs[i], drive.ErrOldLayout) {
			return layout{}, fmt.Errorf("engine: %w", errs[i])
		}
	}
	groups = mergeLegacyPools(groups, formats, errs)
	pools := make([]poolLayout, len(groups))
	at := 0
	for p, g := range groups {
		pools[p] = poolLayout{start: at, n: g}
		at += g
	}

	// The deployment id is the one most formatted drives agree on.
	votes := map[string]int{}
	formatted := 0
	for i := range drives {
		if errs[i] == nil {
			votes[formats[i].DeploymentID]++
			formatted++
		}
	}
	if formatted == 0 {
		for i := range drives {
			if errs[i] != nil && !errors.Is(errs[i], drive.ErrUnformatted) {
				return layout{}, fmt.Errorf("engine: drive %s: %w", drives[i], errs[i])
			}
		}
		if !cluster.mayFormatNew() {
			return layout{}, ErrAwaitingFormat
		}
		for p := range pools {
			if err := pools[p].choose(formats, errs, setSize, parity); err != nil {
				return layout{}, err
			}
		}
		return formatFresh(ctx, drives, pools)
	}
	var depID string
	for id, v := range votes {
		if v > votes[depID] || (v == votes[depID] && id < depID) {
			depID = id
		}
	}
	place := recordedPlacement(formats, errs, depID)
	var problems []string
	poolOf := map[string]int{}
	for p := range pools {
		pl := &pools[p]
		if err := pl.choose(formats, errs, setSize, parity); err != nil {
			return layout{}, err
		}
		if problem := foreignPool(drives, formats, errs, pl, p, depID); problem != "" {
			problems = append(problems, problem)
			continue
		}
		pl.id = recordedPoolID(formats, errs, pl, depID)
		if !pl.formatted(errs) {
			// An expansion: a pool none of whose drives is formatted is
			// formatted now, by the node that holds its first drive.
			if !cluster.owns(pl.start) {
				return layout{}, ErrAwaitingFormat
			}
			if err := formatPool(ctx, drives, pl, depID, place); err != nil {
				return layout{}, err
			}
			log.Info("new server pool formatted", "pool", p+1, "drives", pl.n, "sets", pl.n/pl.setSize, "set_size", pl.setSize, "pool_id", pl.id)
			continue
		}
		if other, dup := poolOf[pl.id]; dup {
			problems = append(problems, fmt.Sprintf("pools %d and %d hold the same pool (id %q): a pool was given twice", other+1, p+1, pl.id))
		}
		poolOf[pl.id] = p
		if !cluster.mayFormatNew() && errors.Is(errs[pl.start], drive.ErrUnformatted) && !cluster.owns(pl.start) {
			// The node holding a pool's first drive formats it last:
			// until it has, formatting is under way and a blank drive is
			// not a replacement to adopt.
			return layout{}, ErrAwaitingFormat
		}
		for i := pl.start; i < pl.start+pl.n; i++ {
			d := drives[i]
			wantSet, wantIdx := (i-pl.start)/pl.setSize, (i-pl.start)%pl.setSize
			if errs[i] != nil {
				if errors.Is(errs[i], drive.ErrUnformatted) {
					continue // handled below: a blank replacement
				}
				// An unreadable drive is tolerated here; quorum decides later.
				log.Warn("drive offline at start", "drive", d.String(), "err", errs[i])
				continue
			}
			f := formats[i]
			where := ""
			if len(pools) > 1 {
				where = fmt.Sprintf(" of pool %d", p+1)
			}
			switch {
			case f.DeploymentID != depID:
				problems = append(problems, fmt.Sprintf("drive %s belongs to deployment %s, not %s: it was taken from another shardstore", d, f.DeploymentID, depID))
			case f.PoolID != pl.id:
				problems = append(problems, fmt.Sprintf("drive %s belongs to pool id %q, but the other drives%s to %q: the pools' order or drives changed (give each pool's drives in their original argument)", d, f.PoolID, where, pl.id))
			case f.SetCount*f.SetSize != pl.n:
				problems = append(problems, fmt.Sprintf("drive %s was formatted for %d drives (%d sets of %d) but %d drives were given%s: the drive count of a pool must not change (add capacity as a new pool)", d, f.SetCount*f.SetSize, f.SetCount, f.SetSize, pl.n, where))
			case f.SetSize != pl.setSize:
				problems = append(problems, fmt.Sprintf("drive %s was formatted with sets of %d drives, but sets of %d were asked for", d, f.SetSize, pl.setSize))
			case f.SetIndex != wantSet || f.DriveIndex != wantIdx:
				problems = append(problems, fmt.Sprintf("drive %s holds slot %d of set %d but was given as slot %d of set %d%s: the drive order changed (put drives back in their original order)", d, f.DriveIndex+1, f.SetIndex+1, wantIdx+1, wantSet+1, where))
			case placement.Algorithm(f.Placement) != place:
				problems = append(problems, fmt.Sprintf("drive %s records object placement %q, most drives %q: objects would be looked for in the wrong sets", d, f.Placement, place))
			}
		}
	}
	if len(problems) > 0 {
		return layout{}, fmt.Errorf("engine: drive layout refused:\n  %s", strings.Join(problems, "\n  "))
	}
	for _, pl := range pools {
		if pl.fresh {
			continue
		}
		for i := pl.start; i < pl.start+pl.n; i++ {
			d := drives[i]
			if !errors.Is(errs[i], drive.ErrUnformatted) || !cluster.owns(i) {
				continue // a blank drive of another node is adopted by that node
			}
			f := drive.Format{Version: drive.LayoutVersion, DeploymentID: depID, SetCount: pl.n / pl.setSize, SetSize: pl.setSize,
				SetIndex: (i - pl.start) / pl.setSize, DriveIndex: (i - pl.start) % pl.setSize, DriveID: uuid.NewString(), Parity: pl.parity,
				Placement: string(place), PoolID: pl.id}
			if err := writeFormat(ctx, d, f); err != nil {
				return layout{}, fmt.Errorf("engine: format replacement drive %s: %w", d, err)
			}
			if err := background.MarkRefillNeeded(ctx, d, f.DriveID); err != nil {
				return layout{}, fmt.Errorf("engine: %w", err)
			}
			log.Info("blank drive adopted as replacement; it will be healed", "drive", d.String(), "set", f.SetIndex+1, "slot", f.DriveIndex+1)
		}
	}
	return layout{deploymentID: depID, placement: place, pools: pools}, nil
}

// choose settles the pool's set size and parity: asked for, else what
// its formatted drives record, else the defaults for its drive count. A
// request that contradicts the record is refused.
func (pl *poolLayout) choose(formats []drive.Format, errs []error, setSize, parity int) error {
	fs, es := formats[pl.start:pl.start+pl.n], errs[pl.start:pl.start+pl.n]
	recSize := majority(fs, es, func(f drive.Format) int { return f.SetSize })
	recParity := majority(fs, es, func(f drive.Format) int { return f.Parity })
	want := setSize
	if want == 0 {
		want = recSize
	}
	size, err := chooseSetSize(pl.n, want)
	if err != nil {
		return err
	}
	par := parity
	if par == 0 {
		par = recParity
	}
	if par == 0 {
		par = defaultParity(size)
	}
	if err := checkParity(par, size); err != nil {
		return err
	}
	if parity != 0 && recParity != 0 && parity != recParity {
		return fmt.Errorf("engine: the drives were formatted with parity %d, but parity %d was asked for: start with --parity %d (or without --parity)", recParity, parity, recParity)
	}
	pl.setSize, pl.parity = size, par
	return nil
}

// formatted reports whether any drive of the pool holds a format.
func (pl *poolLayout) formatted(errs []error) bool {
	for _, err := range errs[pl.start : pl.start+pl.n] {
		if !errors.Is(err, drive.ErrUnformatted) {
			return true
		}
	}
	return false
}

// foreignPool names the problem when the formatted drives of a pool all
// belong to another deployment: a pool taken from another shardstore is
// never adopted into this one.
func foreignPool(drives []drive.Drive, formats []drive.Format, errs []error, pl *poolLayout, p int, depID string) string {
	mine, other := 0, ""
	for i := pl.start; i < pl.start+pl.n; i++ {
		if errs[i] != nil {
			continue
		}
		if formats[i].DeploymentID == depID {
			mine++
		} else {
			other = formats[i].DeploymentID
		}
	}
	if mine > 0 || other == "" {
		return ""
	}
	return fmt.Sprintf("pool %d (%s ...) belongs to deployment %s, not %s: a pool's drives must be empty (a new pool) or this deployment's", p+1, drives[pl.start], other, depID)
}

// recordedPoolID is the pool id most of the pool's formatted drives of
// the deployment record.
func recordedPoolID(formats []drive.Format, errs []error, pl *poolLayout, depID string) string {
	votes := map[string]int{}
	best, seen := "", false
	for i := pl.start; i < pl.start+pl.n; i++ {
		if errs[i] != nil || formats[i].DeploymentID != depID {
			continue
		}
		id := formats[i].PoolID
		votes[id]++
		if !seen || votes[id] > votes[best] || (votes[id] == votes[best] && id < best) {
			best, seen = id, true
		}
	}
	return best
}

// mergeLegacyPools keeps a deployment formatted before pools whole: its
// drives record no pool id and a drive count spanning several arguments
// (`server /a{1...4} /b{1...4}` was one pool of 8 drives), so the
// leading arguments it spans are one pool again. Arguments after them
// are pools of their own (an expansion).
func mergeLegacyPools(groups []int, formats []drive.Format, errs []error) []int {
	if len(groups) < 2 {
		return groups
	}
	for i := 0; i < groups[0] && i < len(formats); i++ {
		if errs[i] != nil {
			continue
		}
		f := formats[i]
		if f.PoolID != "" {
			return groups
		}
		total := f.SetCount * f.SetSize
		sum := 0
		for k, g := range groups {
			sum += g
			if sum == total && k > 0 {
				return append([]int{total}, groups[k+1:]...)
			}
			if sum >= total {
				break
			}
		}
		return groups
	}
	return groups
}

// recordedPlacement is the placement most formatted drives of the
// deployment record.
func recordedPlacement(formats []drive.Format, errs []error, depID string) placement.Algorithm {
	votes := map[string]int{}
	best := ""
	for i, f := range formats {
		if errs[i] == nil && f.DeploymentID == depID {
			votes[f.Placement]++
			if v := votes[f.Placement]; v > votes[best] || (v == votes[best] && f.Placement < best) {
				best = f.Placement
			}
		}
	}
	return placement.Algorithm(best)
}

// formatFresh formats every drive of a new deployment, each pool with
// its own id. Drive.WriteFormat refuses a directory that holds anything
// but shardstore's own files.
//
// Slot 0 is formatted last: in a cluster, the other nodes take a blank
// slot 0 next to formatted drives as formatting still under way.
func formatFresh(ctx context.Context, drives []drive.Drive, pools []poolLayout) (layout, error) {
	depID := uuid.NewString()
	for p := len(pools) - 1; p >= 0; p-- {
		pools[p].id = uuid.NewString()
		if err := formatPool(ctx, drives, &pools[p], depID, ""); err != nil {
			return layout{}, err
		}
	}
	return layout{deploymentID: depID, pools: pools, fresh: true}, nil
}

// formatPool formats the drives of a pool none of whose drives is
// formatted, under a new pool id, its first drive last.
func formatPool(ctx context.Context, drives []drive.Drive, pl *poolLayout, depID string, place placement.Algorithm) error {
	if pl.id == "" {
		pl.id = uuid.NewString()
	}
	pl.fresh = true
	for k := 1; k <= pl.n; k++ {
		j := k % pl.n
		d := drives[pl.start+j]
		f := drive.Format{Version: drive.LayoutVersion, DeploymentID: depID, SetCount: pl.n / pl.setSize, SetSize: pl.setSize,
			SetIndex: j / pl.setSize, DriveIndex: j % pl.setSize, DriveID: uuid.NewString(), Parity: pl.parity,
			Placement: string(place), PoolID: pl.id}
		if err := writeFormat(ctx, d, f); err != nil {
			return fmt.Errorf("engine: format drive %s: %w", d, err)
		}
	}
	return nil
}

// checkDrive reads the format of the drive in slot i of set si while
// running (the drive monitor of the background jobs asks every few
// seconds) and returns its drive id. A blank drive is adopted first; a
// drive formatted for another slot or deployment is refused (logged),
// and never refilled.
func (e *Engine) checkDrive(ctx context.Context, si, i int) (string, error) {
	set := e.sets[si]
	d := set.drives[i]
	f, err := d.ReadFormat(ctx)
	if errors.Is(err, drive.ErrUnformatted) {
		if err := e.adoptDrive(ctx, si, i, d); err != nil {
			e.log.Error("replacement drive not adopted", "drive", d.String(), "err", err)
			return "", err
		}
		f, err = d.ReadFormat(ctx)
	}
	if err != nil {
		return "", err
	}
	if f.DeploymentID != e.deploymentID || f.PoolID != set.pool.id || f.SetIndex != set.local || f.DriveIndex != i {
		e.log.Error("drive holds another slot or deployment; not refilling it", "drive", d.String())
		return "", errForeignDrive
	}
	return f.DriveID, nil
}

// errForeignDrive refuses a drive formatted for another slot or deployment.
var errForeignDrive = errors.New("drive holds another slot or deployment")

// adoptDrive formats a blank drive found in slot i of set si while
// running, and marks it for refill. A drive holding anything else may be
// someone else's data and is refused.
func (e *Engine) adoptDrive(ctx context.Context, si, i int, d drive.Drive) error {
	// WriteFormat itself refuses a directory that holds anything else.
	set := e.sets[si]
	f := drive.Format{Version: drive.LayoutVersion, DeploymentID: e.deploymentID, SetCount: len(set.pool.sets), SetSize: len(set.drives),
		SetIndex: set.local, DriveIndex: i, DriveID: uuid.NewString(), Parity: set.parity, Placement: string(e.placer.Algorithm()),
		PoolID: set.pool.id}
	if err := d.WriteFormat(ctx, f); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	if err := background.MarkRefillNeeded(ctx, d, f.DriveID); err != nil {
		return err
	}
	e.log.Warn("blank drive adopted as replacement; refilling it", "drive", d.String(), "set", si+1, "slot", i+1)
	return nil
}

// formatAttempts and formatBackoff bound writeFormat's retries.
const (
	formatAttempts = 3
	formatBackoff  = time.Second
)

// writeFormat writes f to d, trying again after a fault or a timeout: a
// start must not fail because one drive (often another node's, over the
// network) was slow for a moment while the deployment was formatted.
// Writing the same format twice is harmless, so a retry after a write
// that timed out yet finished is too. Refusals (a drive not blank, of a
// newer layout, locked) are answered at once.
func writeFormat(ctx context.Context, d drive.Drive, f drive.Format) error {
	var err error
	for attempt := 1; ; attempt++ {
		if err = d.WriteFormat(ctx, f); err == nil || !errors.Is(err, drive.ErrDriveFaulty) || attempt == formatAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (then: %w)", err, ctx.Err())
		case <-time.After(time.Duration(attempt) * formatBackoff):
		}
	}
}
