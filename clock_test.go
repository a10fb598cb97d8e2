package nvgo

import (
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	start := time.Unix(1000, 0)
	sec := func(f float64) time.Time { return start.Add(time.Duration(f * float64(time.Second))) }
	for _, tt := range []struct {
		name       string
		steps      func(s *schedule)
		due        time.Time
		wantMissed uint64
	}{
		{"first deadline after start", func(s *schedule) {}, sec(1), 0},
		{"on time", func(s *schedule) { s.take(sec(1)); s.skipPast(sec(1.2)) }, sec(2), 0},
		{"woken late: the passed ones are skipped", func(s *schedule) { s.take(sec(3.5)) }, sec(4), 2},
		{"work that overran", func(s *schedule) { s.take(sec(1)); s.skipPast(sec(2.5)) }, sec(3), 1},
		{"clock before start", func(s *schedule) { s.skipPast(sec(-5)) }, sec(1), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(start, time.Second)
			tt.steps(&s)
			if !s.due().Equal(tt.due) || s.missed != tt.wantMissed {
				t.Errorf("due %v, missed %d; want %v, %d", s.due().Sub(start), s.missed, tt.due.Sub(start), tt.wantMissed)
			}
		})
	}
}
