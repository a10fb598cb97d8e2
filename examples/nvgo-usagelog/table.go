package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/nvgo/nvgo/examples/internal/tool"
)

// writeTable prints the report as an aligned table: a line per user per
// day, totals per user and overall, then the gaps in the range. It returns
// the first error writing to out.
func writeTable(out io.Writer, rp *report, dir string, loc *time.Location) error {
	w := tool.NewOutput(out)
	fmt.Fprintf(w, "GPU usage by user, %s (%s)\n\n", rangeTitle(rp.From, rp.To), dir)
	withQuota := len(rp.Quotas) > 0
	head := []string{"DAY", "USER", "BUSY GPU-H", "HELD GPU-H", "BUSY/HELD", "MEM GIB-H"}
	if withQuota {
		head = append(head, "QUOTA GPU-H", "QUOTA USE")
	}
	head = append(head, "NOTE")
	lines := [][]string{head}
	// A "*" marks busy hours that leave out time whose usage was N/A; the
	// other numbers of the column get a space, to stay aligned.
	unknown := rp.Total.Unknown > 0
	line := func(day, user string, u usage, quota float64, hasQuota bool, note []string) {
		busy := u.busyHours()
		switch {
		case u.Unknown > 0 && u.usageKnown():
			busy += "*"
		case unknown:
			busy += " "
		}
		l := []string{day, user, busy, hours(u.Held), u.busyShare(), hours(u.MemGiB)}
		if withQuota {
			if hasQuota {
				use := ratio(u.Busy, quota)
				if !u.usageKnown() && u.Held > 0 {
					use = na
				}
				l = append(l, hours(quota), use)
				if u.Busy > quota {
					note = append([]string{"OVER QUOTA"}, note...)
				}
			} else {
				l = append(l, "-", "-")
			}
		}
		lines = append(lines, append(l, strings.Join(note, ", ")))
	}
	for _, d := range rp.Days {
		var note []string
		if rp.GapDays[d] {
			note = append(note, "gap in the log")
		}
		found := false
		for _, u := range rp.Users {
			c, ok := rp.Cells[cell{d, u}]
			if !ok {
				continue
			}
			q, hasQ := rp.Quotas.of(u)
			label := d
			if found {
				label = "" // the day is on its first line
			}
			line(label, u, c, q, hasQ, note)
			note, found = nil, true
		}
		if !found {
			l := []string{d, "(none)"}
			for len(l) < len(head)-1 {
				l = append(l, "")
			}
			lines = append(lines, append(l, strings.Join(note, ", ")))
		}
	}
	if len(rp.Users) > 0 {
		lines = append(lines, nil) // a rule
		days := float64(len(rp.Days))
		for _, u := range rp.Users {
			q, hasQ := rp.Quotas.of(u)
			line("TOTAL", u, rp.ByUser[u], q*days, hasQ, nil)
		}
		if len(rp.Users) > 1 {
			line("TOTAL", "(all)", rp.Total, 0, false, nil)
		}
	}
	printAligned(w, lines, 2)
	if unknown {
		fmt.Fprintln(w, "\n* leaves out time whose GPU Usage was N/A (a MIG process's, say): it is held, not")
		fmt.Fprintln(w, "  busy, and BUSY/HELD is over the time whose usage is known; N/A: none was known")
	}
	if withQuota && len(rp.Users) > 0 {
		fmt.Fprintln(w, "\nQuotas are busy GPU-hours per day; a TOTAL's quota is the daily quota × the days of the range.")
	}
	if len(rp.Gaps) > 0 {
		fmt.Fprintln(w, "\nGaps in the log (usage was not measured; a gap of one GPU names it):")
		for _, g := range rp.Gaps {
			fmt.Fprintf(w, "  %s  to  %s  (%s, %s)\n",
				time.Unix(g.Start, 0).In(loc).Format("2006-01-02 15:04:05"),
				time.Unix(g.End, 0).In(loc).Format("2006-01-02 15:04:05"),
				g.Duration(), g.Reason)
		}
	}
	return w.Err()
}

// printAligned prints lines as columns: the first two left-aligned, the
// rest right-aligned but the last; a nil line is a rule.
func printAligned(w io.Writer, lines [][]string, leftCols int) {
	var width []int
	for _, l := range lines {
		for i, f := range l {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(f)))
		}
	}
	total := 0
	for _, wd := range width[:len(width)-1] {
		total += wd + 2
	}
	for _, l := range lines {
		if l == nil {
			fmt.Fprintln(w, strings.Repeat("-", total))
			continue
		}
		var b strings.Builder
		for i, f := range l {
			pad := strings.Repeat(" ", width[i]-len([]rune(f)))
			switch {
			case i == len(l)-1:
				b.WriteString(f)
			case i < leftCols:
				b.WriteString(f + pad + "  ")
			default:
				b.WriteString(pad + f + "  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func hours(h float64) string { return strconv.FormatFloat(h, 'f', 2, 64) }

// ratio returns a/b as a whole percentage, or "-" when b is 0.
func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*a/b, 'f', 0, 64) + "%"
}

// rangeTitle returns "2026-11-21" or "2026-11-20 to 2026-11-26".
func rangeTitle(from, to string) string {
	if from == to {
		return from
	}
	return from + " to " + to
}
