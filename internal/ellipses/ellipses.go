// Package ellipses expands drive arguments written with MinIO-style
// ellipsis ranges, such as "/data/d{1...16}" or
// "/mnt/disk{1...4}/x{01...04}", into the list of paths they stand for.
package ellipses

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxExpansion bounds how many paths one argument may expand to, so a
// typo like {1...1000000} fails fast instead of eating memory.
const MaxExpansion = 1 << 14

// HasPattern reports whether s contains a brace that Expand would
// interpret.
func HasPattern(s string) bool { return strings.ContainsAny(s, "{}") }

// rangeSpec is one {start...end} term.
type rangeSpec struct {
	start, end int
	width      int // zero-padding width, 0 for none
}

func (r rangeSpec) values() []string {
	out := make([]string, 0, r.end-r.start+1)
	for i := r.start; i <= r.end; i++ {
		s := strconv.Itoa(i)
		if len(s) < r.width {
			s = strings.Repeat("0", r.width-len(s)) + s
		}
		out = append(out, s)
	}
	return out
}

func parseRange(term string) (rangeSpec, error) {
	lo, hi, ok := strings.Cut(term, "...")
	if !ok {
		return rangeSpec{}, fmt.Errorf("{%s} is not a range: write {START...END} with three dots", term)
	}
	a, err := strconv.Atoi(lo)
	if err != nil || a < 0 || lo == "" {
		return rangeSpec{}, fmt.Errorf("{%s}: start %q is not a non-negative integer", term, lo)
	}
	b, err := strconv.Atoi(hi)
	if err != nil || b < 0 || hi == "" {
		return rangeSpec{}, fmt.Errorf("{%s}: end %q is not a non-negative integer", term, hi)
	}
	if a > b {
		return rangeSpec{}, fmt.Errorf("{%s}: start %d is greater than end %d", term, a, b)
	}
	r := rangeSpec{start: a, end: b}
	// A leading zero on either bound asks for fixed-width numbers.
	if (len(lo) > 1 && lo[0] == '0') || (len(hi) > 1 && hi[0] == '0') {
		r.width = max(len(lo), len(hi))
	}
	return r, nil
}

// Expand returns the paths arg stands for, in order: the leftmost range
// varies slowest. An argument without braces expands to itself.
func Expand(arg string) ([]string, error) {
	if arg == "" {
		return nil, fmt.Errorf("ellipses: empty drive argument")
	}
	out := []string{""}
	rest := arg
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			out = appendAll(out, []string{rest})
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("ellipses: %q: unbalanced '}'", arg)
		}
		closeIdx := strings.IndexAny(rest[open+1:], "{}")
		if closeIdx < 0 || rest[open+1+closeIdx] != '}' {
			return nil, fmt.Errorf("ellipses: %q: unbalanced '{'", arg)
		}
		term := rest[open+1 : open+1+closeIdx]
		r, err := parseRange(term)
		if err != nil {
			return nil, fmt.Errorf("ellipses: %q: %w", arg, err)
		}
		if n := len(out) * (r.end - r.start + 1); n > MaxExpansion || n <= 0 {
			return nil, fmt.Errorf("ellipses: %q expands to more than %d paths", arg, MaxExpansion)
		}
		out = appendAll(out, []string{rest[:open]})
		out = appendAll(out, r.values())
		rest = rest[open+1+closeIdx+1:]
	}
	return out, nil
}

// appendAll returns every prefix followed by every suffix.
func appendAll(prefixes, suffixes []string) []string {
	out := make([]string, 0, len(prefixes)*len(suffixes))
	for _, p := range prefixes {
		for _, s := range suffixes {
			out = append(out, p+s)
		}
	}
	return out
}

// ExpandAll expands every argument in order and refuses duplicates,
// since one directory used twice would hold two shards of every object.
func ExpandAll(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		paths, err := Expand(a)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if seen[p] {
				return nil, fmt.Errorf("ellipses: drive %q given more than once", p)
			}
			seen[p] = true
			out = append(out, p)
		}
		if len(out) > MaxExpansion {
			return nil, fmt.Errorf("ellipses: more than %d drives", MaxExpansion)
		}
	}
	return out, nil
}

// Pools expands drive arguments into server pools, as MinIO does: when
// there are several arguments and every one has a pattern, each argument
// is a pool of its own (`/a{1...4} /b{1...8}`: a pool of 4 drives and one
// of 8); otherwise all the drives are one pool (`/d1 /d2 /d3 /d4`).
func Pools(args []string) ([][]string, error) {
	each := len(args) > 1
	for _, a := range args {
		each = each && HasPattern(a)
	}
	if !each {
		all, err := ExpandAll(args)
		if err != nil {
			return nil, err
		}
		return [][]string{all}, nil
	}
	out := make([][]string, 0, len(args))
	for _, a := range args {
		drives, err := Expand(a)
		if err != nil {
			return nil, err
		}
		out = append(out, drives)
	}
	return out, nil
}
