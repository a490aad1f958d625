package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes results as an aligned text table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\trows/s\tCPU/row\tratio\tckpt p50\tckpt p99\talign p50\talign p99\tsync p50\tsync p99\trestore\tlat p50\tlat p99\tlat p99.9\tpeak Go\tpeak RSS\tnote")
	for _, r := range results {
		rate := "-"
		if r.RowsPerSec > 0 {
			rate = formatRate(r.RowsPerSec)
		}
		ratio := "-"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		mem := func(b uint64) string {
			if b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
		}
		peakGo, peakRSS := mem(r.PeakGo), mem(r.PeakRSS)
		if r.Workload == "REF" {
			peakGo, peakRSS = "-", "-"
		}
		note := r.Note
		if r.PeakRSS30s > 0 && r.PeakGo30s > 0 {
			last := func(early, late uint64) string {
				if late == 0 {
					return ""
				}
				return fmt.Sprintf(", last 30 s %+.1f%%", growth(early, late))
			}
			note = strings.TrimSpace(fmt.Sprintf("%s peak at 30 s: Go %s (end %+.1f%%%s), RSS %s (end %+.1f%%%s)", note,
				mem(r.PeakGo30s), growth(r.PeakGo30s, r.PeakGo), last(r.PeakGo30s, r.PeakGoLast30s),
				mem(r.PeakRSS30s), growth(r.PeakRSS30s, r.PeakRSS), last(r.PeakRSS30s, r.PeakRSSLast30s)))
		}
		if r.StateKeys > 0 {
			note = strings.TrimSpace(fmt.Sprintf("%s %d keys in state", note, r.StateKeys))
		}
		cpu := "-"
		if r.CPUNsPerRow > 0 {
			cpu = fmt.Sprintf("%.0fns", r.CPUNsPerRow)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Workload, rate, cpu, ratio,
			dur(r.CkptP50), dur(r.CkptP99), dur(r.AlignP50), dur(r.AlignP99), dur(r.SyncP50), dur(r.SyncP99), dur(r.Restore),
			dur(r.LatP50), dur(r.LatP99), dur(r.LatP999), peakGo, peakRSS, note)
	}
	return tw.Flush()
}

// WriteJSON writes results as a JSON array.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// growth is the change from a to b in percent of a.
func growth(a, b uint64) float64 { return 100 * (float64(b) - float64(a)) / float64(a) }

func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return d.Round(time.Millisecond).String()
}

func formatRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
