package main

import "testing"

// TestRemovedBeforeKept: only pools left out before a pool kept (the
// first pool's removal) make a node not restarted yet count every pool
// as taking new keys; pools left out at the end (a canceled expansion,
// whose pools are not drained, or the last pools' shrink) keep the
// record's count. Counting every pool after a cancel sent new keys to
// the canceled pool (TestClusterExpansionCancel: 404 after the cancel).
func TestRemovedBeforeKept(t *testing.T) {
	for _, c := range []struct {
		positions []int
		n         int
		want      bool
	}{
		{nil, 2, false},
		{[]int{1}, 2, false},    // canceled expansion / last pool shrunk
		{[]int{1, 2}, 3, false}, // two appended pools canceled
		{[]int{0}, 2, true},     // the first pool retired
		{[]int{0, 2}, 3, true},
		{[]int{1}, 3, true}, // a middle pool
		{[]int{0, 1}, 2, false},
	} {
		if got := removedBeforeKept(c.positions, c.n); got != c.want {
			t.Errorf("removedBeforeKept(%v, %d) = %v, want %v", c.positions, c.n, got, c.want)
		}
	}
}
