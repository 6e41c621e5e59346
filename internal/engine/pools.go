package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/drive"
)

// pool is one server pool: the drives of one command-line argument,
// with their own set geometry. An object lives in exactly one pool: a
// write to an existing key goes to the pool holding it (found by
// looking in every pool's set for the key), a new key goes to a pool
// picked in proportion to free space, among the pools not being drained.
type pool struct {
	index int // position among the pools (command-line order)
	// id is what the pool's formats record (drive.Format.PoolID); ""
	// for a first pool formatted before pools existed.
	id   string
	sets []*erasureSet
	// fresh is true when this start formatted the pool into an existing
	// deployment (an expansion): its drives get the deployment's bucket
	// records and config documents (seedPools).
	fresh bool
}

// drives are the pool's drives in slot order.
func (p *pool) drives() []drive.Drive {
	var out []drive.Drive
	for _, s := range p.sets {
		out = append(out, s.drives...)
	}
	return out
}

// poolStates remembers which pools are being drained (decommissioned):
// no new key goes to them. It is set from the decommission document
// (decommission.go).
type poolStates struct {
	mu       sync.RWMutex
	draining map[string]bool // by pool id
	// moving are the source pools of the latest rebalance (by id): a key
	// found in one of them and in another pool (a move cut short) is
	// the source's until the move removes it there (rebalance.go).
	moving map[string]bool
	// move paces decommission and rebalance moves (throttle.go).
	move movePacer
	// free caches each pool's free bytes for the pick of a new key's pool.
	free   []uint64
	freeAt time.Time
	// commits is the commit gate (decom_gate.go): shared by each commit,
	// taken alone to wait for the commits in progress.
	commits sync.RWMutex
}

func (ps *poolStates) isDraining(id string) bool {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return ps.draining[id]
}

func (ps *poolStates) setDraining(ids map[string]bool) {
	ps.mu.Lock()
	ps.draining = ids
	ps.mu.Unlock()
}

// PoolInfo describes one server pool (admin pool status).
type PoolInfo struct {
	Index    int    `json:"index"` // 1-based, in command-line order
	ID       string `json:"id"`
	Drives   int    `json:"drives"`
	Sets     int    `json:"sets"`
	SetSize  int    `json:"set_size"`
	Parity   int    `json:"parity"`
	Total    uint64 `json:"total"`
	Free     uint64 `json:"free"`
	Draining bool   `json:"draining"`
}

// Pools describes the server pools.
func (e *Engine) Pools(ctx context.Context) []PoolInfo {
	out := make([]PoolInfo, len(e.pools))
	for i, p := range e.pools {
		total, free := poolSpace(ctx, p)
		out[i] = PoolInfo{Index: i + 1, ID: p.id, Drives: len(p.drives()), Sets: len(p.sets), SetSize: len(p.sets[0].drives),
			Parity: p.sets[0].parity, Total: total, Free: free, Draining: e.poolState.isDraining(p.id)}
	}
	return out
}

// poolSpace sums the capacity of the pool's drives that answer.
func poolSpace(ctx context.Context, p *pool) (total, free uint64) {
	var mu sync.Mutex
	forEachDrive(p.drives(), func(_ int, d drive.Drive) error {
		ctx, cancel := context.WithTimeout(ctx, statusTimeout)
		defer cancel()
		info, err := d.DiskInfo(ctx)
		if err != nil {
			return err
		}
		mu.Lock()
		total += info.Total
		free += info.Free
		mu.Unlock()
		return nil
	})
	return total, free
}

// errOtherPool is a write that found its key in another pool than the
// one it wrote to (two first writes of a key raced to different pools,
// or a decommission moved the key meanwhile): it is refused as busy, and
// the client's retry finds the key's pool.
var errOtherPool = fmt.Errorf("%w: the key is held by another server pool", ErrBusy)

// keyHolders reports, for every pool, how many drives of the key's set
// in that pool hold a record of the key; err is set when a pool could
// not tell (too few drives answered for a "not here").
func (e *Engine) keyHolders(ctx context.Context, bucket, key string) ([]int, error) {
	found := make([]int, len(e.pools))
	errs := make([]error, len(e.pools))
	var wg sync.WaitGroup
	for i, p := range e.pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i], errs[i] = e.holds(ctx, e.setIn(p, bucket, key), bucket, key)
		}()
	}
	wg.Wait()
	return found, errors.Join(errs...)
}

