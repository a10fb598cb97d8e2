package nvgo_test

import (
	"errors"
	"testing"

	"github.com/nvgo/nvgo"
)

// meanWant is what a Mean should return: a number, or N/A with a reason
// and an error that matches errIs.
type meanWant[T comparable] struct {
	value  T
	na     bool
	reason nvgo.Reason
	errIs  error
}

func checkMean[T comparable](t *testing.T, got nvgo.Value[T], want meanWant[T]) {
	t.Helper()
	v, ok := got.Get()
	switch {
	case !want.na && !ok:
		t.Fatalf("Mean() = N/A (%v: %v), want %v", got.Reason(), got.Err(), want.value)
	case !want.na && v != want.value:
		t.Errorf("Mean() = %v, want %v", v, want.value)
	case want.na && ok:
		t.Errorf("Mean() = %v, want N/A (%v)", v, want.reason)
	case want.na && got.Reason() != want.reason:
		t.Errorf("Mean() reason = %v (%v), want %v", got.Reason(), got.Err(), want.reason)
	case want.na && !errors.Is(got.Err(), want.errIs):
		t.Errorf("Mean() error = %v, want one matching %v", got.Err(), want.errIs)
	}
}

var (
	errSumCause  = errors.New("the sum's cause")
	errLastCause = errors.New("the last tick's cause")
)

// UtilizationCounter.Mean is Sum/Samples. With nothing summed it is N/A:
// for the Sum's reason when Sum is N/A (it wins over Last's), else for
// Last's reason when the latest tick failed, else NotReported (ticks ran
// but none had a value in the span).
func TestUtilizationCounterMean(t *testing.T) {
	tests := []struct {
		name string
		c    nvgo.UtilizationCounter
		want meanWant[nvgo.Percent]
	}{
		{
			name: "the mean of the summed ticks",
			c:    nvgo.UtilizationCounter{Last: nvgo.Some[nvgo.Percent](60), Sum: nvgo.Some(150.0), Samples: 3},
			want: meanWant[nvgo.Percent]{value: 50},
		},
		{
			name: "a fraction is kept, not rounded",
			c:    nvgo.UtilizationCounter{Last: nvgo.Some[nvgo.Percent](1), Sum: nvgo.Some(1.0), Samples: 4},
			want: meanWant[nvgo.Percent]{value: 0.25},
		},
		{
			name: "a failed latest tick does not spoil what was summed",
			c:    nvgo.UtilizationCounter{Last: nvgo.NA[nvgo.Percent](nvgo.GPULost, errLastCause), Sum: nvgo.Some(90.0), Samples: 2},
			want: meanWant[nvgo.Percent]{value: 45},
		},
		{
			name: "no samples and the last tick N/A keeps the last tick's reason",
			c:    nvgo.UtilizationCounter{Last: nvgo.NA[nvgo.Percent](nvgo.NoPermission, errLastCause), Sum: nvgo.Some(0.0)},
			want: meanWant[nvgo.Percent]{na: true, reason: nvgo.NoPermission, errIs: errLastCause},
		},
		{
			name: "no samples and the last tick read is N/A not reported",
			c:    nvgo.UtilizationCounter{Last: nvgo.Some[nvgo.Percent](30), Sum: nvgo.Some(0.0)},
			want: meanWant[nvgo.Percent]{na: true, reason: nvgo.NotReported, errIs: nvgo.ErrNotReported},
		},
		{
			name: "an N/A sum keeps the sum's reason over the last tick's",
			c:    nvgo.UtilizationCounter{Last: nvgo.NA[nvgo.Percent](nvgo.GPULost, errLastCause), Sum: nvgo.NA[float64](nvgo.NotSupported, errSumCause)},
			want: meanWant[nvgo.Percent]{na: true, reason: nvgo.NotSupported, errIs: errSumCause},
		},
		{
			name: "an N/A sum wins even with samples counted",
			c:    nvgo.UtilizationCounter{Last: nvgo.Some[nvgo.Percent](10), Sum: nvgo.NA[float64](nvgo.FunctionMissing, errSumCause), Samples: 5},
			want: meanWant[nvgo.Percent]{na: true, reason: nvgo.FunctionMissing, errIs: errSumCause},
		},
		{
			name: "the zero counter is N/A not reported",
			want: meanWant[nvgo.Percent]{na: true, reason: nvgo.NotReported},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMean(t, tt.c.Mean(), tt.want) })
	}
}

// MemoryCounter.Mean is SumKiB/Samples in bytes (KiB × 1024 before the
// division, so no precision is lost), with the same N/A rules as
// UtilizationCounter.Mean.
func TestMemoryCounterMean(t *testing.T) {
	const miB = 1 << 20
	tests := []struct {
		name string
		c    nvgo.MemoryCounter
		want meanWant[nvgo.Bytes]
	}{
		{
			name: "the mean of the summed ticks",
			c:    nvgo.MemoryCounter{Last: nvgo.Some[nvgo.Bytes](2 * miB), SumKiB: nvgo.Some[uint64](3 * 1024), Samples: 3},
			want: meanWant[nvgo.Bytes]{value: miB},
		},
		{
			name: "KiB are turned into bytes before dividing",
			c:    nvgo.MemoryCounter{Last: nvgo.Some[nvgo.Bytes](4096), SumKiB: nvgo.Some[uint64](5), Samples: 2},
			want: meanWant[nvgo.Bytes]{value: 2560},
		},
		{
			name: "a failed latest tick does not spoil what was summed",
			c:    nvgo.MemoryCounter{Last: nvgo.NA[nvgo.Bytes](nvgo.GPULost, errLastCause), SumKiB: nvgo.Some[uint64](8), Samples: 2},
			want: meanWant[nvgo.Bytes]{value: 4096},
		},
		{
			name: "no samples and the last tick N/A keeps the last tick's reason",
			c:    nvgo.MemoryCounter{Last: nvgo.NA[nvgo.Bytes](nvgo.ProcessGone, errLastCause), SumKiB: nvgo.Some[uint64](0)},
			want: meanWant[nvgo.Bytes]{na: true, reason: nvgo.ProcessGone, errIs: errLastCause},
		},
		{
			name: "no samples and the last tick read is N/A not reported",
			c:    nvgo.MemoryCounter{Last: nvgo.Some[nvgo.Bytes](miB), SumKiB: nvgo.Some[uint64](0)},
			want: meanWant[nvgo.Bytes]{na: true, reason: nvgo.NotReported, errIs: nvgo.ErrNotReported},
		},
		{
			name: "an N/A sum keeps the sum's reason over the last tick's",
			c:    nvgo.MemoryCounter{Last: nvgo.NA[nvgo.Bytes](nvgo.NoPermission, errLastCause), SumKiB: nvgo.NA[uint64](nvgo.NotSupported, errSumCause)},
			want: meanWant[nvgo.Bytes]{na: true, reason: nvgo.NotSupported, errIs: errSumCause},
		},
		{
			name: "an N/A sum wins even with samples counted",
			c:    nvgo.MemoryCounter{Last: nvgo.Some[nvgo.Bytes](miB), SumKiB: nvgo.NA[uint64](nvgo.Failed, errSumCause), Samples: 5},
			want: meanWant[nvgo.Bytes]{na: true, reason: nvgo.Failed, errIs: errSumCause},
		},
		{
			name: "the zero counter is N/A not reported",
			want: meanWant[nvgo.Bytes]{na: true, reason: nvgo.NotReported},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMean(t, tt.c.Mean(), tt.want) })
	}
}
