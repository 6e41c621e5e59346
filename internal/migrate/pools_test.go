package migrate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/minioformat"
)

// TestCheckPoolMeta: what pool.bin's pools and their decommission
// states allow, with the arguments MinIO had, with others (drives
// mounted elsewhere: paired in order by drive count), and hostile ones.
func TestCheckPoolMeta(t *testing.T) {
	dec := func(state string) *minioformat.PoolDecommission {
		d := &minioformat.PoolDecommission{Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Objects: 9}
		switch state {
		case "complete":
			d.Complete = true
		case "failed":
			d.Failed = true
		case "canceled":
			d.Canceled = true
		}
		return d
	}
	pm := func(pools ...minioformat.PoolStatus) *minioformat.PoolMeta {
		return &minioformat.PoolMeta{Version: 1, Pools: pools}
	}
	p := func(cl string, d *minioformat.PoolDecommission) minioformat.PoolStatus {
		return minioformat.PoolStatus{CmdLine: cl, Decommission: d}
	}
	two := pm(p("/a/d{1...4}", nil), p("/b/d{1...8}", nil))
	for name, c := range map[string]struct {
		pm     *minioformat.PoolMeta
		args   []string
		counts []int
		want   string // "" adopts; else a part of the refusal
		note   string // a part of a note, when adopted
	}{
		"no pool.bin":                   {nil, []string{"/a/d{1...4}"}, []int{4}, "", ""},
		"no pool.bin, two pools":        {nil, []string{"/a/d{1...4}", "/b/d{1...8}"}, []int{4, 8}, "", "no .minio.sys/pool.bin"},
		"as MinIO had them":             {two, []string{"/a/d{1...4}", "/b/d{1...8}"}, []int{4, 8}, "", ""},
		"in another order":              {two, []string{"/b/d{1...8}", "/a/d{1...4}"}, []int{8, 4}, "", ""},
		"moved, same order":             {two, []string{"/x/d{1...4}", "/y/d{1...8}"}, []int{4, 8}, "", "paired in order by drive count"},
		"moved, other order":            {two, []string{"/y/d{1...8}", "/x/d{1...4}"}, []int{8, 4}, "are not all of them", ""},
		"one pool left out":             {two, []string{"/a/d{1...4}"}, []int{4}, "/b/d{1...8} is not given", ""},
		"moved, one left out":           {two, []string{"/x/d{1...8}"}, []int{8}, "are not all of them", ""},
		"same argument twice":           {two, []string{"/a/d{1...4}", "/a/d{1...4}"}, []int{4, 4}, "are not all of them", ""},
		"skipping a decommissioned one": {pm(p("/a/d{1...4}", nil), p("/b/d{1...4}", dec("complete")), p("/c/d{1...4}", nil)), []string{"/x/{1...4}", "/y/{1...4}"}, []int{4, 4}, "", "/b/d{1...4}, decommissioned completely"},
		"ambiguous":                     {pm(p("/a/d{1...4}", dec("complete")), p("/b/d{1...4}", dec("complete"))), []string{"/x/{1...4}"}, []int{4}, "more than one way", ""},
		"decommissioned, given":         {pm(p("/a/d{1...4}", dec("complete")), p("/b/d{1...4}", nil)), []string{"/a/d{1...4}", "/b/d{1...4}"}, []int{4, 4}, "leave its drives out", ""},
		"decommissioned, left":          {pm(p("/a/d{1...4}", dec("complete")), p("/b/d{1...4}", nil)), []string{"/b/d{1...4}"}, []int{4}, "", "is left out, as it should be"},
		"decommissioned, moved":         {pm(p("/a/d{1...4}", dec("complete")), p("/b/d{1...4}", nil)), []string{"/z/d{1...4}"}, []int{4}, "", "is left out, as it should be"},
		"decommission running":          {pm(p("/a/d{1...4}", dec("running")), p("/b/d{1...4}", nil)), []string{"/a/d{1...4}", "/b/d{1...4}"}, []int{4, 4}, "was decommissioning pool /a/d{1...4}", ""},
		"running, left out":             {pm(p("/a/d{1...4}", dec("running")), p("/b/d{1...4}", nil)), []string{"/b/d{1...4}"}, []int{4}, "/a/d{1...4} is not given", ""},
		"decommission canceled":         {pm(p("/a/d{1...4}", dec("canceled")), p("/b/d{1...4}", nil)), []string{"/a/d{1...4}", "/b/d{1...4}"}, []int{4, 4}, "", "canceled"},
		"decommission failed":           {pm(p("/a/d{1...4}", dec("failed")), p("/b/d{1...4}", nil)), []string{"/a/d{1...4}", "/b/d{1...4}"}, []int{4, 4}, "", "failed"},
		"hostile cmdline":               {pm(p("/a/d{4...1}", nil), p("{{{", nil)), []string{"/x/d{1...4}", "/y"}, []int{4, 1}, "are not all of them", ""},
		"empty cmdlines":                {pm(p("", nil), p("", nil)), []string{"", ""}, []int{0, 0}, "are not all of them", ""},
		"more given than listed":        {two, []string{"/a/d{1...4}", "/b/d{1...8}", "/c/d{1...4}"}, []int{4, 8, 4}, "are not all of them", ""},
	} {
		notes, err := checkPoolMeta(c.pm, c.args, c.counts)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a refusal saying %q", name, err, c.want)
		case c.want == "" && c.note != "" && !strings.Contains(strings.Join(notes, "\n"), c.note):
			t.Errorf("%s: notes %q, want one saying %q", name, notes, c.note)
		}
	}
}
