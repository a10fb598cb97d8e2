package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// header is the first line of every daily CSV. The first five columns are
// the original GPU Stats Service's; the rest were added after them so that
// readers of the first five keep working.
const header = "Timestamp,User,PID,GPU Number,GPU Usage,Seconds,GPU Memory MiB,Memory Usage,Interval Seconds,GPU UUID"

// The columns of a row, in order.
const (
	colTimestamp = iota
	colUser
	colPID
	colGPU
	colUsage
	colSeconds
	colMemMiB
	colMemUsage
	colInterval
	colUUID
	numCols
)

// unknownUser stands for a process whose owner could not be read.
const unknownUser = "?"

// num is a number that may be N/A (an empty CSV field).
type num struct {
	v  float64
	ok bool
}

func some(v float64) num { return num{v, true} }

// row is one line of a daily CSV: one process on one GPU over one interval.
type row struct {
	// Time is the interval's end, Unix seconds (Timestamp).
	Time int64
	// User owns the process: its name, its UID when the name is unknown to
	// the host, or "?" when neither could be read.
	User string
	PID  int
	GPU  int // NVML index (GPU Number)
	// Usage is the process's mean SM utilization over the interval, in
	// percent (GPU Usage).
	Usage num
	// Seconds is how long the process was seen on the GPU in the
	// interval: ticks that saw it × the accumulator's tick. N/A in rows of
	// the original five columns.
	Seconds num
	// MemMiB is its mean GPU memory, MiB.
	MemMiB num
	// MemUsage is its mean memory-interface utilization, percent.
	MemUsage num
	// Interval is the interval's length in seconds (shorter than --interval
	// for the first one after a start and the last one before a stop).
	Interval num
	// UUID is the GPU's UUID, which survives renumbering.
	UUID string
}

// formatRow returns r as one CSV line, "\n" included.
func formatRow(r row) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	// Writing to a bytes.Buffer cannot fail.
	_ = w.Write([]string{
		strconv.FormatInt(r.Time, 10),
		oneLine(r.User),
		strconv.Itoa(r.PID),
		strconv.Itoa(r.GPU),
		formatNum(r.Usage),
		formatNum(r.Seconds),
		formatNum(r.MemMiB),
		formatNum(r.MemUsage),
		formatNum(r.Interval),
		oneLine(r.UUID),
	})
	w.Flush()
	return b.Bytes()
}

// oneLine keeps a field on one line of valid UTF-8: a user name read from
// the host is not trusted to be free of control characters.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '?'
		}
		return r
	}, s)
	return strings.ToValidUTF8(s, "?")
}

// formatNum writes a number with at most two decimals and no trailing
// zeros ("60", "63.33"), or "" for N/A.
func formatNum(n num) string {
	if !n.ok {
		return ""
	}
	v := math.Round(n.v*100) / 100
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// maxAmount bounds seconds and MiB: far beyond any real value, and small
// enough that two decimals stay exact when written back.
const maxAmount = 1e12

// errHeader is returned by parseRow for the header line.
var errHeader = errors.New("header line")

// parseRow parses one line of a daily CSV (without its "\n"). Rows of the
// original five columns parse with the later fields N/A; columns beyond
// those this version knows are ignored. "-" and "N/A" read as N/A, as do
// empty fields.
func parseRow(line string) (row, error) {
	r, _, err := parseRowFields(line)
	return r, err
}

// isWholeRow reports whether line (without its "\n") is a whole row: one
// that parseRow reads, with every column this version writes, or the
// original service's five with a GPU Usage. A row of this version cut short
// after its fourth comma has lost fields (or its GPU Usage) and is not
// whole.
func isWholeRow(line string) bool {
	_, rec, err := parseRowFields(line)
	switch {
	case err != nil:
		return false
	case len(rec) == colUsage+1:
		return strings.TrimSpace(rec[colUsage]) != ""
	}
	return len(rec) >= numCols
}

// parseRowFields is parseRow, and the fields of the line.
func parseRowFields(line string) (row, []string, error) {
	line = strings.TrimSuffix(line, "\r")
	if strings.HasPrefix(line, "Timestamp,") {
		return row{}, nil, errHeader
	}
	if strings.ContainsAny(line, "\n\r") {
		return row{}, nil, errors.New("line break inside a row")
	}
	cr := csv.NewReader(strings.NewReader(line))
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return row{}, nil, fmt.Errorf("not CSV: %w", unwrapCSV(err))
	}
	if len(rec) < colUsage+1 {
		return row{}, nil, fmt.Errorf("%d fields, want at least %d", len(rec), colUsage+1)
	}
	field := func(i int) string {
		if i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var r row
	if r.Time, err = strconv.ParseInt(field(colTimestamp), 10, 64); err != nil || r.Time <= 0 {
		return row{}, nil, fmt.Errorf("bad Timestamp %q: want a positive integer", field(colTimestamp))
	}
	if r.User = oneLine(field(colUser)); r.User == "" {
		r.User = unknownUser
	}
	if r.PID, err = strconv.Atoi(field(colPID)); err != nil || r.PID < 0 {
		return row{}, nil, fmt.Errorf("bad PID %q: want a non-negative integer", field(colPID))
	}
	if r.GPU, err = strconv.Atoi(field(colGPU)); err != nil || r.GPU < 0 {
		return row{}, nil, fmt.Errorf("bad GPU Number %q: want a non-negative integer", field(colGPU))
	}
	nums := []struct {
		col  int
		name string
		dst  *num
		max  float64
	}{
		{colUsage, "GPU Usage", &r.Usage, 100},
		{colSeconds, "Seconds", &r.Seconds, maxAmount},
		{colMemMiB, "GPU Memory MiB", &r.MemMiB, maxAmount},
		{colMemUsage, "Memory Usage", &r.MemUsage, 100},
		{colInterval, "Interval Seconds", &r.Interval, maxAmount},
	}
	for _, n := range nums {
		if *n.dst, err = parseNum(field(n.col), n.max); err != nil {
			return row{}, nil, fmt.Errorf("bad %s %q: %w", n.name, field(n.col), err)
		}
	}
	r.UUID = oneLine(field(colUUID))
	return r, rec, nil
}

// parseNum reads a number in [0, max], or N/A.
func parseNum(s string, max float64) (num, error) {
	switch s {
	case "", "-", "N/A", "[N/A]":
		return num{}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return num{}, errors.New("not a number")
	case v < 0 || v > max:
		return num{}, fmt.Errorf("out of range 0..%g", max)
	}
	return some(v), nil
}

// unwrapCSV drops encoding/csv's "record on line 1" prefix, which names the
// wrong line: the caller knows the real one.
func unwrapCSV(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
