package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/ellipses"
	"github.com/shardstore/shardstore/internal/minioformat"
)

// A MinIO deployment of several server pools (`minio server /p1/d{1...4}
// /p2/d{1...8}`) is adopted pool by pool onto shardstore pools of the
// same geometry: each pool's drives keep their MinIO set and position
// within the pool, get a pool id of their own (derived from MinIO's
// drive ids, so a resumed run writes the same), and each key stays in
// the pool MinIO had it in, where the engine finds it (it looks a key up
// in every pool; docs/pools.md). What the pools share is read across
// them: a bucket's .metadata.bin is in the pool MinIO last wrote it to (the pool MinIO
// put that object in), so every pool's adopter reads it from whichever
// pool holds it, and every pool's drives get the record of every bucket
// of the deployment. pool.bin (the same object in every pool: the pools
// by their arguments, and each one's decommission) decides what can be
// adopted (checkPoolMeta).

// poolSet is the deployment's pools in a multi-pool adoption.
type poolSet struct {
	all     []*adopter
	args    []string
	buckets []string // the buckets of every pool
}

// fromPools adopts a deployment of several pools, one after the other;
// every check that spans them is made before anything is written.
func (a *adopter) fromPools(ctx context.Context) (*Report, error) {
	opts := a.opts
	if len(opts.PoolArgs) != len(opts.Pools) {
		return nil, fmt.Errorf("migrate: %d pools but %d pool arguments", len(opts.Pools), len(opts.PoolArgs))
	}
	ps := &poolSet{args: opts.PoolArgs}
	slotOff := 0
	for i, drives := range opts.Pools {
		o := opts
		o.Drives, o.Pools, o.PoolArgs = drives, nil, nil
		sub := &adopter{opts: o, start: a.start, last: a.last, poolSet: ps, pool: i}
		if a.cl != nil {
			// A node's share of a multi-node deployment: the pool's slots
			// follow the pools before it; the other nodes' drives are
			// read from their staged packs.
			sub.cl, sub.packs, sub.slotOff = a.cl, a.packs, slotOff
		}
		slotOff += len(drives)
		if err := sub.orderDrives(); err != nil {
			return nil, fmt.Errorf("pool %d (%s): %w", i+1, ps.args[i], err)
		}
		if sub.cl != nil {
			if err := sub.checkClusterOrder(); err != nil {
				return nil, fmt.Errorf("pool %d (%s): %w", i+1, ps.args[i], err)
			}
		}
		ps.all = append(ps.all, sub)
	}
	first := ps.all[0].format
	for i, p := range ps.all {
		if p.format.DeploymentID != first.DeploymentID {
			return nil, fmt.Errorf("%w: pool %d (%s) is of MinIO deployment %s, pool 1 (%s) of %s: the pools of one deployment share its id",
				ErrRefused, i+1, ps.args[i], p.format.DeploymentID, ps.args[0], first.DeploymentID)
		}
		for j := range i {
			if ps.all[j].format.Sets[0][0] == p.format.Sets[0][0] {
				return nil, fmt.Errorf("%w: pools %d (%s) and %d (%s) are the same MinIO pool", ErrRefused, j+1, ps.args[j], i+1, ps.args[i])
			}
		}
		p.poolID = minioPoolID(p.format)
	}
	pm, err := ps.poolMeta()
	if err != nil {
		return nil, err
	}
	var counts []int
	for _, p := range ps.all {
		counts = append(counts, p.n())
	}
	notes, err := checkPoolMeta(pm, ps.args, counts)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Out, "MinIO deployment %s: %d server pools\n", first.DeploymentID, len(ps.all))
	for _, n := range notes {
		fmt.Fprintf(opts.Out, "NOTE: %s\n", n)
	}
	names := map[string]bool{}
	for _, p := range ps.all {
		for _, b := range majorityBuckets(p.paths, p.readDir) {
			names[b] = true
		}
	}
	for b := range names {
		ps.buckets = append(ps.buckets, b)
	}
	sort.Strings(ps.buckets)

	if opts.Finish {
		// A pool's --finish removes MinIO's names of the keys it adopted
		// and of those another pool adopted, whose versions here that
		// pool copies: only once every pool's adoption is complete.
		for i, p := range ps.all {
			st, err := p.poolState(ctx)
			if err != nil {
				return nil, fmt.Errorf("pool %d (%s): %w", i+1, ps.args[i], err)
			}
			if st != stateAdopted && st != stateFinished {
				return nil, fmt.Errorf("%w: pool %d (%s): the adoption has not completed (state %q): run it (again) without --finish first",
					ErrRefused, i+1, ps.args[i], st)
			}
		}
	}
	var finishRefused []Refusal
	if opts.Finish {
		// MinIO's files of a key split over pools, in the pools that did
		// not adopt it, go only where the pool that owns it adopted it;
		// all of them before any pool forgets its journal entries
		// (finish_moved.go).
		if finishRefused, err = ps.finishMovedPools(ctx); err != nil {
			return nil, err
		}
	}
	if !opts.DryRun && !opts.Finish {
		// Every pool's drives are formatted and say "adopting" before
		// the first pool is adopted, so that a server started on them
		// before the end refuses them all, not a pool still MinIO's
		// (which it would take for a new pool to format).
		for i, p := range ps.all {
			if err := p.markAdopting(ctx); err != nil {
				return nil, fmt.Errorf("pool %d (%s): %w", i+1, ps.args[i], err)
			}
		}
	}
	total := &Report{}
	for i, p := range ps.all {
		fmt.Fprintf(opts.Out, "pool %d (%s, shardstore pool id %s): ", i+1, ps.args[i], p.poolID)
		fmt.Fprint(opts.Out, p.describeLayout())
		rep, err := p.run(ctx)
		if err != nil {
			return nil, fmt.Errorf("pool %d (%s): %w", i+1, ps.args[i], err)
		}
		total.merge(rep)
		if i+1 < len(ps.all) {
			ps.all[i+1].steps = p.steps // one count of writes for crashAtEnv
		}
	}
	total.Refused = append(total.Refused, finishRefused...)
	total.Elapsed = time.Since(a.start)
	verb := "adopted"
	if opts.DryRun {
		verb = "would adopt"
	}
	if opts.Finish {
		fmt.Fprintf(opts.Out, "all %d pools: MinIO's names of %d keys removed; %d keys split over pools left, with MinIO's files in every pool (the pool of their newest version refused them); other refused keys were left too\n", len(ps.all), total.Finished, len(total.Refused))
	} else {
		fmt.Fprintf(opts.Out, "all %d pools: %s %d keys, %d versions, %d bytes of objects (%d keys with versions in several pools, adopted by the pool of their newest version unless refused: %d versions moved into it from the others); refused: %d; took %s\n",
			len(ps.all), verb, total.Keys, total.Versions, total.Bytes, total.Moved, total.PoolCopied, len(total.Refused), total.Elapsed.Round(time.Millisecond))
	}
	if !opts.DryRun && !opts.Finish {
		fmt.Fprintf(opts.Out, "serve it with: shardstore server %s\n", strings.Join(ps.args, " "))
	}
	return total, nil
}

