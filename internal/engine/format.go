package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/background"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/placement"
)

type layout struct {
	deploymentID string
	// parity is the STANDARD parity recorded in the formats (0: none
	// recorded).
	parity int
	// placement is the set placement the formats record ("":
	// shardstore's; an adopted MinIO deployment's is MinIO's).
	placement placement.Algorithm
}

// loadFormats reads every drive's format record, formats a fresh
// deployment, adopts blank drives into their slots, and refuses any drive
// that belongs elsewhere with an error naming it and the problem.
func loadFormats(ctx context.Context, drives []drive.Drive, setSize, parity int, log *slog.Logger, cluster *ClusterConfig) (layout, error) {
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

	// The deployment id is the one most formatted drives agree on.
	votes := map[string]int{}
	formatted := 0
	for i := range drives {
		if errs[i] == nil {
			votes[formats[i].DeploymentID]++
			formatted++
		}
	}
	for i := range drives {
		if errors.Is(errs[i], drive.ErrOldLayout) {
			return layout{}, fmt.Errorf("engine: %w", errs[i])
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
		return formatFresh(ctx, drives, setSize, parity)
	}
	if !cluster.mayFormatNew() && errors.Is(errs[0], drive.ErrUnformatted) {
		// The first node formats slot 0 last: until it has, formatting
		// is under way and a blank drive is not a replacement to adopt.
		return layout{}, ErrAwaitingFormat
	}
	var depID string
	for id, v := range votes {
		if v > votes[depID] || (v == votes[depID] && id < depID) {
			depID = id
		}
	}
	place := recordedPlacement(formats, errs, depID)
	var problems []string
	for i, d := range drives {
		wantSet, wantIdx := i/setSize, i%setSize
		if errs[i] != nil {
			if errors.Is(errs[i], drive.ErrUnformatted) {
				continue // handled below: a blank replacement
			}
			// An unreadable drive is tolerated here; quorum decides later.
			log.Warn("drive offline at start", "drive", d.String(), "err", errs[i])
			continue
		}
		f := formats[i]
		switch {
		case f.DeploymentID != depID:
			problems = append(problems, fmt.Sprintf("drive %s belongs to deployment %s, not %s: it was taken from another shardstore", d, f.DeploymentID, depID))
		case f.SetCount*f.SetSize != n:
			problems = append(problems, fmt.Sprintf("drive %s was formatted for %d drives (%d sets of %d) but %d drives were given: the drive count must not change", d, f.SetCount*f.SetSize, f.SetCount, f.SetSize, n))
		case f.SetSize != setSize:
			problems = append(problems, fmt.Sprintf("drive %s was formatted with sets of %d drives, but sets of %d were asked for", d, f.SetSize, setSize))
		case f.SetIndex != wantSet || f.DriveIndex != wantIdx:
			problems = append(problems, fmt.Sprintf("drive %s holds slot %d of set %d but was given as slot %d of set %d: the drive order changed (put drives back in their original order)", d, f.DriveIndex+1, f.SetIndex+1, wantIdx+1, wantSet+1))
		case placement.Algorithm(f.Placement) != place:
			problems = append(problems, fmt.Sprintf("drive %s records object placement %q, most drives %q: objects would be looked for in the wrong sets", d, f.Placement, place))
		}
	}
	if len(problems) > 0 {
		return layout{}, fmt.Errorf("engine: drive layout refused:\n  %s", strings.Join(problems, "\n  "))
	}
	for i, d := range drives {
		if !errors.Is(errs[i], drive.ErrUnformatted) || !cluster.owns(i) {
			continue // a blank drive of another node is adopted by that node
		}
		f := drive.Format{Version: drive.LayoutVersion, DeploymentID: depID, SetCount: n / setSize, SetSize: setSize,
			SetIndex: i / setSize, DriveIndex: i % setSize, DriveID: uuid.NewString(), Parity: parity, Placement: string(place)}
		if err := d.WriteFormat(ctx, f); err != nil {
			return layout{}, fmt.Errorf("engine: format replacement drive %s: %w", d, err)
		}
		if err := background.MarkRefillNeeded(ctx, d, f.DriveID); err != nil {
			return layout{}, fmt.Errorf("engine: %w", err)
		}
		log.Info("blank drive adopted as replacement; it will be healed", "drive", d.String(), "set", f.SetIndex+1, "slot", f.DriveIndex+1)
	}
	return layout{deploymentID: depID, parity: recordedParity(formats, errs, depID), placement: place}, nil
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

// recordedParity is the parity most formatted drives of the deployment record.
func recordedParity(formats []drive.Format, errs []error, depID string) int {
	votes := map[int]int{}
	best := 0
	for i, f := range formats {
		if errs[i] == nil && f.DeploymentID == depID && f.Parity > 0 {
			votes[f.Parity]++
			if votes[f.Parity] > votes[best] {
				best = f.Parity
			}
		}
	}
	return best
}

// formatFresh formats every drive of a new deployment. Drive.WriteFormat
// refuses a directory that holds anything but shardstore's own files.
//
// Slot 0 is formatted last: in a cluster, the other nodes take a blank
// slot 0 next to formatted drives as formatting still under way.
func formatFresh(ctx context.Context, drives []drive.Drive, setSize, parity int) (layout, error) {
	depID := uuid.NewString()
	order := append(append([]drive.Drive{}, drives[1:]...), drives[0])
	for k, d := range order {
		i := (k + 1) % len(drives)
		f := drive.Format{Version: drive.LayoutVersion, DeploymentID: depID, SetCount: len(drives) / setSize, SetSize: setSize,
			SetIndex: i / setSize, DriveIndex: i % setSize, DriveID: uuid.NewString(), Parity: parity}
		if err := d.WriteFormat(ctx, f); err != nil {
			return layout{}, fmt.Errorf("engine: format drive %s: %w", d, err)
		}
	}
	return layout{deploymentID: depID, parity: parity}, nil
}

// checkDrive reads the format of the drive in slot i of set si while
// running (the drive monitor of the background jobs asks every few
// seconds) and returns its drive id. A blank drive is adopted first; a
// drive formatted for another slot or deployment is refused (logged),
// and never refilled.
func (e *Engine) checkDrive(ctx context.Context, si, i int) (string, error) {
	d := e.sets[si].drives[i]
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
	if f.DeploymentID != e.deploymentID || f.SetIndex != si || f.DriveIndex != i {
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
	f := drive.Format{Version: drive.LayoutVersion, DeploymentID: e.deploymentID, SetCount: len(e.sets), SetSize: len(e.sets[si].drives),
		SetIndex: si, DriveIndex: i, DriveID: uuid.NewString(), Parity: e.sets[si].parity, Placement: string(e.placer.Algorithm())}
	if err := d.WriteFormat(ctx, f); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	if err := background.MarkRefillNeeded(ctx, d, f.DriveID); err != nil {
		return err
	}
	e.log.Warn("blank drive adopted as replacement; refilling it", "drive", d.String(), "set", si+1, "slot", i+1)
	return nil
}
