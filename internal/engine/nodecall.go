package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
)

// nodeMember is a drive of a node group: its position in the set and
// the remote drive under its Health.
type nodeMember[T any] struct {
	p int
	d T
}

// nodeGroups groups the drives (those include accepts) whose drive under
// Health implements T by the node serving them, for calls that carry the
// work of all of a node's drives at once (drive.NodeRecordReader,
// drive.NodeApplier). Local drives, drives not under Health and a drive
// alone on its node are in no group.
func nodeGroups[T interface{ Node() string }](drives []drive.Drive, include func(p int) bool) [][]nodeMember[T] {
	var order []string
	byNode := map[string][]nodeMember[T]{}
	for p, d := range drives {
		if d == nil || !include(p) {
			continue
		}
		t, ok := underHealth[T](d)
		if !ok {
			continue
		}
		n := t.Node()
		if _, seen := byNode[n]; !seen {
			order = append(order, n)
		}
		byNode[n] = append(byNode[n], nodeMember[T]{p, t})
	}
	var out [][]nodeMember[T]
	for _, n := range order {
		if len(byNode[n]) > 1 {
			out = append(out, byNode[n])
		}
	}
	return out
}

// underHealth is the drive d wraps (drive.Health) as a T: what a node
// group call needs of a remote drive. false for a drive not under
// Health or one that is not a T.
func underHealth[T any](d drive.Drive) (T, bool) {
	var zero T
	u, ok := d.(interface{ Unwrap() drive.Drive })
	if !ok {
		return zero, false
	}
	t, ok := u.Unwrap().(T)
	return t, ok
}

// recordBatch reads one key's record on the drives of one node that a
// fan-out reads (drive.NodeRecordReader): one request for all of them
// instead of one each. Each drive's read still goes through its own
// Health (read): the first to run starts the request, and each waits for
// its own answer, which the node sends as soon as that drive is read.
type recordBatch struct {
	once     sync.Once
	withData bool
	members  []drive.NodeRecordReader
	member   map[int]int // drive position in the set -> index in members
	results  []batchResult
	done     []chan struct{}
}

type batchResult struct {
	record, inline []byte
	err            error
}

// recordBatches groups the drives of the fan-out's first wave (every
// drive when first is nil) that share a node; a drive alone on its node,
// a local drive or one not under Health gets no batch (nil).
func recordBatches(drives []drive.Drive, first []bool, withData bool) []*recordBatch {
	out := make([]*recordBatch, len(drives))
	for _, group := range nodeGroups[drive.NodeRecordReader](drives, func(p int) bool { return first == nil || first[p] }) {
		b := &recordBatch{withData: withData, member: map[int]int{}}
		for i, g := range group {
			b.member[g.p] = i
			b.members = append(b.members, g.d)
			b.done = append(b.done, make(chan struct{}))
			out[g.p] = b
		}
		b.results = make([]batchResult, len(group))
	}
	return out
}

