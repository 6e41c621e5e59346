package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/reedsolomon"
)

func TestParseECConfig(t *testing.T) {
	c, err := ParseECConfig(" 12+4 ")
	if err != nil || c != (ECConfig{12, 4}) || c.String() != "12+4" {
		t.Errorf("ParseECConfig(12+4) = %v, %v", c, err)
	}
	for _, bad := range []string{"", "12", "12-4", "x+4", "4+y", "0+4", "4+0", "200+100"} {
		if _, err := ParseECConfig(bad); err == nil {
			t.Errorf("ParseECConfig(%q): no error", bad)
		}
	}
}

func TestThreadSteps(t *testing.T) {
	for limit, want := range map[int][]int{1: {1}, 2: {1, 2}, 6: {1, 2, 4, 6}, 8: {1, 2, 4, 8}} {
		if got := ThreadSteps(limit); !slices.Equal(got, want) {
			t.Errorf("ThreadSteps(%d) = %v, want %v", limit, got, want)
		}
	}
}

func TestParseISA(t *testing.T) {
	if isa, err := ParseISA("AVX2"); err != nil || isa != ISAAVX2 {
		t.Errorf("ParseISA(AVX2) = %v, %v", isa, err)
	}
	if _, err := ParseISA("mmx"); err == nil {
		t.Error("ParseISA(mmx): no error")
	}
	avail := AvailableISAs()
	if len(avail) == 0 || avail[len(avail)-1] != ISAGeneric {
		t.Errorf("AvailableISAs = %v, want at least the generic path last", avail)
	}
}

// TestISAsAgree encodes the same data with every supported code path: the
// parity must be identical, or forcing a path broke the codec (or we did
// not force what we think we forced into something that computes the
// same field).
func TestISAsAgree(t *testing.T) {
	const size = 12 * 4096 // big enough for the SIMD paths to engage
	var want [][]byte
	for _, isa := range AvailableISAs() {
		enc, err := reedsolomon.New(12, 4, append(isa.options(), reedsolomon.WithMaxGoroutines(1))...)
		if err != nil {
			t.Fatal(err)
		}
		shards := make([][]byte, 16)
		for i := range shards {
			shards[i] = make([]byte, size/12)
			if i < 12 {
				for j := range shards[i] {
					shards[i][j] = byte(i*131 + j*7)
				}
			}
		}
		if err := enc.Encode(shards); err != nil {
			t.Fatalf("%s: %v", isa, err)
		}
		if want == nil {
			want = shards
			continue
		}
		for i := 12; i < 16; i++ {
			if !bytes.Equal(shards[i], want[i]) {
				t.Errorf("%s parity shard %d differs from %s", isa, i, AvailableISAs()[0])
			}
		}
	}
}

func tinyOptions() ECOptions {
	return ECOptions{
		// 2+3 has more parity than data, so reconstruct loses parity too.
		Configs:   []ECConfig{{12, 4}, {4, 4}, {2, 3}},
		Threads:   []int{1, 2, 3},
		BlockSize: 4099, // not a multiple of any shard count: exercises padding
		Blocks:    10,   // not a multiple of 3 threads: uneven split
		Verify:    true,
		Seed:      1,
	}
}

