package minioformat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/minioformat/miniofixture"
)

// pmp is a minimal msgpack writer for the tests' pool.bin documents:
// maps and arrays of up to 15 entries, short strings, bools, ints,
// nil and tinylib/msgp's time extension.
type pmp []byte

func (m pmp) fmap(n int) pmp   { return append(m, 0x80|byte(n)) }
func (m pmp) farr(n int) pmp   { return append(m, 0x90|byte(n)) }
func (m pmp) str(s string) pmp { return append(append(m, 0xa0|byte(len(s))), s...) }
func (m pmp) null() pmp        { return append(m, 0xc0) }
func (m pmp) boolean(b bool) pmp {
	if b {
		return append(m, 0xc3)
	}
	return append(m, 0xc2)
}
func (m pmp) i64(v int64) pmp {
	m = append(m, 0xd3)
	return binary.BigEndian.AppendUint64(m, uint64(v))
}
func (m pmp) tm(t time.Time) pmp {
	m = append(m, 0xc7, 12, 5)
	m = binary.BigEndian.AppendUint64(m, uint64(t.Unix()))
	return binary.BigEndian.AppendUint32(m, uint32(t.Nanosecond()))
}

// poolBin encodes a pool.bin of the given pools (cmdline, decommission
// state: "" none, else complete/failed/canceled/running).
func poolBin(pools [][2]string) []byte {
	m := pmp{1, 0, 1, 0}.fmap(2).str("v").i64(1).str("pls").farr(len(pools))
	at := time.Date(2026, 11, 28, 10, 0, 0, 5, time.UTC)
	for i, p := range pools {
		m = m.fmap(4).str("id").i64(int64(i)).str("cl").str(p[0]).str("lu").tm(at).str("dec")
		if p[1] == "" {
			m = m.null()
			continue
		}
		m = m.fmap(8).str("st").tm(at).str("cmp").boolean(p[1] == "complete").str("fl").boolean(p[1] == "failed").
			str("cnl").boolean(p[1] == "canceled").str("id").i64(7).str("bkt").str("b").
			str("bkts").farr(1).str("b").str("zz").i64(3) // an unknown field is skipped
	}
	return m
}