// minioPoolID is the shardstore pool id of the MinIO pool whose drives
// have format f: derived from the deployment id and the pool's first
// drive id, so every run (a resumed one too) writes the same.
func minioPoolID(f *minioformat.Format) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("shardstore/minio-pool/"+f.DeploymentID+"/"+f.Sets[0][0])).String()
}

// merge adds r's counts to t.
func (t *Report) merge(r *Report) {
	t.Buckets = max(t.Buckets, r.Buckets)
	t.Keys += r.Keys
	t.Versions += r.Versions
	t.Bytes += r.Bytes
	t.Linked += r.Linked
	t.ShardBytes += r.ShardBytes
	t.Written += r.Written
	t.Uploads += r.Uploads
	t.Refused = append(t.Refused, r.Refused...)
	t.Finished += r.Finished
	t.Moved += r.Moved
	t.UploadParts += r.UploadParts
	t.UploadPartsLeft += r.UploadPartsLeft
	t.UploadsUnknown += r.UploadsUnknown
	t.UnknownUploads = append(t.UnknownUploads, r.UnknownUploads...)
	t.CopiedVersions += r.CopiedVersions
	t.CopiedBytes += r.CopiedBytes
	t.Decrypted += r.Decrypted
	t.Decompressed += r.Decompressed
	t.PoolCopied += r.PoolCopied
	t.CopiedShardBytes += r.CopiedShardBytes
	t.MetaBytes += r.MetaBytes
	t.InlineBytes += r.InlineBytes
	t.Total += r.Total
}

// readSysObject reads an object of MinIO's .minio.sys volume: from this
// pool's drives, or in a multi-pool adoption from the pool holding its
// newest version: MinIO writes such an object into a pool it picks by
// free space, each time, so a bucket's .metadata.bin can be in several
// pools, the older copies stale (the minio-4nodes-pools fixture has the
// bucket's creation in pool 1 and its versioning, written later, in
// pool 2).
func (a *adopter) readSysObject(rel string) ([]byte, bool, error) {
	if a.poolSet == nil {
		return a.readPoolSysObject(rel)
	}
	var best []byte
	var bestAt int64
	found := false
	for _, p := range a.poolSet.all {
		data, at, ok, err := p.readPoolSysObjectAt(rel)
		if err != nil {
			return nil, true, err
		}
		if ok && (!found || at > bestAt) {
			best, bestAt, found = data, at, true
		}
	}
	return best, found, nil
}

