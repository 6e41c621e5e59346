package engine

import (
	"context"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/quorum"
)

// statusTimeout bounds the capacity probe of DriveStatus on drives
// without health tracking; tracked drives have their own deadline.
const statusTimeout = 5 * time.Second

// Layout reports how the deployment places and codes objects.
func (e *Engine) Layout() Layout {
	l := Layout{DeploymentID: e.deploymentID, Sets: len(e.sets), Pools: len(e.pools), InlineLimit: e.inlineLimit,
		BlockSize: e.blockSize, Bitrot: e.bitrot.String(), Placement: string(e.placer.Algorithm())}
	if len(e.sets) > 0 {
		s := e.sets[0]
		l.SetSize = len(s.drives)
		l.Drives = len(e.allDrives())
		l.Parity = s.parity
		l.RRSParity = s.parityFor("REDUCED_REDUNDANCY")
		l.Data = l.SetSize - l.Parity
		l.WriteQuorum = quorum.WriteQuorum(l.Data, l.Parity)
		l.ReadQuorum = l.Data
	}
	return l
}

// online reports whether d serves: a drive with health tracking
// answers from memory, so a hung drive cannot stall a status probe;
// others are asked for their format.
func online(ctx context.Context, d drive.Drive) error {
	if h, ok := d.(interface{ Online() bool }); ok {
		if h.Online() {
			return nil
		}
		return drive.ErrDriveFaulty
	}
	_, err := d.ReadFormat(ctx)
	return err
}

// Status reports drive and quorum health, in total and per set.
func (e *Engine) Status() Status {
	st := Status{Sets: len(e.sets), WriteQuorumOK: true, ReadQuorumOK: true}
	ctx := context.Background()
	for _, s := range e.sets {
		up := forEachDrive(s.drives, func(_ int, d drive.Drive) error { return online(ctx, d) })
		data := len(s.drives) - s.parity
		ss := SetStatus{Set: s.index + 1, Drives: len(s.drives), DrivesOnline: countNil(up),
			WriteQuorum: quorum.WriteQuorum(data, s.parity), ReadQuorum: data}
		ss.WriteQuorumOK = ss.DrivesOnline >= ss.WriteQuorum
		ss.ReadQuorumOK = ss.DrivesOnline >= ss.ReadQuorum
		st.Drives += ss.Drives
		st.DrivesOnline += ss.DrivesOnline
		st.WriteQuorumOK = st.WriteQuorumOK && ss.WriteQuorumOK
		st.ReadQuorumOK = st.ReadQuorumOK && ss.ReadQuorumOK
		st.PerSet = append(st.PerSet, ss)
	}
	return st
}

// DriveStatus reports every drive in slot order: its state, why it is
// offline, and its filesystem's capacity (asked of online drives only).
func (e *Engine) DriveStatus(ctx context.Context) []DriveStatus {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	var out []DriveStatus
	for _, s := range e.sets {
		part := make([]DriveStatus, len(s.drives))
		forEachDrive(s.drives, func(i int, d drive.Drive) error {
			ds := DriveStatus{Path: d.String(), Set: s.index + 1, Slot: i + 1, State: "online"}
			var lastErr string
			if h, ok := d.(interface{ State() drive.HealthState }); ok {
				hs := h.State()
				ds.Since, lastErr, ds.Faults, ds.Timeouts = hs.Since, hs.LastError, hs.Faults, hs.Timeouts
			}
			if err := online(ctx, d); err != nil {
				ds.State, ds.Error = "offline", lastErr
				if ds.Error == "" {
					ds.Error = err.Error()
				}
			} else if info, err := d.DiskInfo(ctx); err == nil {
				ds.Total, ds.Free, ds.Used, ds.Index = info.Total, info.Free, info.Used, info.Index
			} else if online(ctx, d) != nil {
				// The drive failed just now (a node that died since this
				// one last used its drives): report what this call found.
				ds.State, ds.Error = "offline", err.Error()
			}
			part[i] = ds
			return nil
		})
		out = append(out, part...)
	}
	return out
}
