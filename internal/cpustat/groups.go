package cpustat

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// DefaultGroupTolerance is the width of one "most consumed cores" group:
// cores whose busy fraction lies within 10 percentage points of the
// group's busiest core are reported together.
const DefaultGroupTolerance = 0.10

// DefaultGroupsShown is how many groups MostConsumed prints.
const DefaultGroupsShown = 2

// Group is a run of cores with similar load, in the form the RAID study
// reports "most consumed cores": Count cores at about Avg busy.
type Group struct {
	Count int
	// Avg, Min and Max are busy fractions (0..1).
	Avg, Min, Max float64
}

// String formats the group as "NxP%", e.g. "1x92%".
func (g Group) String() string {
	return fmt.Sprintf("%dx%.0f%%", g.Count, g.Avg*100)
}

// Groups sorts the loads (busy fractions) in descending order and cuts
// them into groups. A group starts at the busiest core not yet grouped and
// takes every following core whose load is at most tolerance below that
// first core's load. Anchoring on the group's first core (rather than on
// the previous core) keeps a smooth gradient 90, 85, 80, ... 10 from
// collapsing into one meaningless group.
func Groups(loads []float64, tolerance float64) []Group {
	sorted := slices.Clone(loads)
	slices.SortFunc(sorted, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	// The epsilon keeps values that are exactly tolerance apart in one
	// group despite float rounding (0.92-0.82 is not exactly 0.10).
	const eps = 1e-9
	var groups []Group
	for i := 0; i < len(sorted); {
		top := sorted[i]
		j := i
		sum := 0.0
		for j < len(sorted) && top-sorted[j] <= tolerance+eps {
			sum += sorted[j]
			j++
		}
		groups = append(groups, Group{Count: j - i, Avg: sum / float64(j-i), Max: top, Min: sorted[j-1]})
		i = j
	}
	return groups
}

// FormatGroups joins the first n groups as "1x92%, 8x11%"; n <= 0 means
// all of them. No groups formats as "-".
func FormatGroups(groups []Group, n int) string {
	if n > 0 && len(groups) > n {
		groups = groups[:n]
	}
	if len(groups) == 0 {
		return "-"
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.String()
	}
	return strings.Join(parts, ", ")
}

// MostConsumed is the study's "most consumed cores" column: the top
// DefaultGroupsShown groups at DefaultGroupTolerance.
func MostConsumed(loads []float64) string {
	return FormatGroups(Groups(loads, DefaultGroupTolerance), DefaultGroupsShown)
}

// Imbalance is the busiest core's load divided by the mean core load: 1
// means perfectly even, N on an N-core machine means a single core does
// all the work. An idle machine (mean 0) is reported as 1, evenly idle;
// no loads at all give NaN.
func Imbalance(loads []float64) float64 {
	if len(loads) == 0 {
		return math.NaN()
	}
	maxLoad, sum := loads[0], 0.0
	for _, l := range loads {
		sum += l
		maxLoad = max(maxLoad, l)
	}
	mean := sum / float64(len(loads))
	if mean == 0 {
		return 1
	}
	return maxLoad / mean
}

// BusyFractions extracts the Busy values, for Groups and Imbalance.
func (u Usage) BusyFractions() []float64 {
	out := make([]float64, len(u.Cores))
	for i, c := range u.Cores {
		out[i] = c.Busy
	}
	return out
}