// poolMeta reads pool.bin: every pool holds a copy (MinIO writes it to
// each); the one last updated counts. nil when no pool has one (a MinIO
// from before pool.bin, which could not decommission).
func (ps *poolSet) poolMeta() (*minioformat.PoolMeta, error) {
	var best *minioformat.PoolMeta
	var bestAt time.Time
	for i, p := range ps.all {
		data, found, err := p.readPoolSysObject("pool.bin")
		if err != nil {
			return nil, fmt.Errorf("%w: pool %d (%s): .minio.sys/pool.bin: %w", ErrRefused, i+1, ps.args[i], err)
		}
		if !found {
			continue
		}
		pm, err := minioformat.DecodePoolMeta(data)
		if err != nil {
			return nil, fmt.Errorf("%w: pool %d (%s): .minio.sys/pool.bin: %w", ErrRefused, i+1, ps.args[i], err)
		}
		at := lastUpdate(pm)
		if best == nil || at.After(bestAt) {
			best, bestAt = pm, at
		}
	}
	return best, nil
}

// checkPools checks, in an adoption of one pool, that the deployment has
// no other pool that holds objects: pool.bin lists every pool of a
// deployment of several (format.json describes only its own pool).
func (a *adopter) checkPools() error {
	data, found, err := a.readPoolSysObject("pool.bin")
	if err != nil {
		return fmt.Errorf("%w: .minio.sys/pool.bin: %w", ErrRefused, err)
	}
	if !found {
		return nil
	}
	pm, err := minioformat.DecodePoolMeta(data)
	if err != nil {
		return fmt.Errorf("%w: .minio.sys/pool.bin: %w", ErrRefused, err)
	}
	if len(pm.Pools) < 2 {
		return nil
	}
	arg := strings.Join(a.opts.Drives, " ")
	if len(a.opts.PoolArgs) == 1 {
		arg = a.opts.PoolArgs[0]
	}
	notes, err := checkPoolMeta(pm, []string{arg}, []int{len(a.opts.Drives)})
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(a.opts.Out, "NOTE: %s\n", n)
	}
	return nil
}

// lastUpdate is the latest update time of pool.bin's pools.
func lastUpdate(pm *minioformat.PoolMeta) time.Time {
	var t time.Time
	for _, p := range pm.Pools {
		if p.Updated.After(t) {
			t = p.Updated
		}
	}
	return t
}

