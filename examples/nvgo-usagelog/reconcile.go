package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// gapsHeader is the first line of gaps.csv. The last two columns were
// added after the first four, which is the whole of oldGapsHeader: a gap of
// the whole log leaves them empty, a gap of one GPU names it, so readers of
// the first four keep working and see the GPU in the Reason.
const gapsHeader = "Start,End,Seconds,Reason,GPU Number,GPU UUID"

// oldGapsHeader is the header of a gaps.csv written before the GPU columns;
// the logger rewrites such a file with them (upgradeGaps).
const oldGapsHeader = "Start,End,Seconds,Reason"

// gapNotRunning is the reason of a gap between a stop (or crash) and the
// next start: nothing measured the GPUs then.
const gapNotRunning = "not running"

// gap is a span of time no interval covers: one row of gaps.csv, Unix
// seconds.
type gap struct {
	Start, End int64
	Reason     string
	// OnGPU marks a gap of one GPU's processes alone (the GPU, or its
	// process lists, could not be read while the rest was measured), and
	// GPU (its NVML index) and UUID name it; without it, nothing was
	// measured.
	OnGPU bool
	GPU   int
	UUID  string
}

func (g gap) Duration() time.Duration { return time.Duration(g.End-g.Start) * time.Second }

// gapScope is what a gap covers: the whole log, or one GPU's processes.
type gapScope struct {
	onGPU bool
	gpu   int
	uuid  string
}

func (g gap) scope() gapScope { return gapScope{g.OnGPU, g.GPU, g.UUID} }

// formatGap returns g as one line of gaps.csv, "\n" included. Reason and
// UUID are kept to one line without commas, so that the fields split on
// commas.
func formatGap(g gap) []byte {
	gpu := ""
	if g.OnGPU {
		gpu = strconv.Itoa(g.GPU)
	}
	return fmt.Appendf(nil, "%d,%d,%d,%s,%s,%s\n", g.Start, g.End, g.End-g.Start, gapField(g.Reason), gpu, gapField(g.UUID))
}

func gapField(s string) string { return strings.ReplaceAll(oneLine(s), ",", ";") }

// parseGap reads one line of gaps.csv (without its "\n"): a row of the six
// columns formatGap writes, or of the first four (written before the GPU
// columns), or of at least Start and End. Fields beyond the sixth are
// ignored.
func parseGap(line string) (gap, error) {
	if strings.HasPrefix(line, "Start,") {
		return gap{}, errHeader
	}
	f := strings.Split(strings.TrimSuffix(line, "\r"), ",")
	if len(f) < 2 {
		return gap{}, errors.New("want Start,End,Seconds,Reason,GPU Number,GPU UUID")
	}
	var g gap
	var err1, err2 error
	g.Start, err1 = strconv.ParseInt(f[0], 10, 64)
	g.End, err2 = strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || g.Start <= 0 || g.End < g.Start {
		return gap{}, fmt.Errorf("bad Start %q or End %q: want Unix seconds, Start ≤ End", f[0], f[1])
	}
	if len(f) >= 4 {
		g.Reason = oneLine(f[3])
	}
	if len(f) >= 5 && f[4] != "" {
		n, err := strconv.Atoi(f[4])
		if err != nil || n < 0 {
			return gap{}, fmt.Errorf("bad GPU Number %q: want a non-negative integer, or nothing for the whole log", f[4])
		}
		g.OnGPU, g.GPU = true, n
	}
	if len(f) >= 6 {
		g.UUID = oneLine(f[5])
	}
	return g, nil
}

// isWholeGap reports whether line (without its "\n") is a whole row of
// gaps.csv: one that parseGap reads, with the six fields formatGap writes
// (or the four written before the GPU columns) and a Seconds that agrees
// with Start and End.
func isWholeGap(line string) bool {
	g, err := parseGap(line)
	if err != nil {
		return false
	}
	f := strings.Split(strings.TrimSuffix(line, "\r"), ",")
	return (len(f) == 4 || len(f) == 6) && f[2] == strconv.FormatInt(g.End-g.Start, 10)
}

// upgradeGaps gives a gaps.csv written before the GPU columns (its first
// line is oldGapsHeader) the header of this version, and its rows of four
// fields two empty ones (gaps of the whole log), replacing it atomically,
// so that every row has the header's columns. It reports whether it did;
// any other file is left alone.
func upgradeGaps(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	lines := strings.SplitAfter(string(b), "\n")
	if strings.TrimRight(lines[0], "\r\n") != oldGapsHeader {
		return false, nil
	}
	var out strings.Builder
	out.WriteString(gapsHeader + "\n")
	for _, l := range lines[1:] {
		body := strings.TrimSuffix(l, "\n")
		cr := strings.HasSuffix(body, "\r")
		body = strings.TrimSuffix(body, "\r")
		if strings.Count(body, ",") == 3 && isWholeGap(body) {
			body += ",,"
		}
		if cr {
			body += "\r"
		}
		out.WriteString(body)
		if strings.HasSuffix(l, "\n") {
			out.WriteString("\n")
		}
	}
	err = replaceFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, out.String())
		return err
	})
	return err == nil, err
}

