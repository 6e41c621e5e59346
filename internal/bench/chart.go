package bench

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart formats WriteChart understands.
const (
	ChartPNG = "png"
	ChartSVG = "svg"
)

// ChartFormat picks the chart format from a file name's extension.
func ChartFormat(path string) (string, error) {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case ChartPNG, ChartSVG:
		return ext, nil
	default:
		return "", fmt.Errorf("chart %q: unknown extension %q, want .png or .svg", path, ext)
	}
}

// chartOps is which operations get a line: encode, the cheapest and the
// dearest reconstruct. All 1..K reconstruct lines (up to 19 per panel
// with the default configs) would make the chart unreadable; the table,
// JSON and CSV have every measurement.
func chartOps(res []ECResult) map[string]bool {
	maxLost := map[string]int{}
	for _, r := range res {
		maxLost[r.Config] = max(maxLost[r.Config], r.Lost)
	}
	keep := map[string]bool{}
	for _, r := range res {
		if r.Op == OpEncode || r.Lost == 1 || r.Lost == maxLost[r.Config] {
			keep[r.Config+" "+r.Name()] = true
		}
	}
	return keep
}

// WriteChart draws throughput (GB/s of user data) against threads, one
// panel per instruction set, one line per configuration and operation,
// and writes it as format (ChartPNG or ChartSVG).
func (r ECReport) WriteChart(w io.Writer, format string) error {
	var isas []ISA
	for _, res := range r.Results {
		if !slices.Contains(isas, res.ISA) {
			isas = append(isas, res.ISA)
		}
	}
	if len(isas) == 0 {
		return fmt.Errorf("chart: no results to draw")
	}
	keep := chartOps(r.Results)

	const panelH, width, legendW = 3.2 * vg.Inch, 9 * vg.Inch, 2.4 * vg.Inch
	height := panelH * vg.Length(len(isas))

	var c vg.CanvasWriterTo
	switch format {
	case ChartPNG:
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	case ChartSVG:
		c = vgsvg.New(width, height)
	default:
		return fmt.Errorf("chart: unknown format %q, want %s or %s", format, ChartPNG, ChartSVG)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(isas), Cols: 1, PadTop: 6, PadBottom: 6, PadLeft: 6, PadRight: 6, PadY: 12}

	var configs []string
	for _, res := range r.Results {
		if !slices.Contains(configs, res.Config) {
			configs = append(configs, res.Config)
		}
	}
	for row, isa := range isas {
		p, legend, err := r.panel(isa, configs, keep)
		if err != nil {
			return err
		}
		tile := tiles.At(dc, 0, row)
		p.Draw(draw.Crop(tile, 0, -legendW, 0, 0))
		legend.Draw(draw.Crop(tile, tile.Max.X-tile.Min.X-legendW+8, 0, 0, -8))
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("chart: writing %s: %w", format, err)
	}
	return nil
}

func (r ECReport) panel(isa ISA, configs []string, keep map[string]bool) (*plot.Plot, plot.Legend, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Reed-Solomon %s, %d x %s blocks", isa, r.Blocks, humanBytes(int64(r.BlockSize)))
	p.X.Label.Text = "threads"
	p.Y.Label.Text = "GB/s of user data"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true

	// Series in first-seen order, so colours follow the config order
	// given on the command line.
	type series struct {
		config, op string
		xys        plotter.XYs
	}
	var all []*series
	index := map[string]*series{}
	threads := map[int]bool{}
	for _, res := range r.Results {
		key := res.Config + " " + res.Name()
		if res.ISA != isa || !keep[key] {
			continue
		}
		s := index[key]
		if s == nil {
			s = &series{config: res.Config, op: res.Name()}
			index[key] = s
			all = append(all, s)
		}
		s.xys = append(s.xys, plotter.XY{X: float64(res.Threads), Y: res.GBps})
		threads[res.Threads] = true
	}
	var ticks plot.ConstantTicks
	for t := range threads {
		ticks = append(ticks, plot.Tick{Value: float64(t), Label: strconv.Itoa(t)})
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return int(a.Value - b.Value) })
	p.X.Tick.Marker = ticks
	if len(ticks) == 1 { // a single thread count would give a zero-width axis
		p.X.Min, p.X.Max = ticks[0].Value-1, ticks[0].Value+1
	}

	opIndex := map[string]int{}
	for _, s := range all {
		slices.SortFunc(s.xys, func(a, b plotter.XY) int { return int(a.X - b.X) })
		line, points, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return nil, legend, fmt.Errorf("chart: %s %s %s: %w", isa, s.config, s.op, err)
		}
		ci := slices.Index(configs, s.config)
		kind := s.op
		if strings.HasPrefix(kind, OpReconstruct) && kind != OpReconstruct+"-1" {
			kind = OpReconstruct + "-K"
		}
		oi, ok := opIndex[kind]
		if !ok {
			oi = len(opIndex)
			opIndex[kind] = oi
		}
		line.Color = plotutil.Color(ci)
		line.Dashes = plotutil.Dashes(oi)
		line.Width = vg.Points(1.5)
		points.Color = plotutil.Color(ci)
		points.Shape = plotutil.Shape(oi)
		p.Add(line, points)
		legend.Add(s.config+" "+s.op, line, points)
	}
	return p, legend, nil
}
