package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Finding L3 (docs/consistency.md): a listing's quorum read of a key
// reads the set's drives in parallel, not as one snapshot. A read that
// straddles a commit and its settling can hear some drives before the
// commit (the replaced version current) and others after its settling
// (the new version current, the previous record dropped): no version
// on a read quorum, current or previous, although every drive answered
// and the new version was acknowledged. The listing took such a key for
// a damaged one (an interrupted, unacknowledged write) and left it out:
// a list-after-write violation, seen once through the bridge node of a
// bridge partition. A damaged key is stable; a key a write is changing
// is not. So before leaving a key out, the listing reads it again
// (rereadUnsettled): an answer is used; records that changed between
// two reads mean a write is in flight, and the key is read again, up to
// listRereads times, after which the listing fails with ErrReadQuorum
// (503, retried by the client) instead of leaving it out; only records
// that two reads in a row found the same are a damaged key, left out and
// healed as before.

// listRereads bounds the rereads of a key whose records keep changing.
const listRereads = 4

// sameRecords reports whether two reads of a key found the same record
// bytes on every drive (and failed alike where they failed).
func sameRecords(a, b *objectState) bool {
	if a == nil || b == nil || len(a.raws) != len(b.raws) {
		return false
	}
	for p := range a.raws {
		if !bytes.Equal(a.raws[p], b.raws[p]) || (a.raws[p] == nil && (a.readErrs[p] == nil) != (b.readErrs[p] == nil)) {
			return false
		}
	}
	return true
}

// rereadUnsettled reads again a key whose quorum read st failed with
// every drive answering. It returns the read to use: a later read that
// succeeded or failed otherwise (the caller handles it as a first
// read's), or, with stable set, one whose records were the same as the
// read before it (a damaged key). A key still changing after
// listRereads reads is ErrReadQuorum.
func (e *Engine) rereadUnsettled(ctx context.Context, set *erasureSet, bucket, key string, st *objectState) (next *objectState, stable bool, err error) {
	for i := 0; i < listRereads; i++ {
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(time.Duration(i+1) * 5 * time.Millisecond):
		}
		again, err := e.readObject(ctx, set, bucket, key)
		if err == nil || !errors.Is(err, ErrReadQuorum) || mayHideVersion(again, set) {
			return again, false, err
		}
		if sameRecords(st, again) {
			return again, true, err
		}
		st = again
	}
	return st, false, fmt.Errorf("%w: %s/%s: its records changed under %d reads (a write in flight)", ErrReadQuorum, bucket, key, listRereads+1)
}
