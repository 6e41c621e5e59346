package migrate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shardstore/shardstore/internal/minioformat"
	"github.com/shardstore/shardstore/internal/placement"
)

// A MinIO deployment of several erasure sets on one node (server
// /d{1...32}: 2 sets of 16) is adopted whole: every drive keeps its
// MinIO set and position as its shardstore set and slot, and the drive
// formats record MinIO's placement (placement.MinIOSipMod), so the
// engine looks for every adopted object in the set MinIO put it in and
// places new ones by the same rule.

// maxSetSize is the largest erasure set shardstore forms (engine
// chooseSetSize); MinIO's sets are 2..16 drives too.
const maxSetSize = 16

// maxSets is the most erasure sets an adoption takes (1,024 drives of
// sets of 16): keys records the sets a key was found in as bits.
const maxSets = 64

// clusterRefusal says how a node's share of a multi-node MinIO
// deployment is adopted (cluster.go) when only some of its drives are
// given as paths.
const clusterRefusal = "a node's share of a multi-node MinIO deployment is adopted by giving the endpoints the MinIO servers had " +
	"(http://node{1...N}:PORT/path{1...M}) to `shardstore migrate from-minio` on every node at once"

// poolsRefusal says how a deployment of several server pools is given.
const poolsRefusal = "a deployment of several server pools is adopted by giving every pool's drives, one argument per pool " +
	"as MinIO had them (/pool1/d{1...4} /pool2/d{1...8})"

// orderDrives reads each drive's format.json and orders the drives by
// their place in MinIO's deployment (set by set, each set by position):
// a.paths[s*setSize+i] is position i of set s, whatever the order of
// the arguments.
func (a *adopter) orderDrives() error {
	if len(a.opts.Drives) == 0 {
		return fmt.Errorf("%w: no drives given", ErrRefused)
	}
	for _, d := range a.opts.Drives {
		if strings.HasPrefix(d, "http://") || strings.HasPrefix(d, "https://") {
			return fmt.Errorf("%w: %s is a drive of a multi-node MinIO deployment: %s", ErrRefused, d, clusterRefusal)
		}
	}
	formats := make([]*minioformat.Format, len(a.opts.Drives))
	for i, p := range a.opts.Drives {
		raw, err := a.readFile(filepath.Join(p, minioSys, "format.json"))
		if err != nil {
			return fmt.Errorf("%w: drive %s: %w (is it a MinIO drive?)", ErrRefused, p, err)
		}
		if formats[i], err = minioformat.ParseFormat(raw); err != nil {
			return fmt.Errorf("%w: drive %s: %w", ErrRefused, p, err)
		}
	}
	a.format = formats[0]
	// Another pool of the same deployment has its own format.json sets:
	// say so rather than that the drives disagree.
	for i, f := range formats {
		if f.DeploymentID == a.format.DeploymentID && a.format.SameDeployment(f) != nil {
			return fmt.Errorf("%w: drives %s and %s are in different server pools of deployment %s: %s",
				ErrRefused, a.opts.Drives[0], a.opts.Drives[i], f.DeploymentID, poolsRefusal)
		}
	}
	if err := a.checkLayout(); err != nil {
		return err
	}
	paths := make([]string, len(a.opts.Drives))
	for i, p := range a.opts.Drives {
		f := formats[i]
		if err := a.format.SameDeployment(f); err != nil {
			return fmt.Errorf("%w: drive %s: %w", ErrRefused, p, err)
		}
		set, pos, err := f.Position()
		if err != nil {
			return fmt.Errorf("%w: drive %s: %w", ErrRefused, p, err)
		}
		g := set*a.setSize + pos
		if paths[g] != "" {
			return fmt.Errorf("%w: drives %s and %s both claim position %d of set %d", ErrRefused, paths[g], p, pos+1, set+1)
		}
		paths[g] = p
	}
	a.paths = paths
	return nil
}

// checkLayout decides, from the first drive's format.json, whether the
// deployment can be adopted with the drives given, and sets the
// geometry and placement.
func (a *adopter) checkLayout() error {
	f := a.format
	a.sets, a.setSize = len(f.Sets), f.SetDriveCount()
	total := a.sets * a.setSize
	if len(a.opts.Drives) != total {
		return fmt.Errorf("%w: the MinIO deployment has %d drives (%d erasure sets of %d) but %d were given: give every drive of it. "+
			"If the others are on other nodes: %s", ErrRefused, total, a.sets, a.setSize, len(a.opts.Drives), clusterRefusal)
	}
	// shardstore server DRIVES... forms sets of the recorded size from
	// the arguments in order; it can only if the size is one it forms.
	if a.setSize < 1 || a.setSize > maxSetSize {
		return fmt.Errorf("%w: MinIO's erasure sets have %d drives; shardstore forms sets of 1..%d", ErrRefused, a.setSize, maxSetSize)
	}
	if a.sets > maxSets {
		return fmt.Errorf("%w: the MinIO deployment has %d erasure sets; adoption handles up to %d", ErrRefused, a.sets, maxSets)
	}
	alg, err := placement.FromMinIO(f.DistributionAlgo)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if a.placer, err = placement.New(alg, f.DeploymentID); err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return nil
}

// setOf is the set MinIO placed a key (its path form, rel) of bucket
// in; the engine finds it there by the same placement.
func (a *adopter) setOf(bucket, rel string) int {
	return a.placer.Set(bucket, objectKey(rel), a.sets)
}

// setPaths are the drives of set s, by position.
func (a *adopter) setPaths(s int) []string {
	return a.paths[s*a.setSize : (s+1)*a.setSize]
}

// describeLayout says what was found, and in which order shardstore's
// server must get the drives when the arguments were in another.
func (a *adopter) describeLayout() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MinIO deployment %s: %d erasure set(s) of %d drives, objects placed by %s\n",
		a.format.DeploymentID, a.sets, a.setSize, a.format.DistributionAlgo)
	same := true
	for i, p := range a.paths {
		if a.opts.Drives[i] != p {
			same = false
		}
	}
	if !same {
		// shardstore server takes its arguments in order as slots (and
		// refuses drives given in another slot than their format's).
		// Several ellipses in one argument expand differently: MinIO
		// varies the leftmost fastest (/m{1...2}/d{1...3}: /m1/d1
		// /m2/d1 ...), shardstore the rightmost (/m1/d1 /m1/d2 ...).
		fmt.Fprintf(&b, "NOTE: the drives were given in another order than MinIO's sets: shardstore server would refuse them in this order "+
			"(with several {...} in one argument, MinIO varies the leftmost fastest, shardstore the rightmost); start it with the drives in MinIO's order, set by set:\n  shardstore server %s\n",
			strings.Join(a.paths, " "))
	}
	return b.String()
}

// setList names the sets of mask (bit s: set s+1) for a message.
func setList(mask uint64, sets int) string {
	var names []string
	for s := range min(sets, maxSets) {
		if mask&(1<<s) != 0 {
			names = append(names, fmt.Sprint(s+1))
		}
	}
	return strings.Join(names, ", ")
}