func runTiny(t *testing.T) ECReport {
	t.Helper()
	opts := tinyOptions()
	total, err := ECMeasurements(opts)
	if err != nil {
		t.Fatal(err)
	}
	var calls, last int
	rep, err := RunEC(context.Background(), opts, func(done, tot int) {
		calls++
		if tot != total || done != last+1 {
			t.Errorf("progress(%d, %d) after %d, want total %d", done, tot, last, total)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != total || len(rep.Results) != total {
		t.Fatalf("%d progress calls, %d results, want %d", calls, len(rep.Results), total)
	}
	return rep
}

func TestRunECTiny(t *testing.T) {
	rep := runTiny(t)
	isas := AvailableISAs()
	// (1 encode + K reconstructs) per config, per thread count, per ISA.
	if want := (5 + 5 + 4) * 3 * len(isas); len(rep.Results) != want {
		t.Fatalf("results = %d, want %d", len(rep.Results), want)
	}
	seen := map[string]bool{}
	for _, r := range rep.Results {
		seen[string(r.ISA)+" "+r.Config+" "+r.Name()+" "+strconv.Itoa(r.Threads)] = true
		if r.Bytes != 4099*10 || r.Seconds <= 0 || r.GBps <= 0 || r.Gbitps != r.GBps*8 {
			t.Errorf("bad numbers: %+v", r)
		}
		if (r.Op == OpEncode) != (r.Lost == 0) || r.Lost > r.Parity {
			t.Errorf("bad op/lost: %+v", r)
		}
	}
	if len(seen) != len(rep.Results) {
		t.Errorf("duplicate measurements: %d distinct of %d", len(seen), len(rep.Results))
	}
	if !seen[string(isas[0])+" 2+3 reconstruct-3 3"] {
		t.Error("missing 2+3 reconstruct-3 with 3 threads")
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(table.String(), "\n"); lines < len(rep.Results)+5 {
		t.Errorf("table has %d lines for %d results:\n%s", lines, len(rep.Results), table.String())
	}
	if !strings.Contains(table.String(), "user data bytes only") {
		t.Error("table header does not say what bytes are counted")
	}
}

func TestReportRoundTrips(t *testing.T) {
	rep := runTiny(t)

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back ECReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse back: %v", err)
	}
	if !slices.Equal(back.Results, rep.Results) || back.Blocks != rep.Blocks || back.BlockSize != rep.BlockSize {
		t.Error("JSON round trip changed the report")
	}

	var cs bytes.Buffer
	if err := rep.WriteCSV(&cs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse back: %v", err)
	}
	if len(rows) != len(rep.Results)+1 || !slices.Equal(rows[0], CSVHeader()) {
		t.Fatalf("CSV: %d rows, header %v", len(rows), rows[0])
	}
	for i, row := range rows[1:] {
		r := rep.Results[i]
		gb, err := strconv.ParseFloat(row[9], 64)
		if err != nil || gb != r.GBps || row[0] != string(r.ISA) || row[1] != r.Config || row[5] != strconv.Itoa(r.Lost) {
			t.Errorf("CSV row %d = %v, result %+v", i, row, r)
		}
	}

	var pngBuf bytes.Buffer
	if err := rep.WriteChart(&pngBuf, ChartPNG); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pngBuf)
	if err != nil {
		t.Fatalf("chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("chart is %v", b)
	}

	var svgBuf bytes.Buffer
	if err := rep.WriteChart(&svgBuf, ChartSVG); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&svgBuf)
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart is not valid SVG/XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("SVG root element = %q", root)
	}
	if err := rep.WriteChart(io.Discard, "gif"); err == nil {
		t.Error("unknown chart format: no error")
	}
	if err := (ECReport{}).WriteChart(io.Discard, ChartPNG); err == nil {
		t.Error("empty report chart: no error")
	}
}

func TestChartFormat(t *testing.T) {
	for path, want := range map[string]string{"a.png": "png", "b.SVG": "svg"} {
		if got, err := ChartFormat(path); err != nil || got != want {
			t.Errorf("ChartFormat(%q) = %q, %v", path, got, err)
		}
	}
	if _, err := ChartFormat("c.pdf"); err == nil {
		t.Error("ChartFormat(.pdf): no error")
	}
}

func TestRunECOptionsAndCancel(t *testing.T) {
	opts := ECOptions{Configs: []ECConfig{{8, 8}}, Threads: []int{2}, ISAs: []ISA{ISAGeneric},
		BlockSize: 1024, Blocks: 4, SkipEncode: true, MaxLost: 3, Rounds: 2, Verify: true}
	rep, err := RunEC(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 3 {
		t.Fatalf("results = %+v, want reconstruct-1..3 only", rep.Results)
	}
	for i, r := range rep.Results {
		if r.Op != OpReconstruct || r.Lost != i+1 || r.Bytes != 1024*4*2 {
			t.Errorf("result %d = %+v", i, r)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunEC(ctx, tinyOptions(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: err = %v, want context.Canceled", err)
	}
	for _, bad := range []ECOptions{
		{Threads: []int{0}},
		{Configs: []ECConfig{{0, 1}}},
		{BlockSize: -1},
		{ISAs: []ISA{"mmx"}},
	} {
		if _, err := RunEC(context.Background(), bad, nil); err == nil {
			t.Errorf("RunEC(%+v): no error", bad)
		}
	}
}

// BenchmarkEncode12x4 is the hot loop of the study on one thread with
// the fastest path, for `go test -bench`.
func BenchmarkEncode12x4(b *testing.B) {
	enc, err := reedsolomon.New(12, 4, reedsolomon.WithMaxGoroutines(1))
	if err != nil {
		b.Fatal(err)
	}
	set := newECSet(ECConfig{12, 4}, DefaultECBlockSize, 1, rand.NewChaCha8([32]byte{}))
	b.SetBytes(DefaultECBlockSize)
	for b.Loop() {
		if err := enc.Encode(set.blocks[0]); err != nil {
			b.Fatal(err)
		}
	}
}
