package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Header describes the run and the units, for the top of every text output.
func (r ECReport) Header() string {
	var b strings.Builder
	isas := make([]string, len(r.ISAsAvailable))
	for i, isa := range r.ISAsAvailable {
		isas[i] = string(isa)
	}
	fmt.Fprintf(&b, "Erasure coding: Reed-Solomon GF(2^8), %d blocks x %s (%s working set), %d round(s), started %s\n",
		r.Blocks, humanBytes(int64(r.BlockSize)), humanBytes(int64(r.BlockSize)*int64(r.Blocks)), r.Rounds,
		r.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "CPU: %s, %d cores, GOMAXPROCS %d; instruction sets available: %s\n",
		r.CPU, r.Cores, r.GOMAXPROCS, strings.Join(isas, ", "))
	b.WriteString("Throughput counts user data bytes only (parity and padding excluded); GB = 10^9 bytes, Gbit = 10^9 bits.\n")
	b.WriteString("CPU AVG and MOST CONSUMED are the whole machine during the measurement " +
		"(cores within 10 points grouped, top 2 groups); PROC is cores this process used;\n" +
		"GB/CPU-s is user data per CPU second this process spent: the cost per byte, robust to other load.\n")
	return b.String()
}

// WriteTable prints the header and one row per result.
func (r ECReport) WriteTable(w io.Writer) error {
	if _, err := io.WriteString(w, r.Header()+"\n"); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ISA\tCONFIG\tOP\tTHREADS\tGB/s\tGbit/s\tGB/s/THREAD\tGB/CPU-s\tCPU AVG\tMOST CONSUMED\tPROC")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.1f\t%.2f\t%.2f\t%s\t%s\t%.2f\n",
			res.ISA, res.Config, res.Name(), res.Threads, res.GBps, res.Gbitps,
			res.GBps/float64(res.Threads), res.GBPerCPUSecond, percent(res.CPUAvg, res.MostConsumed != ""),
			orDash(res.MostConsumed), res.ProcessCores)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	return nil
}

func percent(f float64, known bool) string {
	if !known {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", f*100)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// WriteJSON writes the whole report as indented JSON.
func (r ECReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing json: %w", err)
	}
	return nil
}

// CSVHeader is the first row WriteCSV writes; the columns match the JSON
// field names of ECResult.
func CSVHeader() []string {
	return []string{"isa", "config", "data_shards", "parity_shards", "op", "lost", "threads",
		"bytes", "seconds", "gb_per_s", "gbit_per_s", "cpu_avg", "most_consumed_cores", "core_imbalance", "process_cores",
		"gb_per_cpu_s"}
}

// WriteCSV writes one row per result under CSVHeader.
func (r ECReport) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader()); err != nil {
		return fmt.Errorf("writing csv: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, res := range r.Results {
		row := []string{string(res.ISA), res.Config, strconv.Itoa(res.Data), strconv.Itoa(res.Parity),
			res.Op, strconv.Itoa(res.Lost), strconv.Itoa(res.Threads), strconv.FormatInt(res.Bytes, 10),
			f(res.Seconds), f(res.GBps), f(res.Gbitps), f(res.CPUAvg), res.MostConsumed,
			f(res.Imbalance), f(res.ProcessCores), f(res.GBPerCPUSecond)}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("writing csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing csv: %w", err)
	}
	return nil
}