// checkPoolMeta decides from pool.bin (pm; nil: none) whether the pools
// given by their arguments can be adopted, and returns notes for the
// operator. A pool is matched to pool.bin's by its argument; when the
// arguments differ from MinIO's (drives mounted elsewhere), in order,
// as long as no pool was ever decommissioned (then which one was must
// be known). Refused: a pool MinIO is decommissioning (its keys may be
// in two pools until it ends), a pool whose decommission is complete
// (MinIO asks for it to be removed from the command line: what is left
// on it is not the deployment's), and leaving out a pool that is not
// fully decommissioned (its objects would be lost). A pool whose
// decommission failed or was canceled is adopted as a pool like the
// others; a key it holds that another pool holds too is refused
// (inOtherPool).
func checkPoolMeta(pm *minioformat.PoolMeta, args []string, counts []int) ([]string, error) {
	if pm == nil || len(pm.Pools) == 0 {
		if len(args) > 1 {
			return []string{"the deployment has no .minio.sys/pool.bin (a MinIO from before 2022): no decommission to check"}, nil
		}
		return nil, nil
	}
	match := make([]int, len(args)) // given pool -> pool.bin's
	byArg := map[string]int{}
	for j, p := range pm.Pools {
		byArg[p.CmdLine] = j
	}
	matched := true
	used := map[int]bool{}
	for i, a := range args {
		j, ok := byArg[a]
		if !ok || used[j] {
			matched = false
			break
		}
		match[i], used[j] = j, true
	}
	var notes []string
	if !matched {
		// Drives mounted elsewhere than MinIO had them: pair the
		// arguments with pool.bin's pools in order, by drive count, a
		// pool left out only if its decommission is complete; only one
		// pairing may fit.
		fits := alignPools(pm, counts)
		switch {
		case len(fits) == 0:
			return nil, fmt.Errorf("%w: the deployment has %d server pools (.minio.sys/pool.bin: %s), and the %d given (%s) are not all of them (a pool may be left out only once MinIO's decommission of it is complete): %s",
				ErrRefused, len(pm.Pools), describePools(pm), len(args), strings.Join(args, " "), poolsRefusal)
		case len(fits) > 1:
			return nil, fmt.Errorf("%w: MinIO's pool.bin lists the server pools %s; the arguments %s are not MinIO's, and they pair with those pools in more than one way: give the arguments as MinIO had them",
				ErrRefused, describePools(pm), strings.Join(args, " "))
		}
		match = fits[0]
		used = map[int]bool{}
		for i, j := range match {
			used[j] = true
			notes = append(notes, fmt.Sprintf("pool %s is MinIO's pool %d (%s): paired in order by drive count", args[i], j+1, pm.Pools[j].CmdLine))
		}
	}
	for i, j := range match {
		p := pm.Pools[j]
		d := p.Decommission
		if d == nil {
			continue
		}
		switch d.State() {
		case "complete":
			return nil, fmt.Errorf("%w: MinIO decommissioned pool %s completely (started %s, %d objects moved): leave its drives out of the arguments, "+
				"as MinIO asks (\"please remove from server command line\"); what is left on them is not the deployment's", ErrRefused, args[i], d.Started.Format(time.RFC3339), d.Objects)
		case "in progress":
			return nil, fmt.Errorf("%w: MinIO was decommissioning pool %s (started %s, %d objects moved, at %s/%s): until it ends a key may be in two pools. "+
				"Start MinIO again and let the decommission complete (`mc admin decommission status`), or cancel it (`mc admin decommission cancel`), then stop MinIO and adopt",
				ErrRefused, args[i], d.Started.Format(time.RFC3339), d.Objects, d.Bucket, d.Object)
		default:
			notes = append(notes, fmt.Sprintf("MinIO's decommission of pool %s %s (started %s, %d objects moved): the pool is adopted as one taking new objects; "+
				"a key with versions in it and in another pool is adopted into the pool of its newest version; decommission it with `shardstore admin pool decommission start %d` once serving",
				args[i], d.State(), d.Started.Format(time.RFC3339), d.Objects, i+1))
		}
	}
	for j, p := range pm.Pools {
		if used[j] {
			continue
		}
		if d := p.Decommission; d != nil && d.Complete {
			notes = append(notes, fmt.Sprintf("pool %s, decommissioned completely by MinIO, is left out, as it should be", p.CmdLine))
			continue
		}
		return nil, fmt.Errorf("%w: the deployment has %d server pools (.minio.sys/pool.bin: %s) and pool %s is not given: its objects would be lost. %s",
			ErrRefused, len(pm.Pools), describePools(pm), p.CmdLine, poolsRefusal)
	}
	return notes, nil
}

// alignPools lists the ways of pairing the given pools (their drive
// counts, in order) with pool.bin's pools in order: each pool.bin pool
// either paired with the next given pool of its drive count (counted by
// expanding its argument) or left out, which only a completely
// decommissioned one may be.
func alignPools(pm *minioformat.PoolMeta, counts []int) [][]int {
	size := make([]int, len(pm.Pools))
	for j, p := range pm.Pools {
		size[j] = -1
		if drives, err := ellipses.Expand(p.CmdLine); err == nil {
			size[j] = len(drives)
		}
	}
	var out [][]int
	var walk func(i, j int, acc []int)
	walk = func(i, j int, acc []int) {
		if len(out) > 1 {
			return
		}
		if j == len(pm.Pools) {
			if i == len(counts) {
				out = append(out, append([]int(nil), acc...))
			}
			return
		}
		if i < len(counts) && size[j] == counts[i] {
			walk(i+1, j+1, append(acc, j))
		}
		if d := pm.Pools[j].Decommission; d != nil && d.Complete {
			walk(i, j+1, acc)
		}
	}
	walk(0, 0, nil)
	return out
}

