package minioformat

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// MaxFormatSize bounds the format.json ParseFormat accepts.
const MaxFormatSize = 16 << 20

// Format is a drive's .minio.sys/format.json: which deployment the drive
// belongs to, and where it sits among the deployment's (pool's) drives.
type Format struct {
	Version      string // "1"
	Backend      string // "xl" (erasure) or "xl-single" (one drive)
	DeploymentID string // "id": the deployment id, a UUID
	// XLVersion is the erasure layout version: "3" since 2019 (flat
	// multipart layout); "1" and "2" are migrated by MinIO at start.
	XLVersion string
	This      string     // this drive's UUID
	Sets      [][]string // drive UUIDs of each erasure set, in set order
	// DistributionAlgo picks an object's set: "SIPMOD+PARITY" (current),
	// "SIPMOD", or the legacy "CRCMOD".
	DistributionAlgo string
}

type formatJSON struct {
	Version string `json:"version"`
	Format  string `json:"format"`
	ID      string `json:"id"`
	XL      struct {
		Version          string     `json:"version"`
		This             string     `json:"this"`
		Sets             [][]string `json:"sets"`
		DistributionAlgo string     `json:"distributionAlgo"`
	} `json:"xl"`
}

// ParseFormat parses and checks a format.json.
func ParseFormat(data []byte) (*Format, error) {
	if len(data) > MaxFormatSize {
		return nil, corruptf("format.json of %d bytes", len(data))
	}
	var j formatJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, corruptf("format.json: %v", err)
	}
	f := &Format{Version: j.Version, Backend: j.Format, DeploymentID: j.ID, XLVersion: j.XL.Version,
		This: j.XL.This, Sets: j.XL.Sets, DistributionAlgo: j.XL.DistributionAlgo}
	if f.Version != "1" {
		return nil, unsupportedf("format.json version %q", f.Version)
	}
	if f.Backend != "xl" && f.Backend != "xl-single" {
		return nil, unsupportedf("backend %q (only erasure-coded drives, \"xl\" and \"xl-single\")", f.Backend)
	}
	if f.XLVersion != "3" {
		return nil, unsupportedf("erasure format version %q (start that MinIO once to migrate it to 3)", f.XLVersion)
	}
	switch f.DistributionAlgo {
	case "SIPMOD+PARITY", "SIPMOD", "CRCMOD":
	default:
		return nil, unsupportedf("distribution algorithm %q", f.DistributionAlgo)
	}
	if _, err := uuid.Parse(f.DeploymentID); err != nil {
		return nil, corruptf("deployment id %q", f.DeploymentID)
	}
	if len(f.Sets) == 0 {
		return nil, corruptf("no erasure sets")
	}
	seen := map[string]bool{}
	for i, set := range f.Sets {
		if len(set) == 0 || len(set) != len(f.Sets[0]) {
			return nil, corruptf("set %d has %d drives, set 0 %d", i, len(set), len(f.Sets[0]))
		}
		for _, d := range set {
			if seen[d] {
				return nil, corruptf("drive %s listed twice", d)
			}
			seen[d] = true
		}
	}
	if _, _, err := f.Position(); err != nil {
		return nil, err
	}
	return f, nil
}

// Position returns this drive's set and its index in the set (both from
// 0). The index is the drive's place in an object's Distribution.
func (f *Format) Position() (set, index int, err error) {
	for s, drives := range f.Sets {
		for i, d := range drives {
			if d == f.This {
				return s, i, nil
			}
		}
	}
	return 0, 0, corruptf("this drive %q is in no set", f.This)
}

// SetDriveCount is the number of drives per erasure set.
func (f *Format) SetDriveCount() int { return len(f.Sets[0]) }

// SameDeployment reports whether g describes the same deployment and
// drive layout as f (on another drive).
func (f *Format) SameDeployment(g *Format) error {
	if f.DeploymentID != g.DeploymentID {
		return fmt.Errorf("minioformat: deployment %s, not %s", g.DeploymentID, f.DeploymentID)
	}
	if len(f.Sets) != len(g.Sets) {
		return fmt.Errorf("minioformat: %d sets, not %d", len(g.Sets), len(f.Sets))
	}
	for i := range f.Sets {
		if len(f.Sets[i]) != len(g.Sets[i]) {
			return fmt.Errorf("minioformat: set %d differs", i)
		}
		for j := range f.Sets[i] {
			if f.Sets[i][j] != g.Sets[i][j] {
				return fmt.Errorf("minioformat: set %d drive %d is %s, not %s", i, j, g.Sets[i][j], f.Sets[i][j])
			}
		}
	}
	return nil
}