// read is drive p's part of the batch, as one operation of its Health;
// errors as readWithInline's (withData) or readRecord's.
func (b *recordBatch) read(ctx context.Context, r driveRunner, p int, bucket, key string) (*meta.Record, []byte, error) {
	var (
		gotRec  *meta.Record
		gotRaw  []byte
		readErr error
	)
	runErr := r.Run(drive.OpGet, func(d drive.Drive) error {
		b.once.Do(func() {
			go b.members[0].GetRecords(ctx, b.members, bucket, key, b.withData, func(i int, record, inline []byte, err error) {
				b.results[i] = batchResult{record, inline, err}
				close(b.done[i])
			})
		})
		i := b.member[p]
		select {
		case <-b.done[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		res := b.results[i]
		if res.err != nil {
			return res.err
		}
		gotRaw = res.record
		gotRec, readErr = decodeRecord(d, bucket, key, res.record, res.inline)
		return nil // the drive answered; a bad record is readErr
	})
	if runErr != nil {
		// Run's error, not the captured values: on a timeout the
		// function may still be writing them.
		return nil, nil, runErr
	}
	return gotRec, gotRaw, readErr
}

// groupedApply is a fan-out function that applies (at most) one index
// batch on its drive, through apply.
type groupedApply func(p int, d drive.Drive, apply func(*drive.Batch) error) error

// grouped turns fn into a fan-out function over drives (forEachDrive,
// fanOutErr) whose batches go in one call per node (applyGroups, with
// ctx). It keeps the groups' rule: every drive joins its node's call or
// drops out of it, the latter when fn returns without applying.
func grouped(ctx context.Context, drives []drive.Drive, fn groupedApply) func(p int, d drive.Drive) error {
	groups := newApplyGroups(ctx, drives)
	return func(p int, d drive.Drive) error {
		defer groups.skip(p)
		return fn(p, d, func(b *drive.Batch) error { return groups.apply(ctx, p, d, b) })
	}
}

// forEachDriveGrouped is forEachDrive over grouped(ctx, drives, fn).
func forEachDriveGrouped(ctx context.Context, drives []drive.Drive, fn groupedApply) []error {
	return forEachDrive(drives, grouped(ctx, drives, fn))
}

// applyGroups sends the index batches one fan-out commits on drives that
// share a node as one call per node (drive.NodeApplier). Each drive's
// Apply is still an operation of its own Health (offline drives,
// timeouts and lag per drive). The call goes once every drive of the
// group either joined with its batch or dropped out (the fan-out's
// function returned before applying, or Health refused the drive), so
// every drive of a group must do one of the two: apply or skip.
type applyGroups []*applyGroup // by drive position; nil: no group

type applyGroup struct {
	ctx     context.Context
	members []drive.NodeApplier
	index   map[int]int // drive position -> member

	mu      sync.Mutex
	state   []int8 // memberPending, memberJoined or memberSkipped
	batches []*drive.Batch
	left    int // members still pending

	results []error
	done    []chan struct{}
}

const (
	memberPending int8 = iota
	memberJoined
	memberSkipped
)

func newApplyGroups(ctx context.Context, drives []drive.Drive) applyGroups {
	out := make(applyGroups, len(drives))
	for _, group := range nodeGroups[drive.NodeApplier](drives, func(int) bool { return true }) {
		g := &applyGroup{ctx: ctx, index: map[int]int{}, left: len(group),
			state: make([]int8, len(group)), batches: make([]*drive.Batch, len(group)),
			results: make([]error, len(group)), done: make([]chan struct{}, len(group))}
		for i, m := range group {
			g.index[m.p] = i
			g.members = append(g.members, m.d)
			g.done[i] = make(chan struct{})
			out[m.p] = g
		}
	}
	return out
}

// apply applies b on drive p (d, the set's drive): with its group's call
// when it has a group, else by itself.
func (gs applyGroups) apply(ctx context.Context, p int, d drive.Drive, b *drive.Batch) error {
	g := gs[p]
	r, ok := d.(driveRunner)
	if g == nil || !ok {
		gs.skip(p)
		return d.Apply(ctx, b)
	}
	i := g.index[p]
	var called atomic.Bool
	err := r.Run(drive.OpApply, func(drive.Drive) error {
		called.Store(true)
		if !g.settle(i, b) {
			return errDriveSkipped
		}
		select {
		case <-g.done[i]:
			return g.results[i]
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if !called.Load() {
		g.settle(i, nil) // Health refused the drive
	}
	return err
}

// skip drops drive p out of its group's call (no-op without a group, or
// once p joined).
func (gs applyGroups) skip(p int) {
	if g := gs[p]; g != nil {
		g.settle(g.index[p], nil)
	}
}

// settle joins member i with batch b (b nil: drops it out) and sends the
// call when it was the last pending member. It reports whether i joined.
func (g *applyGroup) settle(i int, b *drive.Batch) bool {
	g.mu.Lock()
	if g.state[i] != memberPending {
		g.mu.Unlock()
		return false
	}
	if b != nil {
		g.state[i], g.batches[i] = memberJoined, b
	} else {
		g.state[i] = memberSkipped
	}
	g.left--
	last := g.left == 0
	g.mu.Unlock()
	if last {
		g.send()
	}
	return b != nil
}

// send makes the group's call for the members that joined.
func (g *applyGroup) send() {
	var members []drive.NodeApplier
	var batches []*drive.Batch
	var who []int
	for i, st := range g.state {
		if st == memberJoined {
			members, batches, who = append(members, g.members[i]), append(batches, g.batches[i]), append(who, i)
		}
	}
	if len(members) == 0 {
		return
	}
	go members[0].ApplyBatches(g.ctx, members, batches, func(j int, err error) {
		g.results[who[j]] = err
		close(g.done[who[j]])
	})
}