// describePools lists pool.bin's pools for a message.
func describePools(pm *minioformat.PoolMeta) string {
	var out []string
	for _, p := range pm.Pools {
		s := p.CmdLine
		if d := p.Decommission; d != nil {
			s += " (decommission " + d.State() + ")"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// majorityBuckets are the top-level directories on a majority of paths.
func majorityBuckets(paths []string, readDir func(string) ([]fs.DirEntry, error)) []string {
	var out []string
	for b, c := range bucketDirs(paths, readDir) {
		if c > len(paths)/2 {
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}

// hasKey reports whether any drive of set holds MinIO's xl.meta of
// bucket/rel.
func (a *adopter) hasKey(bucket, rel string, set int) bool {
	for _, d := range a.setPaths(set) {
		if _, err := a.stat(filepath.Join(d, bucket, filepath.FromSlash(rel), "xl.meta")); err == nil {
			return true
		}
	}
	return false
}

// mergePools handles a key that other pools hold too: MinIO (this
// release) puts a new version of an existing key in a pool it picks by
// free space, so one key's versions can be spread over pools; it lists
// them merged and serves, for each version id, the newest copy. Every
// pool's adopter decides the key's versions in every pool holding it
// (kept: this pool's), merges them newest first (equal times: the lower
// pool first), keeps one copy of each version id (the first: newest),
// and the pool holding the newest version adopts the key, the other
// pools' versions copied into it (from[i]: the pool version i comes
// from, nil for this one); move reports that another pool adopts it.
// Every pool computes the same from the same files. A refusal in any
// pool refuses the key in all.
func (a *adopter) mergePools(bucket, rel string, kept []*candidate) (merged []*candidate, from []*adopter, move bool, reason string) {
	type held struct {
		c *candidate
		p *adopter
	}
	var all []held
	others := false
	for q, p := range a.poolSet.all {
		if q == a.pool {
			for _, c := range kept {
				all = append(all, held{c, a})
			}
			continue
		}
		set := p.setOf(bucket, rel)
		if !p.hasKey(bucket, rel, set) {
			continue
		}
		others = true
		ks, why := p.decideKey(bucket, rel, set)
		if why != "" {
			return nil, nil, false, fmt.Sprintf("its versions are in pools %d and %d, and in pool %d %s", a.pool+1, q+1, q+1, why)
		}
		for _, c := range ks {
			all = append(all, held{c, p})
		}
	}
	if !others {
		return kept, nil, false, ""
	}
	// Equal times (a version a decommission copied, cut short): the pool
	// with the lower id, which is the same whatever order the pools are
	// given in, run after run.
	sort.SliceStable(all, func(i, j int) bool {
		ti, tj := all[i].c.ver.Header.ModTime, all[j].c.ver.Header.ModTime
		if ti != tj {
			return ti > tj
		}
		return all[i].p.poolID < all[j].p.poolID
	})
	if len(all) == 0 {
		return nil, nil, false, ""
	}
	owner := all[0].p
	seen := map[[16]byte]bool{}
	var kept2 []held
	for _, h := range all {
		if seen[h.c.ver.Header.VersionID] {
			continue // an older copy of a version another pool holds newer
		}
		seen[h.c.ver.Header.VersionID] = true
		kept2 = append(kept2, h)
	}
	if a.cl != nil {
		// A node's share of a cluster moves a version between pools only
		// when its data is in the staged metadata; every pool of every
		// node decides this alike, so that no pool journals (for
		// --finish) a key its owner refuses.
		for _, h := range kept2 {
			if h.p == owner || h.c.ver.Object == nil {
				continue
			}
			if why := owner.clusterMoveRefusal(h.c.ver.Object); why != "" {
				return nil, nil, false, fmt.Sprintf("version %s in pool %d, to be moved into pool %d: %s", h.c.ver.ID(), h.p.pool+1, owner.pool+1, why)
			}
		}
	}
	if owner != a {
		return nil, nil, true, ""
	}
	for _, h := range kept2 {
		merged = append(merged, h.c)
		if h.p == a {
			from = append(from, nil)
		} else {
			from = append(from, h.p)
		}
	}
	return merged, from, false, ""
}

// markAdopting formats the pool's drives for shardstore and records
// "adopting" on them, unless they record a completed adoption.
func (a *adopter) markAdopting(ctx context.Context) error {
	if err := a.openDrives(ctx); err != nil {
		return err
	}
	defer func() {
		a.closeDrives()
		a.drives = nil
	}()
	st, err := a.state(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if st == stateAdopted || st == stateFinished {
		return nil
	}
	return a.setState(ctx, stateAdopting)
}

// poolState reads the adoption state the pool's drives record, opening
// them as --finish does (nothing written).
func (a *adopter) poolState(ctx context.Context) (string, error) {
	a.drives = make([]*drive.Local, a.n())
	defer func() {
		a.closeDrives()
		a.drives = nil
	}()
	for i, p := range a.paths {
		d, err := drive.OpenLocal(p, drive.LocalOptions{NoSync: a.opts.NoSync, NoCreate: true})
		if err != nil {
			return "", fmt.Errorf("migrate: open drive %s: %w", p, err)
		}
		a.drives[i] = d
	}
	st, err := a.state(ctx)
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	return st, nil
}
