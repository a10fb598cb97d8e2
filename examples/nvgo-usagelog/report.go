package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// usage is what one user used on one day (or in total), in hours.
type usage struct {
	// Busy is GPU-hours of work: Σ GPU Usage/100 × seconds / 3600.
	Busy float64
	// Held is GPU-hours held: Σ seconds / 3600, busy or idle.
	Held float64
	// MemGiB is GiB-hours of GPU memory: Σ MiB/1024 × seconds / 3600.
	MemGiB float64
	// Unknown is the part of Held whose GPU Usage was N/A (a MIG
	// process's, say): it adds nothing to Busy and is left out of means.
	Unknown float64
}

// usageKnown reports whether some of the time held had a known GPU Usage;
// when none had, Busy is N/A, not 0.
func (u usage) usageKnown() bool { return u.Held > u.Unknown }

// busyShare is Busy over the time whose GPU Usage is known (N/A time is
// left out, not counted as idle), as a percentage: "-" when nothing was
// held, "N/A" when no usage is known.
func (u usage) busyShare() string {
	switch {
	case u.Held <= 0:
		return "-"
	case !u.usageKnown():
		return na
	}
	return ratio(u.Busy, u.Held-u.Unknown)
}

// busyHours is Busy in hours, or "N/A" when no usage is known.
func (u usage) busyHours() string {
	if u.Held > 0 && !u.usageKnown() {
		return na
	}
	return hours(u.Busy)
}

// na is how the report shows a value that is not known, as nvgo's other
// tools do.
const na = "N/A"

func (u *usage) add(v usage) {
	u.Busy += v.Busy
	u.Held += v.Held
	u.MemGiB += v.MemGiB
	u.Unknown += v.Unknown
}

// usageOf is one row's usage. A row of the original five columns has no
// Seconds: it stands for legacySeconds (its service's timer period).
func usageOf(r row, legacySeconds float64) usage {
	sec := r.Seconds
	if !sec.ok {
		sec = some(legacySeconds)
	}
	h := sec.v / 3600
	u := usage{Held: h}
	if r.Usage.ok {
		u.Busy = r.Usage.v / 100 * h
	} else {
		u.Unknown = h
	}
	if r.MemMiB.ok {
		u.MemGiB = r.MemMiB.v / 1024 * h
	}
	return u
}

// datedRow is a row and the day of the file it was read from.
type datedRow struct {
	Day string
	row
}

// cell names one user's day.
type cell struct{ Day, User string }

// report is the aggregated usage of a date range.
type report struct {
	From, To string   // YYYY-MM-DD, inclusive
	Days     []string // every day of the range
	Users    []string // sorted
	Cells    map[cell]usage
	ByDay    map[string]usage
	ByUser   map[string]usage
	Total    usage
	Quotas   quotas
	Gaps     []gap // merged (mergeGaps), by start
	// GapDays are the days a gap overlaps.
	GapDays map[string]bool
}

// aggregate sums rows per user per day over the days from..to. gaps are
// merged (mergeGaps) and kept where they overlap the range, whose days are
// dates in loc.
func aggregate(days []string, rows []datedRow, gaps []gap, q quotas, legacySeconds float64, loc *time.Location) *report {
	rp := &report{
		Days: days, Cells: map[cell]usage{}, ByDay: map[string]usage{}, ByUser: map[string]usage{},
		Quotas: q, GapDays: map[string]bool{},
	}
	if len(days) > 0 {
		rp.From, rp.To = days[0], days[len(days)-1]
	}
	for _, r := range rows {
		if r.Day < rp.From || r.Day > rp.To {
			continue
		}
		u := usageOf(r.row, legacySeconds)
		c := cell{r.Day, r.User}
		if _, seen := rp.ByUser[r.User]; !seen {
			rp.Users = append(rp.Users, r.User)
		}
		cu, du, uu := rp.Cells[c], rp.ByDay[r.Day], rp.ByUser[r.User]
		cu.add(u)
		du.add(u)
		uu.add(u)
		rp.Cells[c], rp.ByDay[r.Day], rp.ByUser[r.User] = cu, du, uu
		rp.Total.add(u)
	}
	slices.Sort(rp.Users)
	if len(days) > 0 {
		first, _ := time.ParseInLocation(dayLayout, rp.From, loc)
		last, _ := time.ParseInLocation(dayLayout, rp.To, loc)
		end := last.AddDate(0, 0, 1)
		for _, g := range mergeGaps(gaps) {
			s, e := time.Unix(g.Start, 0), time.Unix(g.End, 0)
			if !e.After(first) || !s.Before(end) {
				continue
			}
			rp.Gaps = append(rp.Gaps, g)
			for _, d := range days {
				ds, _ := time.ParseInLocation(dayLayout, d, loc)
				if e.After(ds) && s.Before(ds.AddDate(0, 0, 1)) {
					rp.GapDays[d] = true
				}
			}
		}
	}
	return rp
}