// holds counts the drives of set holding a record of bucket/key. A
// count of 0 is an answer only when at least a read quorum of drives
// said "not found".
func (e *Engine) holds(ctx context.Context, set *erasureSet, bucket, key string) (int, error) {
	var mu sync.Mutex
	found, absent := 0, 0
	errs := forEachDrive(set.drives, func(_ int, d drive.Drive) error {
		if _, _, ok := recordInMemory(d, bucket, key, false); ok {
			mu.Lock()
			found++
			mu.Unlock()
			return nil
		}
		_, err := d.Get(ctx, drive.TableObjects, drive.ObjectKey(bucket, key))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			found++
		case errors.Is(err, drive.ErrNotFound):
			absent++
		default:
			return err
		}
		return nil
	})
	if found > 0 || absent >= len(set.drives)-set.parity {
		return found, nil
	}
	return 0, quorumError(fmt.Sprintf("pool %d: %s/%s", set.pool.index+1, bucket, key), errs, absent, len(set.drives)-set.parity)
}

// heldBy picks the pool holding a key from keyHolders' counts: a pool
// whose drives hold it with read quorum before one holding remnants;
// then a pool being drained or rebalanced from (its copy stays the
// key's until the move has copied it and removed it there); then the most
// holders, then the first. -1 when no pool holds it.
func (e *Engine) heldBy(found []int) int {
	best := -1
	rank := func(i int) []int {
		p := e.pools[i]
		q, d := 0, 0
		if found[i] >= len(p.sets[0].drives)-p.sets[0].parity {
			q = 1
		}
		if e.poolState.isLeaving(p.id) {
			d = 1
		}
		return []int{q, d, found[i]}
	}
	for i, n := range found {
		if n == 0 {
			continue
		}
		if best < 0 || slices.Compare(rank(i), rank(best)) > 0 {
			best = i
		}
	}
	return best
}

// readSet is the set holding bucket/key, for reads: with one pool no
// lookup is needed; with several, every pool is asked. A key held by
// no pool reads from the first pool (and is not found there).
func (e *Engine) readSet(ctx context.Context, bucket, key string) (*erasureSet, error) {
	if len(e.pools) == 1 {
		return e.setIn(e.pools[0], bucket, key), nil
	}
	found, err := e.keyHolders(ctx, bucket, key)
	if p := e.heldBy(found); p >= 0 {
		return e.setIn(e.pools[p], bucket, key), nil
	}
	if err != nil {
		return nil, err
	}
	return e.setIn(e.pools[0], bucket, key), nil
}

// writeSet is the set a write of bucket/key goes to: the pool holding
// the key, or for a new key a pool picked by free space among those not
// being drained. The commit checks again under the key's lock
// (checkSole).
func (e *Engine) writeSet(ctx context.Context, bucket, key string) (*erasureSet, error) {
	if len(e.pools) == 1 {
		return e.setIn(e.pools[0], bucket, key), nil
	}
	found, err := e.keyHolders(ctx, bucket, key)
	if p := e.heldBy(found); p >= 0 {
		return e.setIn(e.pools[p], bucket, key), nil
	}
	if err != nil {
		// A pool that cannot say whether it holds the key may hold it:
		// writing elsewhere could make a second copy.
		return nil, err
	}
	return e.setIn(e.pickPool(ctx), bucket, key), nil
}

// checkSole runs under the key's lock before a commit to set, inside
// the commit gate (enterCommit): no other pool may hold the key, and a
// pool being decommissioned takes no key it does not hold.
func (e *Engine) checkSole(ctx context.Context, set *erasureSet, bucket, key string) error {
	if len(e.pools) == 1 {
		return nil
	}
	found, err := e.keyHolders(ctx, bucket, key)
	for i, n := range found {
		if n > 0 && e.pools[i] != set.pool {
			return errOtherPool
		}
	}
	if err != nil {
		return err
	}
	// A new key picked this pool before its decommission was known here
	// (decom_gate.go).
	return e.checkOpen(found, set)
}

// uploadSet is the set holding a multipart upload: uploads stay in the
// pool they were started in, which is found by looking, until a
// decommission moves them (decom_uploads.go). Pools being drained are
// looked in first: an upload a move cut short holds in two pools is the
// drained pool's until the move removes it there.
func (e *Engine) uploadSet(ctx context.Context, bucket, key, uploadID string) *erasureSet {
	if len(e.pools) == 1 {
		return e.setIn(e.pools[0], bucket, key)
	}
	order := make([]*pool, 0, len(e.pools))
	for _, draining := range []bool{true, false} {
		for _, p := range e.pools {
			if e.poolState.isDraining(p.id) == draining {
				order = append(order, p)
			}
		}
	}
	for _, p := range order {
		set := e.setIn(p, bucket, key)
		if _, _, err := e.readUpload(ctx, set, bucket, key, uploadID); err == nil {
			return set
		}
	}
	return e.setIn(e.pools[0], bucket, key)
}

// freshness of the cached free space the pick of a new key's pool uses.
const poolFreeTTL = 10 * time.Second

