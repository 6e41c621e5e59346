package engine

import "context"

// followDecom is a follower's periodic read of the decommission state
// (a node that does not scan). A read that fails keeps the state this
// node last applied, and says so: once when the failures start (and
// again when the error changes), and once when a read succeeds again.
// Before, a failed read was dropped in silence, so a node could serve
// for minutes without the state the others had (stop 52 names it a
// candidate cause of a node lacking a decommission's state). Safety does
// not rest on this read: a pass completes only after every running node
// applied the state on its change notice (decom_gate.go); this read is
// how a node that missed a notice catches up, and now it is visible when
// it cannot. last holds the error while it lasts ("" when none).
func (e *Engine) followDecom(ctx context.Context, last *string) {
	doc, _, err := e.readDecom(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return // closing
		}
		if msg := err.Error(); msg != *last {
			*last = msg
			e.log.Warn("decommission: cannot read its state; this node keeps the state it last read and retries every 2 s", "err", err)
		}
		return
	}
	if *last != "" {
		*last = ""
		e.log.Info("decommission: its state is readable again")
	}
	e.applyDecom(doc)
}