// quotas are per-user daily quotas of busy GPU-hours; "*" sets the quota of
// everyone not named.
type quotas map[string]float64

// of returns user's daily quota, if any.
func (q quotas) of(user string) (float64, bool) {
	if h, ok := q[user]; ok {
		return h, true
	}
	h, ok := q["*"]
	return h, ok
}

// parseQuotas reads "alice=4,bob=2.5,*=1".
func parseQuotas(s string) (quotas, error) {
	q := quotas{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		user, hours, ok := strings.Cut(part, "=")
		user = strings.TrimSpace(user)
		if !ok || user == "" {
			return nil, fmt.Errorf("--quota: %q: want USER=HOURS", part)
		}
		h, err := strconv.ParseFloat(strings.TrimSpace(hours), 64)
		if err != nil || h <= 0 || math.IsInf(h, 0) || math.IsNaN(h) {
			return nil, fmt.Errorf("--quota: %q: HOURS must be a positive number of GPU-hours per day", part)
		}
		if _, dup := q[user]; dup {
			return nil, fmt.Errorf("--quota: %s given twice", user)
		}
		q[user] = h
	}
	return q, nil
}

// parseDay reads a --from/--to date: YYYY-MM-DD, "today" or "yesterday"
// (in now's location).
func parseDay(s string, now time.Time) (string, error) {
	switch s {
	case "today":
		return now.Format(dayLayout), nil
	case "yesterday":
		y, m, d := now.Date()
		return time.Date(y, m, d-1, 12, 0, 0, 0, now.Location()).Format(dayLayout), nil
	}
	t, err := time.Parse(dayLayout, s)
	if err != nil {
		return "", fmt.Errorf("%q is not a date (YYYY-MM-DD, today or yesterday)", s)
	}
	return t.Format(dayLayout), nil
}

// maxDays bounds a report's range, from and to included: ten years and
// their leap days, and a table and a chart still of a readable size.
const maxDays = 3660

// daysBetween lists the days from..to, inclusive.
func daysBetween(from, to string) ([]string, error) {
	f, err1 := time.Parse(dayLayout, from)
	t, err2 := time.Parse(dayLayout, to)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("bad range %s..%s", from, to)
	}
	// In Unix seconds: a time.Duration overflows past 292 years.
	n := (t.Unix()-f.Unix())/(24*60*60) + 1
	switch {
	case n < 1:
		return nil, fmt.Errorf("--from %s is after --to %s", from, to)
	case n > maxDays:
		return nil, fmt.Errorf("the range %s to %s is %d days, and a report covers at most %d (about ten years): give a later --from or an earlier --to", from, to, n, maxDays)
	}
	var days []string
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(dayLayout))
	}
	return days, nil
}

// readRows reads the rows of the daily CSVs of dir dated from..to. A
// malformed row is skipped with a warning naming file:line.
func readRows(files []dataFile, from, to string, warn func(string)) ([]datedRow, error) {
	var rows []datedRow
	for _, f := range files {
		if f.Day < from || f.Day > to {
			continue
		}
		fh, err := os.Open(f.Path)
		if err != nil {
			return nil, err
		}
		err = scanLines(fh, func(n int, line string, complete bool) {
			if strings.TrimSpace(line) == "" {
				return
			}
			r, err := parseRow(line)
			switch {
			case errors.Is(err, errHeader):
			case !complete:
				warn(fmt.Sprintf("%s:%d: last line has no end (being written, or torn by a crash); skipped", f.Path, n))
			case err != nil:
				warn(fmt.Sprintf("%s:%d: %v; row skipped", f.Path, n, err))
			default:
				rows = append(rows, datedRow{f.Day, r})
			}
		})
		fh.Close()
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// readGaps reads dir's gaps.csv; none when it does not exist.
func readGaps(dir string, warn func(string)) ([]gap, error) {
	path := filepath.Join(dir, gapsName)
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var gaps []gap
	err = scanLines(fh, func(n int, line string, complete bool) {
		if strings.TrimSpace(line) == "" {
			return
		}
		g, err := parseGap(line)
		switch {
		case errors.Is(err, errHeader):
		case !complete:
			warn(fmt.Sprintf("%s:%d: last line has no end (torn by a crash?); skipped", path, n))
		case err != nil:
			warn(fmt.Sprintf("%s:%d: %v; gap skipped", path, n, err))
		default:
			gaps = append(gaps, g)
		}
	})
	return gaps, err
}