// pickPool picks the pool for a new key: at random in proportion to the
// free space of the pools not being drained (the pools' free space is
// read at most every poolFreeTTL).
func (e *Engine) pickPool(ctx context.Context) *pool {
	ps := &e.poolState
	ps.mu.Lock()
	if len(ps.free) != len(e.pools) || time.Since(ps.freeAt) > poolFreeTTL {
		ps.mu.Unlock()
		free := make([]uint64, len(e.pools))
		for i, p := range e.pools {
			_, free[i] = poolSpace(ctx, p)
		}
		ps.mu.Lock()
		ps.free, ps.freeAt = free, time.Now()
	}
	var total uint64
	weights := make([]uint64, len(e.pools))
	open := e.cfg.Cluster.newKeyPools(len(e.pools)) // an expansion under way: the old pools only
	for i, p := range e.pools {
		if !ps.draining[p.id] && i < open {
			weights[i] = ps.free[i]/(1<<20) + 1
			total += weights[i]
		}
	}
	ps.mu.Unlock()
	if total == 0 {
		return e.pools[0] // every pool is being drained: refused later
	}
	r := rand.Uint64N(total)
	for i, w := range weights {
		if r < w {
			return e.pools[i]
		}
		r -= w
	}
	return e.pools[len(e.pools)-1]
}

// poolSeededKey marks a drive whose pool holds the deployment's bucket
// records and config documents (TableSystem).
const poolSeededKey = "pool/seeded"

// seedPools gives the drives of pools appended to an existing
// single-node deployment its bucket records and config documents, which
// live on every drive (driveState), then marks them: a start cut short
// before the mark seeds again. On a cluster they live in the consensus
// group and nothing is copied.
func (e *Engine) seedPools(ctx context.Context) error {
	if e.clustered() {
		return nil
	}
	var sources, targets []*pool
	for _, p := range e.pools {
		if seeded(ctx, p) {
			sources = append(sources, p)
		} else {
			targets = append(targets, p)
		}
	}
	if len(sources) == 0 {
		// Marks are new with pools: the pools formatted before this
		// start hold the state.
		for _, p := range e.pools {
			if !p.fresh {
				sources = append(sources, p)
			}
		}
	}
	if len(targets) == 0 {
		return nil
	}
	var moved []*pool
	for _, t := range targets {
		if len(sources) > 0 && !containsPool(sources, t) {
			moved = append(moved, t)
		}
	}
	if len(moved) > 0 {
		if err := e.copySharedState(ctx, sources, moved); err != nil {
			return err
		}
	}
	for _, t := range targets {
		errs := forEachDrive(t.drives(), func(_ int, d drive.Drive) error {
			b := &drive.Batch{}
			b.Put(drive.TableSystem, poolSeededKey, []byte("1"))
			return d.Apply(ctx, b)
		})
		if ok := countNil(errs); ok < len(t.drives())/2+1 {
			return fmt.Errorf("engine: mark pool %d seeded: %w", t.index+1, firstErr(errs))
		}
	}
	return nil
}

func containsPool(ps []*pool, p *pool) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// seeded reports whether most of a pool's drives carry the seeded mark.
func seeded(ctx context.Context, p *pool) bool {
	var mu sync.Mutex
	n := 0
	forEachDrive(p.drives(), func(_ int, d drive.Drive) error {
		if _, err := d.Get(ctx, drive.TableSystem, poolSeededKey); err == nil {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return nil
	})
	return n > len(p.drives())/2
}

// copySharedState writes the bucket records and config documents that
// the drives of from hold (by their quorum rules) onto every drive of
// to.
func (e *Engine) copySharedState(ctx context.Context, from, to []*pool) error {
	all := e.sets
	defer func() { e.sets = all }()
	e.sets = nil
	for _, p := range from {
		e.sets = append(e.sets, p.sets...)
	}
	s := driveState{e}
	buckets, err := s.scanRecords(ctx)
	if err != nil {
		return fmt.Errorf("engine: read bucket records to copy to a new pool: %w", err)
	}
	type entry struct {
		table drive.Table
		key   string
		value []byte
	}
	var entries []entry
	for name, info := range buckets {
		rec, _ := json.Marshal(recordOf(info))
		entries = append(entries, entry{drive.TableBuckets, name, rec})
	}
	for name := range s.configNames(ctx) {
		e.configMu.Lock()
		data, seq, _, err := s.readConfigLocked(ctx, name)
		e.configMu.Unlock()
		if errors.Is(err, ErrNoConfig) {
			continue
		}
		if err != nil {
			return fmt.Errorf("engine: read config %s to copy to a new pool: %w", name, err)
		}
		entries = append(entries, entry{drive.TableSystem, configKey(name), encodeConfig(seq, data)})
	}
	for _, p := range to {
		errs := forEachDrive(p.drives(), func(_ int, d drive.Drive) error {
			b := &drive.Batch{}
			for _, ent := range entries {
				b.Put(ent.table, ent.key, ent.value)
			}
			return d.Apply(ctx, b)
		})
		if ok := countNil(errs); ok < len(p.drives())/2+1 {
			return fmt.Errorf("engine: copy bucket records to pool %d: %w", p.index+1, firstErr(errs))
		}
	}
	return nil
}
