package main

import (
	"testing"
	"time"

	"github.com/nvgo/nvgo"
)

func TestRowsOfAnIntervalTheClockWentBackInHaveNoLength(t *testing.T) {
	proc := nvgo.ProcessInterval{ProcessKey: nvgo.ProcessKey{PID: 7}, Samples: 3, GPUSMUtilization: nvgo.Some(nvgo.Percent(40))}
	tests := []struct {
		name       string
		start, end time.Time
		want       string // Interval Seconds as written
	}{
		{name: "a forward interval has its length", start: t0, end: t0.Add(3 * time.Second), want: "3"},
		{name: "one whose end is before its start has none (N/A), not a negative one", start: t0, end: t0.Add(-time.Hour), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iv := nvgo.Interval{Start: tt.start, End: tt.end, Ticks: 3, GPUs: []nvgo.GPUInterval{{Index: 0, Samples: 3, ProcessSamples: 3, Processes: []nvgo.ProcessInterval{proc}}}}
			rows := rowsOf(iv, time.Second)
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			if got := formatNum(rows[0].Interval); got != tt.want {
				t.Errorf("Interval Seconds %q, want %q", got, tt.want)
			}
			// The report must be able to read it back.
			line := string(formatRow(rows[0]))
			if _, err := parseRow(line[:len(line)-1]); err != nil {
				t.Errorf("the row %q does not read back: %v", line, err)
			}
		})
	}
}