// resume is where a log directory left off.
type resume struct {
	// Last is the end of the last interval written; Known is false for a
	// new directory.
	Last  time.Time
	Known bool
	// Accounted is the time up to which the log accounts for the GPUs:
	// Last, or later when gaps of the whole log were recorded back to back
	// from Last (by runs that stopped before their first interval ended).
	// The next gap starts there, so that no time is in two gaps.
	Accounted time.Time
	// Note explains a disagreement between the state file and the CSV,
	// for a warning; "" when there was none.
	Note string
}

// reconcile decides where the log left off from the state file (nil when
// there is none), the newest Timestamp in the newest daily CSV (csvOK
// false when there is no row) and the rows of gaps.csv. The state file is
// written after the rows and also records intervals without rows (idle
// GPUs), so it is normally ahead of or level with the CSV. If the CSV is
// ahead, the logger stopped between the two writes: the CSV's rows were
// written and are kept, and that interval counts as written, so it is
// never written again.
func reconcile(st *state, csvLast int64, csvOK bool, gaps []gap) resume {
	var r resume
	switch {
	case st == nil && !csvOK:
		return resume{}
	case st == nil:
		t := time.Unix(csvLast, 0)
		r = resume{Last: t, Known: true, Note: fmt.Sprintf("no state file: resuming after the newest CSV row (%s)", t.UTC().Format(time.RFC3339))}
	case csvOK && csvLast > st.LastEnd.Unix():
		t := time.Unix(csvLast, 0)
		r = resume{Last: t, Known: true, Note: fmt.Sprintf("the state file (last interval ending %s) is behind the CSV (rows up to %s), as after a crash between the two writes, or after a run whose clock was behind the log: resuming after the CSV",
			st.LastEnd.UTC().Format(time.RFC3339), t.UTC().Format(time.RFC3339))}
	default:
		r = resume{Last: st.LastEnd, Known: true}
	}
	r.Accounted = accountedUntil(r.Last, gaps)
	return r
}

// accountedUntil returns the end of the gaps of the whole log that follow
// last back to back (each starting at or before the end of the one before),
// or last when none does. A gap of one GPU accounts for that GPU alone.
func accountedUntil(last time.Time, gaps []gap) time.Time {
	sorted := slices.Clone(gaps)
	slices.SortFunc(sorted, func(a, b gap) int { return cmp.Compare(a.Start, b.Start) })
	end := last.Unix()
	for _, g := range sorted {
		if !g.OnGPU && g.Start <= end && g.End > end {
			end = g.End
		}
	}
	if end == last.Unix() {
		return last
	}
	return time.Unix(end, 0)
}

// gapBefore returns the gap between where the log accounts for the GPUs
// and t (a start's first tick, or a stop), if there is one: any whole
// second. A start's first tick is not in its first interval (that begins
// there), so even one tick after the last interval's end is a second
// nobody measured.
func gapBefore(r resume, t time.Time) (gap, bool) {
	if !r.Known || t.Unix() <= r.Accounted.Unix() {
		return gap{}, false
	}
	return gap{Start: r.Accounted.Unix(), End: t.Unix(), Reason: gapNotRunning}, true
}

// mergeGaps returns gaps sorted by start, with those of one scope (the
// whole log, or one GPU) that overlap or touch merged into one (their
// distinct reasons joined by "; "), so that no time is counted twice: a run
// stopped before its first interval ended, and the next start, both record
// a gap from the same interval end, and a GPU's fault is a row per
// interval while it lasts.
func mergeGaps(gaps []gap) []gap {
	sorted := slices.Clone(gaps)
	slices.SortStableFunc(sorted, func(a, b gap) int { return cmp.Compare(a.Start, b.Start) })
	var out []gap
	latest := map[gapScope]int{}  // the index in out of each scope's latest gap
	reasons := map[int][]string{} // the reasons merged into out[i]
	for _, g := range sorted {
		if i, ok := latest[g.scope()]; ok && g.Start <= out[i].End {
			out[i].End = max(out[i].End, g.End)
			if !slices.Contains(reasons[i], g.Reason) {
				reasons[i] = append(reasons[i], g.Reason)
				out[i].Reason += "; " + g.Reason
			}
			continue
		}
		latest[g.scope()] = len(out)
		reasons[len(out)] = []string{g.Reason}
		out = append(out, g)
	}
	return out
}

// nextBoundary returns the first interval end after t: intervals are laid
// from local midnight (in loc) every interval, and the last one of a day
// ends at the next midnight, so no interval spans two dates and, with an
// interval that divides an hour, rows land on round times (12:05, 12:10).
func nextBoundary(t time.Time, interval time.Duration, loc *time.Location) time.Time {
	lt := t.In(loc)
	y, m, d := lt.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
	next := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	b := midnight.Add((lt.Sub(midnight)/interval + 1) * interval)
	if b.After(next) {
		b = next
	}
	return b
}
