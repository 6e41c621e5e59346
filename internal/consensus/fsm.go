package consensus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"
)

// Entry is one key's value and the log index of the change that last
// wrote it (its version, for compare-and-set).
type Entry struct {
	Value []byte `json:"v"`
	Index uint64 `json:"i"`
}

// command is one change proposed to the group (JSON in a log entry).
type command struct {
	Op    string `json:"op"` // opPut, opDelete, opSeed
	Space string `json:"s,omitempty"`
	Key   string `json:"k,omitempty"`
	// Prev is the version the change expects (0: the key is absent).
	Prev  uint64 `json:"p,omitempty"`
	Value []byte `json:"v,omitempty"`
	// Seed holds the state the first seed sets (space → key → value).
	Seed map[string]map[string][]byte `json:"seed,omitempty"`
}

const (
	opPut    = "put"
	opDelete = "delete"
	opSeed   = "seed"
)

// result is what applying a command returned, on the leader (and
// forwarded back to the node that proposed it).
type result struct {
	Index uint64 `json:"index"`
	// Code is "" on success, or codeConflict / codeNotFound / codeBad.
	Code    string `json:"code,omitempty"`
	Current uint64 `json:"current,omitempty"` // the key's version on a conflict
	Msg     string `json:"msg,omitempty"`
}

const (
	codeConflict = "conflict"
	codeNotFound = "notfound"
	codeBad      = "bad"
)

// fsm is the replicated map. Every node applies the same log in the same
// order, so every node's map is the same at the same index.
type fsm struct {
	mu     sync.RWMutex
	data   map[string]map[string]Entry
	seeded bool
	// last is the index of the last command applied: commands apply in
	// log order, so every command at or below it is in data.
	last uint64
	// advanced is closed (and replaced) whenever last grows.
	advanced chan struct{}
	onChange func(space, key string)
}

func newFSM(onChange func(space, key string)) *fsm {
	return &fsm{data: map[string]map[string]Entry{}, advanced: make(chan struct{}), onChange: onChange}
}

// Apply applies one committed command (raft.FSM).
func (f *fsm) Apply(l *raft.Log) any {
	var c command
	if err := json.Unmarshal(l.Data, &c); err != nil {
		f.advance(l.Index)
		return result{Code: codeBad, Msg: fmt.Sprintf("undecodable command at index %d: %v", l.Index, err)}
	}
	var changed [][2]string
	f.mu.Lock()
	res := result{Index: l.Index}
	switch c.Op {
	case opPut, opDelete:
		cur, ok := f.data[c.Space][c.Key]
		switch {
		case c.Op == opDelete && !ok:
			res = result{Code: codeNotFound}
		case cur.Index != c.Prev:
			res = result{Code: codeConflict, Current: cur.Index}
		case c.Op == opPut:
			if f.data[c.Space] == nil {
				f.data[c.Space] = map[string]Entry{}
			}
			f.data[c.Space][c.Key] = Entry{Value: c.Value, Index: l.Index}
			changed = append(changed, [2]string{c.Space, c.Key})
		default:
			delete(f.data[c.Space], c.Key)
			changed = append(changed, [2]string{c.Space, c.Key})
		}
	case opSeed:
		// Only the first seed counts: every node may propose one at
		// start, from what its drives held before the group existed.
		if !f.seeded {
			f.seeded = true
			for space, kv := range c.Seed {
				if f.data[space] == nil {
					f.data[space] = map[string]Entry{}
				}
				for k, v := range kv {
					if _, ok := f.data[space][k]; !ok {
						f.data[space][k] = Entry{Value: v, Index: l.Index}
						changed = append(changed, [2]string{space, k})
					}
				}
			}
		}
	default:
		res = result{Code: codeBad, Msg: fmt.Sprintf("unknown operation %q", c.Op)}
	}
	f.mu.Unlock()
	f.advance(l.Index)
	for _, c := range changed {
		f.notify(c[0], c[1])
	}
	return res
}

func (f *fsm) notify(space, key string) {
	if f.onChange != nil {
		f.onChange(space, key)
	}
}

// advance records that every command up to index has been applied.
func (f *fsm) advance(index uint64) {
	f.mu.Lock()
	if index > f.last {
		f.last = index
		close(f.advanced)
		f.advanced = make(chan struct{})
	}
	f.mu.Unlock()
}

// waitFor returns once every command up to index has been applied.
func (f *fsm) waitFor(ctx context.Context, index uint64) error {
	for {
		f.mu.RLock()
		last, ch := f.last, f.advanced
		f.mu.RUnlock()
		if last >= index {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for this node to apply index %d (it has %d): %w", index, last, ctx.Err())
		case <-ch:
		}
	}
}

func (f *fsm) lastIndex() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.last
}

func (f *fsm) get(space, key string) (Entry, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, ok := f.data[space][key]
	return e, ok
}

func (f *fsm) list(space string) map[string]Entry {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make(map[string]Entry, len(f.data[space]))
	for k, v := range f.data[space] {
		out[k] = v
	}
	return out
}

func (f *fsm) isSeeded() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.seeded
}

// snapshotData is the stored form of the map.
type snapshotData struct {
	Seeded bool                        `json:"seeded"`
	Last   uint64                      `json:"last"`
	Data   map[string]map[string]Entry `json:"data"`
}

// Snapshot copies the map (values are never modified in place, so the
// copy shares them) for raft to persist while applying goes on.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := snapshotData{Seeded: f.seeded, Last: f.last, Data: map[string]map[string]Entry{}}
	for space, kv := range f.data {
		m := make(map[string]Entry, len(kv))
		for k, v := range kv {
			m[k] = v
		}
		s.Data[space] = m
	}
	return &s, nil
}

// Restore replaces the map with a snapshot's.
func (f *fsm) Restore(r io.ReadCloser) error {
	defer r.Close()
	var s snapshotData
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return fmt.Errorf("restore cluster state snapshot: %w", err)
	}
	if s.Data == nil {
		s.Data = map[string]map[string]Entry{}
	}
	f.mu.Lock()
	old := f.data
	f.data, f.seeded = s.Data, s.Seeded
	f.mu.Unlock()
	f.advance(s.Last)
	// Everything that was or is now present may have changed.
	for _, m := range []map[string]map[string]Entry{old, s.Data} {
		for space, kv := range m {
			for k := range kv {
				f.notify(space, k)
			}
		}
	}
	return nil
}

// Persist writes the snapshot (raft.FSMSnapshot).
func (s *snapshotData) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode(s); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("write cluster state snapshot: %w", err)
	}
	return sink.Close()
}

// Release is a no-op: the snapshot holds no resources.
func (s *snapshotData) Release() {}
