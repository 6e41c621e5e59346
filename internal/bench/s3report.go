package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Header describes the run and the units, for the top of the table.
func (r S3Report) Header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "S3 load: mode %s, %s objects, concurrency %d, ", r.Mode, humanBytes(int64(r.Size)), r.Concurrency)
	if r.Ops > 0 {
		fmt.Fprintf(&b, "%d ops per phase (time limit %s)", r.Ops, time.Duration(r.DurationSeconds*float64(time.Second)))
	} else {
		fmt.Fprintf(&b, "%s per phase", time.Duration(r.DurationSeconds*float64(time.Second)))
	}
	if r.Mode == S3Mixed {
		fmt.Fprintf(&b, ", %.0f%% GETs", r.GetFraction*100)
	}
	if r.Mode == S3List {
		if r.Objects > 0 {
			fmt.Fprintf(&b, ", writing %d keys", r.Objects)
		} else {
			b.WriteString(", keys of an earlier run")
		}
		fmt.Fprintf(&b, ", %d listings in pages of %d", r.Listings, r.PageSize)
	} else if r.Objects > 0 {
		fmt.Fprintf(&b, ", reading %d pre-written objects", r.Objects)
	}
	if r.Verify {
		b.WriteString(", GET bodies verified")
	}
	if r.SSE != nil {
		fmt.Fprintf(&b, ", PUTs with x-amz-server-side-encryption %s", r.SSE.Algorithm)
		if r.SSE.KMSKeyID != "" {
			fmt.Fprintf(&b, " (key %s)", r.SSE.KMSKeyID)
		}
	}
	fmt.Fprintf(&b, "\nEndpoint %s, bucket %s, prefix %s, started %s\n", r.Endpoint, r.Bucket, r.Prefix,
		r.Started.Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Client: %s, %d cores", r.CPU, r.Cores)
	switch len(r.PIDs) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "; server pid %d", r.PIDs[0])
	default:
		fmt.Fprintf(&b, "; server pids %s (CPU summed)", strings.Trim(fmt.Sprint(r.PIDs), "[]"))
	}
	b.WriteString("\nMiB/s = 2^20 bytes/s of object data. Latency: request start to response fully read; TTFB: to the first body byte (GET);\n" +
		"percentiles nearest-rank, within 0.4%. SRV: server process CPU seconds per GiB moved, CPU ms per op, cores busy;\n" +
		"CLI: this process (the SDK client) CPU seconds per GiB. MACHINE: whole-machine CPU and most consumed cores.\n")
	return b.String()
}

// WriteTable prints the header, one row per operation type in each phase
// (plus a combined row for a phase of more than one), and the cleanup.
func (r S3Report) WriteTable(w io.Writer) error {
	if _, err := io.WriteString(w, r.Header()+"\n"); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tOP\tOPS\tERR\tSECONDS\tMiB/s\tOPS/s\tP50 ms\tP90 ms\tP99 ms\tMAX ms\tTTFB P50\tTTFB P99\t"+
		"SRV s/GiB\tSRV ms/op\tSRV CORES\tCLI s/GiB\tMACHINE\tMOST CONSUMED")
	for _, ph := range r.Phases {
		cpu := phaseCPUColumns(ph, len(r.PIDs) > 0)
		for _, op := range ph.Ops {
			ttfb50, ttfb99 := "-", "-"
			if op.TTFB != nil {
				ttfb50, ttfb99 = fmt.Sprintf("%.2f", op.TTFB.P50MS), fmt.Sprintf("%.2f", op.TTFB.P99MS)
			}
			cols := cpu
			if len(ph.Ops) > 1 {
				// CPU cannot be split between PUTs and GETs of one mix;
				// it goes on the combined row.
				cols = "-\t-\t-\t-\t-\t-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\n",
				ph.Name, op.Op, op.Count, op.Errors, ph.Seconds, op.MiBps, op.OpsPerSec,
				op.Latency.P50MS, op.Latency.P90MS, op.Latency.P99MS, op.Latency.MaxMS, ttfb50, ttfb99, cols)
		}
		if len(ph.Ops) > 1 {
			fmt.Fprintf(tw, "%s\tALL\t%d\t%d\t%.1f\t%.1f\t%.1f\t-\t-\t-\t-\t-\t-\t%s\n",
				ph.Name, ph.Count, ph.Errors, ph.Seconds, ph.MiBps, ph.OpsPerSec, cpu)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing table: %w", err)
	}
	var notes []string
	for _, ph := range r.Phases {
		if len(ph.Listings) > 0 {
			each := make([]string, len(ph.Listings))
			for i, ls := range ph.Listings {
				each[i] = fmt.Sprintf("%.0f (%d keys, %d pages, %.2f s)", ls.KeysPerSec, ls.Keys, ls.Pages, ls.Seconds)
			}
			notes = append(notes, fmt.Sprintf("%s phase: %.0f keys/s; each listing: %s", ph.Name, ph.KeysPerSec, strings.Join(each, ", ")))
		}
		if ph.Name == "list" && !ph.Complete {
			continue // FirstError says why; Ops does not apply
		}
		if !ph.Complete {
			notes = append(notes, fmt.Sprintf("%s phase did %d of %d ops before its time limit or errors", ph.Name, ph.Count, r.Ops))
		}
		if ph.FirstError != "" {
			notes = append(notes, fmt.Sprintf("%s phase: %d failed; first: %s", ph.Name, ph.Errors, ph.FirstError))
		}
	}
	notes = append(notes, "cleanup: "+r.Cleanup)
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return fmt.Errorf("writing table: %w", err)
		}
	}
	return nil
}

// phaseCPUColumns renders SRV s/GiB, SRV ms/op, SRV CORES, CLI s/GiB,
// MACHINE and MOST CONSUMED.
func phaseCPUColumns(ph S3Phase, haveServer bool) string {
	srv := "-\t-\t-"
	if haveServer {
		srv = fmt.Sprintf("%.2f\t%.3f\t%.2f", ph.ServerCPUPerGiB, ph.ServerCPUPerOpMS, ph.ServerCores)
	}
	cli := "-"
	if ph.ClientCPUPerGiB > 0 {
		cli = fmt.Sprintf("%.2f", ph.ClientCPUPerGiB)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s", srv, cli, percent(ph.MachineCPUAvg, ph.MostConsumed != ""), orDash(ph.MostConsumed))
}

// WriteJSON writes the whole report as indented JSON.
func (r S3Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("writing json: %w", err)
	}
	return nil
}