func TestDecodePoolMeta(t *testing.T) {
	pm, err := DecodePoolMeta(poolBin([][2]string{{"/d{1...4}", ""}, {"/e{1...8}", "complete"}, {"/f{1...4}", "canceled"}, {"/g{1...4}", "running"}, {"/h{1...4}", "failed"}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(pm.Pools) != 5 || pm.Pools[0].CmdLine != "/d{1...4}" || pm.Pools[0].Decommission != nil || pm.Pools[1].ID != 1 {
		t.Fatalf("%+v", pm)
	}
	for i, want := range []string{"", "complete", "canceled", "in progress", "failed"} {
		d := pm.Pools[i].Decommission
		if (d == nil) != (want == "") || (d != nil && d.State() != want) {
			t.Errorf("pool %d: %+v, want %q", i, d, want)
		}
	}
	if d := pm.Pools[1].Decommission; d.Objects != 7 || d.Bucket != "b" || len(d.QueuedBuckets) != 1 || !d.Started.Equal(time.Date(2026, 11, 28, 10, 0, 0, 5, time.UTC)) {
		t.Errorf("decommission fields: %+v", d)
	}
}

// TestDecodePoolMetaHostile: hostile and truncated input is an error,
// never a panic or a huge allocation.
func TestDecodePoolMetaHostile(t *testing.T) {
	good := poolBin([][2]string{{"/d{1...4}", ""}, {"/e{1...4}", "complete"}})
	cases := map[string][]byte{
		"empty":          nil,
		"header only":    {1, 0, 1, 0},
		"format 2":       append([]byte{2, 0}, good[2:]...),
		"version 9":      append([]byte{1, 0, 9, 0}, good[4:]...),
		"not a map":      {1, 0, 1, 0, 0x93, 1, 2, 3},
		"huge array":     append(pmp{1, 0, 1, 0}.fmap(1).str("pls"), 0xdd, 0xff, 0xff, 0xff, 0xff),
		"huge map":       {1, 0, 1, 0, 0xdf, 0x7f, 0xff, 0xff, 0xff},
		"content v2":     pmp{1, 0, 1, 0}.fmap(1).str("v").i64(2),
		"negative id":    pmp{1, 0, 1, 0}.fmap(2).str("v").i64(1).str("pls").farr(1).fmap(1).str("id").i64(-1),
		"id too big":     pmp{1, 0, 1, 0}.fmap(2).str("v").i64(1).str("pls").farr(1).fmap(1).str("id").i64(math.MaxInt64),
		"cl not string":  pmp{1, 0, 1, 0}.fmap(2).str("v").i64(1).str("pls").farr(1).fmap(1).str("cl").i64(1),
		"dec not map":    pmp{1, 0, 1, 0}.fmap(2).str("v").i64(1).str("pls").farr(1).fmap(1).str("dec").str("x"),
		"trailing bytes": append(append([]byte{}, good...), 0xc0),
		"bad time":       pmp{1, 0, 1, 0}.fmap(2).str("v").i64(1).str("pls").farr(1).fmap(1).str("lu").str("yesterday"),
	}
	for i := 5; i < len(good); i += 7 {
		cases[fmt.Sprintf("truncated at %d", i)] = good[:i]
	}
	for name, in := range cases {
		if pm, err := DecodePoolMeta(in); err == nil {
			t.Errorf("%s: decoded %+v", name, pm)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v is neither ErrCorrupt nor ErrUnsupported", name, err)
		}
	}
}

func FuzzDecodePoolMeta(f *testing.F) {
	f.Add(poolBin([][2]string{{"/d{1...4}", ""}, {"/e{1...8}", "complete"}}))
	f.Add(poolBin([][2]string{{"http://n{1...4}:9000/d{1...4}", "running"}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		pm, err := DecodePoolMeta(data)
		if err == nil && len(pm.Pools) > maxPools {
			t.Fatalf("%d pools", len(pm.Pools))
		}
	})
}

// TestFixturePoolMeta decodes the pool.bin that real MinIO wrote into
// each pool of the pools fixtures (testdata/README.md): two pools of 4
// and 8 drives, and two of 4 whose first MinIO decommissioned.
func TestFixturePoolMeta(t *testing.T) {
	for _, c := range []struct {
		name  string
		pools [][2]int // first drive, drive count
		cl    []string
		state []string
	}{
		{"testdata/minio-pools", [][2]int{{1, 4}, {5, 8}}, []string{"drive{1...4}", "drive{5...12}"}, []string{"", ""}},
		{"testdata/minio-decommissioned", [][2]int{{1, 4}, {5, 4}}, []string{"drive{1...4}", "drive{5...8}"}, []string{"complete", ""}},
	} {
		dir := t.TempDir()
		if err := miniofixture.Unpack(c.name, dir); err != nil {
			t.Fatal(err)
		}
		for p, pool := range c.pools {
			var obj *Object
			var shards []io.Reader
			for d := pool[0]; d < pool[0]+pool[1]; d++ {
				raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("drive%d", d), ".minio.sys", "pool.bin", "xl.meta"))
				if err != nil {
					continue // in another set of the pool
				}
				m, err := Decode(raw)
				if err != nil {
					t.Fatalf("%s drive%d: %v", c.name, d, err)
				}
				o := m.Versions[0].Object
				if obj == nil {
					obj, shards = o, make([]io.Reader, o.DataBlocks+o.ParityBlocks)
				}
				shards[o.Index-1] = bytes.NewReader(m.InlineData(m.Versions[0].ID()))
			}
			if obj == nil {
				t.Fatalf("%s pool %d: no pool.bin", c.name, p+1)
			}
			var buf bytes.Buffer
			if err := DecodePart(&buf, obj, 0, shards); err != nil {
				t.Fatalf("%s pool %d: %v", c.name, p+1, err)
			}
			pm, err := DecodePoolMeta(buf.Bytes())
			if err != nil {
				t.Fatalf("%s pool %d: %v", c.name, p+1, err)
			}
			if len(pm.Pools) != len(c.cl) {
				t.Fatalf("%s pool %d: %+v", c.name, p+1, pm)
			}
			for i, ps := range pm.Pools {
				state := ""
				if ps.Decommission != nil {
					state = ps.Decommission.State()
				}
				if ps.ID != i || !strings.HasSuffix(ps.CmdLine, "/"+c.cl[i]) || state != c.state[i] || ps.Updated.IsZero() {
					t.Errorf("%s pool %d's copy, pool %d: %+v (decommission %+v)", c.name, p+1, i+1, ps, ps.Decommission)
				}
			}
		}
	}
}
