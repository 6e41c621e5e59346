package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// rebalDoc is the config document holding the rebalance's state (in the
// consensus group on a cluster, on the drives of a single node): which
// pools it moves objects from, its goal, and its progress. Every node
// reads it (the source pools are the keys' pools while a move of theirs
// is cut short); the node that scans moves the objects.
const rebalDoc = "pools/rebalance"

// The states of a rebalance.
const (
	RebalRunning  = "running"  // objects are being moved off the fullest pools
	RebalComplete = "complete" // every source pool is down to the goal
	RebalCanceled = "canceled" // stopped by the operator; what was moved stays moved
)

// DefaultRebalThreshold is how far (as a fraction of capacity) a pool's
// used fraction may be above the mean before a rebalance moves objects
// off it.
const DefaultRebalThreshold = 0.05

// RebalStatus is the state of the rebalance (admin pool rebalance status).
type RebalStatus struct {
	State string `json:"state"` // "" when none ever ran
	// Threshold is the fraction of capacity a pool's use may be above
	// the mean; a source pool moves objects until it is at the mean.
	Threshold float64   `json:"threshold"`
	Started   time.Time `json:"started,omitzero"`
	Updated   time.Time `json:"updated,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	// Mean is the used fraction of all the pools together at the
	// latest check.
	Mean   float64     `json:"mean"`
	Pools  []RebalPool `json:"pools,omitempty"`
	Passes int         `json:"passes"`
	Note   string      `json:"note,omitempty"`
	Paused string      `json:"paused,omitempty"` // why it waits (a decommission)
}

// RebalPool is one pool's part in a rebalance.
type RebalPool struct {
	PoolID string `json:"pool_id"`
	// Pool is the pool's 1-based position on this node's command line
	// (0 once it is no longer given).
	Pool int `json:"pool"`
	// Source: objects are moved off this pool (its use was above the
	// mean by more than the threshold at the start).
	Source bool `json:"source"`
	// UsedStart and Used are the pool's used fraction at the start and
	// at the latest check.
	UsedStart float64 `json:"used_start"`
	Used      float64 `json:"used"`
	// Goal is how many bytes of disk space (shards, parity included) a
	// source pool frees to come down to the mean of the start; Moved is
	// what its moves freed so far. Goal, not the pool's measured use,
	// says when a source is done: on a cluster the data of a moved key
	// is freed minutes later (a download another node started may still
	// read it), so the measured use lags the moves.
	Goal  int64 `json:"goal"`
	Moved int64 `json:"moved"`
	// Done: a source pool that freed its goal (or has nothing more that
	// could be moved).
	Done bool `json:"done,omitempty"`
	// Objects (keys), Versions and Bytes moved off this pool.
	Objects   int64  `json:"objects"`
	Versions  int64  `json:"versions"`
	Bytes     int64  `json:"bytes"`
	Failed    int64  `json:"failed"`
	LastError string `json:"last_error,omitempty"`
	// Uploads are the multipart uploads in progress moved off this pool
	// (with their parts, after its keys: rebal_uploads.go).
	Uploads int64 `json:"uploads,omitempty"`
}

// ParseThreshold reads a rebalance threshold: a fraction in (0, 1)
// ("0.05") or a percentage ("5%"); "" is DefaultRebalThreshold.
func ParseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return DefaultRebalThreshold, nil
	}
	div := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, div = p, 100
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: threshold %q: want a fraction (0.05) or a percentage (5%%)", ErrInvalidArgument, s)
	}
	f /= div
	if f <= 0 || f >= 1 {
		return 0, fmt.Errorf("%w: threshold %q: want more than 0 and less than 100%%", ErrInvalidArgument, s)
	}
	return f, nil
}

// readRebal reads the rebalance document (State "" when none).
func (e *Engine) readRebal(ctx context.Context) (RebalStatus, uint64, error) {
	var st RebalStatus
	data, seq, err := e.ReadConfig(ctx, rebalDoc)
	if errors.Is(err, ErrNoConfig) {
		return st, 0, nil
	}
	if err != nil {
		return st, 0, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, 0, fmt.Errorf("engine: config %s: %w", rebalDoc, err)
	}
	return st, seq, nil
}

// updateRebal applies change to the document and writes it back,
// retrying on a concurrent change.
func (e *Engine) updateRebal(ctx context.Context, change func(*RebalStatus) error) (RebalStatus, error) {
	for {
		st, seq, err := e.readRebal(ctx)
		if err != nil {
			return st, err
		}
		if err := change(&st); err != nil {
			return st, err
		}
		data, _ := json.Marshal(st)
		_, err = e.WriteConfig(ctx, rebalDoc, seq, data)
		if errors.Is(err, ErrConfigConflict) {
			continue
		}
		if err == nil {
			e.applyRebal(st)
		}
		return st, err
	}
}

// applyRebal marks the rebalance's source pools: a key held by one of
// them and by another pool is read from the source (its copy is whole
// until the move removes it there). A finished rebalance's sources stay
// marked: a key left in two pools by a crash is still read from the one
// whose copy is whole.
func (e *Engine) applyRebal(st RebalStatus) {
	ids := map[string]bool{}
	for _, p := range st.Pools {
		if p.Source {
			ids[p.PoolID] = true
		}
	}
	ps := &e.poolState
	ps.mu.Lock()
	ps.moving = ids
	ps.mu.Unlock()
}

// isLeaving reports whether pool id is being drained or rebalanced from.
func (ps *poolStates) isLeaving(id string) bool {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	return ps.draining[id] || ps.moving[id]
}

// followRebal rereads the document on a node that does not scan.
func (e *Engine) followRebal(ctx context.Context) {
	if st, _, err := e.readRebal(ctx); err == nil {
		e.applyRebal(st)
	}
}

// poolUse is one pool's used fraction and capacity.
type poolUse struct {
	used, total uint64
}

func (u poolUse) fraction() float64 {
	if u.total == 0 {
		return 0
	}
	return float64(u.used) / float64(u.total)
}

// rebalPools are the pools a rebalance spreads over: every pool that is
// not being (or has not been) decommissioned, and takes new keys (the
// pools an expansion under way appends take none: a node still on the
// old list would not find a key moved there, and canceling the
// expansion relies on them holding no key).
func (e *Engine) rebalPools(ctx context.Context) ([]*pool, error) {
	doc, _, err := e.readDecom(ctx)
	if err != nil {
		return nil, err
	}
	open := e.cfg.Cluster.newKeyPools(len(e.pools))
	var out []*pool
	for i, p := range e.pools {
		if i >= open {
			continue
		}
		if st := doc.Pools[p.id]; st == nil || st.State == DecomCanceled {
			out = append(out, p)
		}
	}
	return out, nil
}

// decomDraining reports whether a decommission is moving objects.
func (e *Engine) decomDraining(ctx context.Context) (bool, error) {
	doc, _, err := e.readDecom(ctx)
	if err != nil {
		return false, err
	}
	for _, st := range doc.Pools {
		if st.State == DecomDraining {
			return true, nil
		}
	}
	return false, nil
}

// poolUses measures the pools' use and the mean used fraction of them
// all together.
func poolUses(ctx context.Context, pools []*pool) (map[*pool]poolUse, float64) {
	out := map[*pool]poolUse{}
	var used, total uint64
	for _, p := range pools {
		t, f := poolSpace(ctx, p)
		u := poolUse{total: t}
		if t > f {
			u.used = t - f
		}
		out[p] = u
		used += u.used
		total += u.total
	}
	if total == 0 {
		return out, 0
	}
	return out, float64(used) / float64(total)
}

// StartRebalance starts evening out the pools' used fractions: every
// pool whose use is above the mean by more than threshold has objects
// moved off it (every version of a key together, as a decommission
// moves them) to the emptiest pools, until the disk space its moves
// free brings it to the mean of the start. Starting
// one that runs answers its status.
func (e *Engine) StartRebalance(ctx context.Context, threshold float64) (RebalStatus, error) {
	if len(e.pools) < 2 {
		return RebalStatus{}, fmt.Errorf("%w: this deployment has one pool: there is nothing to rebalance", ErrInvalidArgument)
	}
	if threshold <= 0 || threshold >= 1 || math.IsNaN(threshold) {
		return RebalStatus{}, fmt.Errorf("%w: threshold %v: want more than 0 and less than 1", ErrInvalidArgument, threshold)
	}
	if busy, err := e.decomDraining(ctx); err != nil {
		return RebalStatus{}, err
	} else if busy {
		return RebalStatus{}, fmt.Errorf("%w: a decommission is running: rebalance once it is complete or canceled", ErrInvalidArgument)
	}
	pools, err := e.rebalPools(ctx)
	if err != nil {
		return RebalStatus{}, err
	}
	if len(pools) < 2 {
		why := ""
		if x := e.Expansion(ctx); x.State == ExpansionUnderWay {
			why = fmt.Sprintf(" (an expansion is under way: pools %d to %d take objects once every node runs with them)", x.NewKeyPools+1, x.Pools)
		}
		return RebalStatus{}, fmt.Errorf("%w: fewer than two pools take new objects: there is nothing to rebalance%s", ErrInvalidArgument, why)
	}
	uses, mean := poolUses(ctx, pools)
	out, err := e.updateRebal(ctx, func(st *RebalStatus) error {
		if st.State == RebalRunning {
			return nil
		}
		now := e.Now().UTC()
		*st = RebalStatus{State: RebalRunning, Threshold: threshold, Started: now, Updated: now, Mean: mean}
		sources := 0
		for _, p := range pools {
			f := uses[p].fraction()
			rp := RebalPool{PoolID: p.id, Pool: p.index + 1, UsedStart: f, Used: f, Source: f > mean+threshold}
			if rp.Source {
				sources++
				rp.Goal = int64((f - mean) * float64(uses[p].total))
			}
			st.Pools = append(st.Pools, rp)
		}
		if sources == 0 {
			st.State, st.Finished = RebalComplete, now
			st.Note = fmt.Sprintf("every pool's use is within %.1f%% of the mean (%.1f%%): nothing to move", threshold*100, mean*100)
		}
		return nil
	})
	e.positions(&out)
	e.kickDecom()
	return out, err
}

// CancelRebalance stops the rebalance: what was moved stays moved.
func (e *Engine) CancelRebalance(ctx context.Context) (RebalStatus, error) {
	out, err := e.updateRebal(ctx, func(st *RebalStatus) error {
		if st.State != RebalRunning {
			return fmt.Errorf("%w: no rebalance is running", ErrInvalidArgument)
		}
		st.State, st.Updated = RebalCanceled, e.Now().UTC()
		return nil
	})
	e.positions(&out)
	return out, err
}

// RebalanceStatus reads the rebalance's state.
func (e *Engine) RebalanceStatus(ctx context.Context) (RebalStatus, error) {
	st, _, err := e.readRebal(ctx)
	if err != nil {
		return st, err
	}
	e.applyRebal(st)
	if st.State == RebalRunning {
		if busy, err := e.decomDraining(ctx); err == nil && busy {
			st.Paused = "a decommission is running"
		}
	}
	e.positions(&st)
	return st, nil
}

// positions fills in each pool's position on this node's command line.
func (e *Engine) positions(st *RebalStatus) {
	for i := range st.Pools {
		st.Pools[i].Pool = 0
		for _, p := range e.pools {
			if p.id == st.Pools[i].PoolID {
				st.Pools[i].Pool = p.index + 1
			}
		}
	}
}

// rebalCheck is how often a pass measures the pools' use again (a
// statfs of every drive): often enough that an unthrottled move does
// not overshoot the mean by much.
const rebalCheck = 100 * time.Millisecond

// rebalTick runs one pass of a running rebalance (on the node that
// scans): each source pool not yet done has its keys moved, one key
// (every version) at a time, to the pool with the lowest use, until its
// moves freed its goal (RebalPool.Goal). Progress is saved every few seconds, so a
// node killed in the middle resumes: keys moved are no longer in the
// source, a key cut short is moved again (its copies are idempotent).
// A running decommission pauses it.
func (e *Engine) rebalTick(ctx context.Context) {
	st, _, err := e.readRebal(ctx)
	if err != nil {
		e.log.Warn("rebalance: cannot read its state", "err", err)
		return
	}
	e.applyRebal(st)
	if st.State != RebalRunning {
		return
	}
	if busy, err := e.decomDraining(ctx); err != nil || busy {
		return
	}
	if err := e.rebalPass(ctx, st); err != nil && ctx.Err() == nil && !errors.Is(err, errRebalStopped) {
		e.log.Warn("rebalance pass failed; retrying", "err", err)
	}
}

var errRebalStopped = errors.New("rebalance stopped")

func (e *Engine) rebalPass(ctx context.Context, st RebalStatus) error {
	pools, err := e.rebalPools(ctx)
	if err != nil {
		return err
	}
	byID := map[string]*pool{}
	for _, p := range pools {
		byID[p.id] = p
	}
	type progress struct {
		objects, versions, bytes, failed, moved int64
		uploads                                 int64
		lastErr                                 string
		used                                    float64
		done                                    bool
	}
	prog := map[string]*progress{}
	for _, rp := range st.Pools {
		prog[rp.PoolID] = &progress{used: rp.Used, done: rp.Done}
	}
	goal, movedBefore := map[string]int64{}, map[string]int64{}
	for _, rp := range st.Pools {
		goal[rp.PoolID], movedBefore[rp.PoolID] = rp.Goal, rp.Moved
	}
	// left says whether source id has more to free.
	left := func(id string) bool { return movedBefore[id]+prog[id].moved < goal[id] }
	var mean float64
	save := func(final bool) error {
		got := prog
		prog = map[string]*progress{}
		for id, p := range got {
			prog[id] = &progress{used: p.used, done: p.done}
			movedBefore[id] += p.moved
		}
		_, err := e.updateRebal(ctx, func(s *RebalStatus) error {
			if s.State != RebalRunning || !s.Started.Equal(st.Started) {
				return errRebalStopped
			}
			all := true
			for i := range s.Pools {
				rp := &s.Pools[i]
				if p := got[rp.PoolID]; p != nil {
					rp.Objects += p.objects
					rp.Versions += p.versions
					rp.Bytes += p.bytes
					rp.Failed += p.failed
					rp.Moved += p.moved
					rp.Uploads += p.uploads
					if p.lastErr != "" {
						rp.LastError = p.lastErr
					}
					rp.Used, rp.Done = p.used, rp.Done || p.done
				}
				if rp.Source && !rp.Done {
					all = false
				}
			}
			s.Mean, s.Updated = mean, e.Now().UTC()
			if final {
				s.Passes++
			}
			if all {
				s.State, s.Finished = RebalComplete, e.Now().UTC()
				e.log.Info("rebalance complete", "mean_used", mean)
			}
			return nil
		})
		return err
	}
	// measure reads the pools' use and returns the pool to move to:
	// the lowest use among those that are not sources.
	sources := map[string]bool{}
	for _, rp := range st.Pools {
		if rp.Source {
			sources[rp.PoolID] = true
		}
	}
	measure := func() *pool {
		uses, m := poolUses(ctx, pools)
		mean = m
		var to *pool
		for _, p := range pools {
			if pr := prog[p.id]; pr != nil {
				pr.used = uses[p].fraction()
			}
			if !sources[p.id] && !e.poolState.isDraining(p.id) && (to == nil || uses[p].fraction() < uses[to].fraction()) {
				to = p
			}
		}
		return to
	}
	to := measure()
	lastSave, lastCheck := time.Now(), time.Now()
	for _, rp := range st.Pools {
		src := byID[rp.PoolID]
		pr := prog[rp.PoolID]
		if !rp.Source || rp.Done || src == nil || pr == nil {
			continue
		}
		if to == nil {
			return errors.New("no pool to move to")
		}
		if !left(rp.PoolID) {
			pr.done = true
			continue
		}
		// Disk bytes a stored byte takes in this pool: its shards.
		set := src.sets[0]
		perByte := float64(len(set.drives)) / float64(len(set.drives)-set.parity)
		failures := 0
		moved, err := e.rebalPool(ctx, src, func(versions int, bytes int64, err error, bucket, key string) (bool, error) {
			switch {
			case err != nil:
				failures++
				pr.failed++
				pr.lastErr = fmt.Sprintf("%s/%s: %v", bucket, key, err)
				e.log.Warn("rebalance: key not moved; retried next pass", "pool", src.index+1, "bucket", bucket, "key", key, "err", err)
			case versions > 0:
				pr.objects++
				pr.versions += int64(versions)
				pr.bytes += bytes
				pr.moved += int64(float64(bytes) * perByte)
			}
			if err := e.pace(ctx, bytes); err != nil {
				return false, err
			}
			if time.Since(lastCheck) >= rebalCheck {
				to, lastCheck = measure(), time.Now()
				if to == nil {
					return false, errors.New("no pool to move to")
				}
			}
			if time.Since(lastSave) >= 2*time.Second {
				if err := save(false); err != nil {
					return false, err
				}
				pr, lastSave = prog[rp.PoolID], time.Now()
			}
			return left(rp.PoolID), nil
		}, func() *pool { return to })
		if err != nil {
			return err
		}
		// Then its uploads in progress, while it has more to free.
		upMoved := 0
		if left(rp.PoolID) {
			upMoved, err = e.rebalUploads(ctx, src, func() *pool { return to }, func(ok bool, bytes int64, err error, u uploadRef) (bool, error) {
				switch {
				case err != nil:
					failures++
					pr.failed++
					pr.lastErr = fmt.Sprintf("upload %s of %s/%s: %v", u.id, u.bucket, u.key, err)
					e.log.Warn("rebalance: upload not moved; retried next pass", "pool", src.index+1, "bucket", u.bucket, "key", u.key, "upload", u.id, "err", err)
				case ok:
					pr.uploads++
					pr.bytes += bytes
					pr.moved += int64(float64(bytes) * perByte)
				}
				if err := e.pace(ctx, bytes); err != nil {
					return false, err
				}
				if time.Since(lastCheck) >= rebalCheck {
					to, lastCheck = measure(), time.Now()
					if to == nil {
						return false, errors.New("no pool to move to")
					}
				}
				if time.Since(lastSave) >= 2*time.Second {
					if err := save(false); err != nil {
						return false, err
					}
					pr, lastSave = prog[rp.PoolID], time.Now()
				}
				return left(rp.PoolID), nil
			})
			if err != nil {
				return err
			}
		}
		to = measure()
		if !left(rp.PoolID) || moved == 0 && upMoved == 0 && failures == 0 {
			// Its goal freed, or nothing left here that could move.
			pr.done = true
		}
	}
	return save(true)
}

// rebalPool walks the keys of pool src and moves each to the pool dst
// names, telling after (which says whether to go on) what each move did.
// It returns the keys it moved.
func (e *Engine) rebalPool(ctx context.Context, src *pool, after func(versions int, bytes int64, err error, bucket, key string) (bool, error), dst func() *pool) (int, error) {
	buckets, err := e.ListBuckets(ctx)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, b := range buckets {
		marker := ""
		for {
			keys, more, err := rawKeysIn(ctx, src.sets, b.Name, "", marker, 1000)
			if err != nil {
				return moved, err
			}
			for _, key := range keys {
				if ctx.Err() != nil {
					return moved, ctx.Err()
				}
				versions, bytes, err := e.moveKeyTo(ctx, src, dst(), b.Name, key)
				if err == nil && versions > 0 {
					moved++
				}
				goOn, aerr := after(versions, bytes, err, b.Name, key)
				if aerr != nil {
					return moved, aerr
				}
				if !goOn {
					return moved, nil
				}
			}
			if !more || len(keys) == 0 {
				break
			}
			marker = keys[len(keys)-1]
		}
	}
	return moved, nil
}
