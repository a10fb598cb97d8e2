package nvgo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/nvgo/nvgo"
)

func TestValueAccessors(t *testing.T) {
	cause := &nvgo.NVMLError{Op: "nvmlDeviceGetFanSpeed", Code: 4}
	tests := []struct {
		name       string
		v          nvgo.Value[int]
		wantV      int
		wantOK     bool
		wantReason nvgo.Reason
		wantErr    error
		wantString string
	}{
		{"Some holds a real value", nvgo.Some(42), 42, true, nvgo.Available, nil, "42"},
		{"Some of zero is real, not N/A", nvgo.Some(0), 0, true, nvgo.Available, nil, "0"},
		{"Some of a negative number is real", nvgo.Some(-3), -3, true, nvgo.Available, nil, "-3"},
		{"NA keeps its reason and cause", nvgo.NA[int](nvgo.NoPermission, cause), 0, false, nvgo.NoPermission, cause, "N/A"},
		{"NA without a cause has a nil Err", nvgo.NA[int](nvgo.GPULost, nil), 0, false, nvgo.GPULost, nil, "N/A"},
		{"NA with reason Available becomes NotReported", nvgo.NA[int](nvgo.Available, nil), 0, false, nvgo.NotReported, nil, "N/A"},
		{"the zero Value is N/A with reason NotReported", nvgo.Value[int]{}, 0, false, nvgo.NotReported, nil, "N/A"},
		{"FromErr with a nil error is real", nvgo.FromErr(7, nil), 7, true, nvgo.Available, nil, "7"},
		{"FromErr with an error is N/A and drops the value", nvgo.FromErr(7, cause), 0, false, nvgo.NoPermission, cause, "N/A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := tt.v.Get()
			if v != tt.wantV || ok != tt.wantOK {
				t.Errorf("Get() = %v, %v, want %v, %v", v, ok, tt.wantV, tt.wantOK)
			}
			if got := tt.v.IsNA(); got != !tt.wantOK {
				t.Errorf("IsNA() = %v, want %v", got, !tt.wantOK)
			}
			wantOr := -1
			if tt.wantOK {
				wantOr = tt.wantV
			}
			if got := tt.v.Or(-1); got != wantOr {
				t.Errorf("Or(-1) = %v, want %v", got, wantOr)
			}
			if got := tt.v.Reason(); got != tt.wantReason {
				t.Errorf("Reason() = %v, want %v", got, tt.wantReason)
			}
			if got := tt.v.Err(); got != tt.wantErr {
				t.Errorf("Err() = %v, want %v", got, tt.wantErr)
			}
			if got := tt.v.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
		})
	}
}

func TestValueNAIsNeverZero(t *testing.T) {
	if got := nvgo.NA[int](nvgo.NotSupported, nil).Or(-1); got != -1 {
		t.Errorf("NA.Or(-1) = %d, want -1", got)
	}
	if nvgo.Some(0).IsNA() {
		t.Error("Some(0).IsNA() = true, want false")
	}
	if nvgo.Some(0) == (nvgo.Value[int]{}) {
		t.Error("Some(0) equals the zero Value")
	}
	if got := nvgo.Some(0.0).String(); got == "N/A" {
		t.Errorf("Some(0.0).String() = %q", got)
	}
}

func TestReasonString(t *testing.T) {
	tests := []struct {
		name string
		in   nvgo.Reason
		want string
	}{
		{"Available reads as available", nvgo.Available, "available"},
		{"NotSupported reads as not supported", nvgo.NotSupported, "not supported"},
		{"FunctionMissing names the driver", nvgo.FunctionMissing, "function missing from driver"},
		{"Failed reads as error", nvgo.Failed, "error"},
		{"an unknown reason shows its number", nvgo.Reason(200), "Reason(200)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReasonOfMapsSentinels(t *testing.T) {
	nvml := func(code nvgo.ReturnCode) error { return &nvgo.NVMLError{Op: "x", Code: code} }
	tests := []struct {
		name string
		err  error
		want nvgo.Reason
	}{
		{"no error means Available", nil, nvgo.Available},
		{"NVML NOT_SUPPORTED is NotSupported", nvml(3), nvgo.NotSupported},
		{"NVML NO_PERMISSION is NoPermission", nvml(4), nvgo.NoPermission},
		{"NVML GPU_IS_LOST is GPULost", nvml(15), nvgo.GPULost},
		{"NVML GPU_NOT_FOUND is GPULost", nvml(28), nvgo.GPULost},
		{"NVML FUNCTION_NOT_FOUND is FunctionMissing, not NotSupported", nvml(13), nvgo.FunctionMissing},
		{"a wrapped NVML error keeps its reason", fmt.Errorf("fan speed: %w", nvml(4)), nvgo.NoPermission},
		{"NVML UNKNOWN is Failed", nvml(999), nvgo.Failed},
		{"NVML TIMEOUT is Failed", nvml(10), nvgo.Failed},
		{"the bare ErrNotSupported sentinel is NotSupported", nvgo.ErrNotSupported, nvgo.NotSupported},
		{"the bare ErrNoPermission sentinel is NoPermission", nvgo.ErrNoPermission, nvgo.NoPermission},
		{"the bare ErrGPULost sentinel is GPULost", nvgo.ErrGPULost, nvgo.GPULost},
		{"the bare ErrFunctionMissing sentinel is FunctionMissing", nvgo.ErrFunctionMissing, nvgo.FunctionMissing},
		{"ErrProcessGone is ProcessGone", fmt.Errorf("pid 42: %w", nvgo.ErrProcessGone), nvgo.ProcessGone},
		{"ErrZombie is Zombie", fmt.Errorf("pid 42: %w", nvgo.ErrZombie), nvgo.Zombie},
		{"ErrOtherPIDNamespace is OtherPIDNamespace", fmt.Errorf("pid 42: %w", nvgo.ErrOtherPIDNamespace), nvgo.OtherPIDNamespace},
		{"ErrNotReported is NotReported", nvgo.ErrNotReported, nvgo.NotReported},
		{"any other error is Failed", errors.New("boom"), nvgo.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.ReasonOf(tt.err); got != tt.want {
				t.Errorf("ReasonOf(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}

	// The reason FunctionMissing must win although the error also reads as not supported.
	if err := nvml(13); !errors.Is(err, nvgo.ErrNotSupported) || !errors.Is(err, nvgo.ErrFunctionMissing) {
		t.Errorf("FUNCTION_NOT_FOUND error %v should match both ErrNotSupported and ErrFunctionMissing", err)
	}
}

func TestValueFormat(t *testing.T) {
	na := nvgo.NA[int](nvgo.NotSupported, nil)
	tests := []struct {
		name   string
		format string
		arg    any
		want   string
	}{
		{"%v of N/A is N/A", "%v", na, "N/A"},
		{"%s of N/A is N/A", "%s", na, "N/A"},
		{"%d of N/A is N/A", "%d", na, "N/A"},
		{"%6v pads N/A on the left", "[%6v]", na, "[   N/A]"},
		{"%-6v pads N/A on the right", "[%-6v]", na, "[N/A   ]"},
		{"a width below three does not cut N/A", "[%2v]", na, "[N/A]"},
		{"%6v pads a real value", "[%6v]", nvgo.Some(42), "[    42]"},
		{"%-6v pads a real value on the right", "[%-6v]", nvgo.Some(42), "[42    ]"},
		{"%05d keeps zero padding", "%05d", nvgo.Some(42), "00042"},
		{"%.1f keeps precision", "%.1f", nvgo.Some(3.14159), "3.1"},
		{"%v of Bytes prints the human form", "%v", nvgo.Some(nvgo.Bytes(8862 << 20)), "8862MiB"},
		{"%s of Bytes prints the human form", "%s", nvgo.Some(nvgo.Bytes(1536)), "2KiB"},
		{"%d of Bytes prints the number", "%d", nvgo.Some(nvgo.Bytes(1536)), "1536"},
		{"%8v pads Bytes", "[%8v]", nvgo.Some(nvgo.Bytes(512)), "[    512B]"},
		{"%v of Celsius prints with C", "%v", nvgo.Some(nvgo.Celsius(41)), "41C"},
		{"%v of Percent prints with %", "%v", nvgo.Some(nvgo.Percent(5.2)), "5.2%"},
		{"%v of N/A Bytes is N/A", "%v", nvgo.NA[nvgo.Bytes](nvgo.NoPermission, nil), "N/A"},
		{"Sprint uses String", "", nvgo.Some(nvgo.MHz(1410)), "1410MHz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if tt.format == "" {
				got = fmt.Sprint(tt.arg)
			} else {
				got = fmt.Sprintf(tt.format, tt.arg)
			}
			if got != tt.want {
				t.Errorf("Sprintf(%q) = %q, want %q", tt.format, got, tt.want)
			}
		})
	}
}

type gpuRow struct {
	Name    nvgo.Value[string]       `json:"name"`
	Memory  nvgo.Value[nvgo.Bytes]   `json:"memory"`
	Temp    nvgo.Value[nvgo.Celsius] `json:"temperature"`
	Percent nvgo.Value[float64]      `json:"percent"`
}

func TestValueJSON(t *testing.T) {
	t.Run("N/A marshals to null", func(t *testing.T) {
		b, err := json.Marshal(nvgo.NA[int](nvgo.GPULost, nil))
		if err != nil || string(b) != "null" {
			t.Errorf("Marshal(N/A) = %s, %v, want null", b, err)
		}
	})
	t.Run("a real value marshals to itself", func(t *testing.T) {
		b, err := json.Marshal(nvgo.Some(nvgo.Bytes(1024)))
		if err != nil || string(b) != "1024" {
			t.Errorf("Marshal(Some(Bytes(1024))) = %s, %v, want 1024", b, err)
		}
	})
	t.Run("a real zero marshals to 0, not null", func(t *testing.T) {
		b, err := json.Marshal(nvgo.Some(0))
		if err != nil || string(b) != "0" {
			t.Errorf("Marshal(Some(0)) = %s, %v, want 0", b, err)
		}
	})

	row := gpuRow{
		Name:    nvgo.Some("NVIDIA H100"),
		Memory:  nvgo.Some(nvgo.Bytes(80 << 30)),
		Temp:    nvgo.NA[nvgo.Celsius](nvgo.NotSupported, nil),
		Percent: nvgo.Some(0.0),
	}
	const wantJSON = `{"name":"NVIDIA H100","memory":85899345920,"temperature":null,"percent":0}`
	t.Run("a struct marshals N/A fields to null", func(t *testing.T) {
		b, err := json.Marshal(row)
		if err != nil || string(b) != wantJSON {
			t.Errorf("Marshal = %s, %v, want %s", b, err, wantJSON)
		}
	})
	t.Run("a struct unmarshals null to N/A with reason NotReported", func(t *testing.T) {
		var got gpuRow
		if err := json.Unmarshal([]byte(wantJSON), &got); err != nil {
			t.Fatal(err)
		}
		if got.Name != row.Name || got.Memory != row.Memory || got.Percent != row.Percent {
			t.Errorf("Unmarshal = %+v, want real fields of %+v", got, row)
		}
		if !got.Temp.IsNA() || got.Temp.Reason() != nvgo.NotReported {
			t.Errorf("temperature = %v (reason %v), want N/A with reason NotReported", got.Temp, got.Temp.Reason())
		}
	})
	t.Run("null overwrites a real value with N/A", func(t *testing.T) {
		got := gpuRow{Temp: nvgo.Some[nvgo.Celsius](41)}
		if err := json.Unmarshal([]byte(`{"temperature": null}`), &got); err != nil {
			t.Fatal(err)
		}
		if !got.Temp.IsNA() {
			t.Errorf("temperature = %v, want N/A", got.Temp)
		}
	})
	t.Run("a missing field stays N/A", func(t *testing.T) {
		var got gpuRow
		if err := json.Unmarshal([]byte(`{"name":"x"}`), &got); err != nil {
			t.Fatal(err)
		}
		if !got.Memory.IsNA() {
			t.Errorf("memory = %v, want N/A", got.Memory)
		}
	})
	t.Run("a value of the wrong type is an error", func(t *testing.T) {
		var got gpuRow
		if err := json.Unmarshal([]byte(`{"memory":"lots"}`), &got); err == nil {
			t.Errorf("Unmarshal of a string into Value[Bytes] succeeded: %+v", got)
		}
	})
}

func TestCompareSortsNAAfterEveryNumber(t *testing.T) {
	na := nvgo.NA[int](nvgo.NotSupported, nil)
	t.Run("integers with several N/A", func(t *testing.T) {
		vals := []nvgo.Value[int]{
			nvgo.Some(3), na, nvgo.Some(-7), nvgo.NA[int](nvgo.GPULost, nil),
			nvgo.Some(0), nvgo.Some(math.MinInt), {}, nvgo.Some(-1), nvgo.Some(math.MaxInt),
		}
		slices.SortFunc(vals, nvgo.Compare[int])
		want := []string{fmt.Sprint(math.MinInt), "-7", "-1", "0", "3", fmt.Sprint(math.MaxInt), "N/A", "N/A", "N/A"}
		var got []string
		for _, v := range vals {
			got = append(got, v.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("sorted = %v, want %v", got, want)
		}
	})
	t.Run("floats with negative numbers and N/A", func(t *testing.T) {
		vals := []nvgo.Value[float64]{
			{}, nvgo.Some(2.5), nvgo.Some(-1e300), nvgo.NA[float64](nvgo.NoPermission, nil), nvgo.Some(-0.5),
		}
		slices.SortFunc(vals, nvgo.Compare[float64])
		want := []string{"-1e+300", "-0.5", "2.5", "N/A", "N/A"}
		var got []string
		for _, v := range vals {
			got = append(got, v.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("sorted = %v, want %v", got, want)
		}
	})

	tests := []struct {
		name string
		a, b nvgo.Value[int]
		want int
	}{
		{"a smaller number comes first", nvgo.Some(-5), nvgo.Some(5), -1},
		{"equal numbers are equal", nvgo.Some(5), nvgo.Some(5), 0},
		{"a number comes before N/A", nvgo.Some(math.MaxInt), na, -1},
		{"N/A comes after the smallest number", na, nvgo.Some(math.MinInt), 1},
		{"two N/A are equal whatever their reasons", na, nvgo.NA[int](nvgo.GPULost, nil), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare(%v, %v) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestValueMapKeepsReason(t *testing.T) {
	cause := &nvgo.NVMLError{Op: "x", Code: 15}
	tests := []struct {
		name       string
		in         nvgo.Value[int]
		wantString string
		wantReason nvgo.Reason
		wantErr    error
	}{
		{"a real value is mapped", nvgo.Some(21), "42", nvgo.Available, nil},
		{"an N/A value keeps its reason and error", nvgo.NA[int](nvgo.GPULost, cause), "N/A", nvgo.GPULost, cause},
		{"the zero Value stays NotReported", nvgo.Value[int]{}, "N/A", nvgo.NotReported, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nvgo.Map(tt.in, func(v int) string { return fmt.Sprint(2 * v) })
			if got.String() != tt.wantString || got.Reason() != tt.wantReason || got.Err() != tt.wantErr {
				t.Errorf("Map = %v (reason %v, err %v), want %v (reason %v, err %v)",
					got, got.Reason(), got.Err(), tt.wantString, tt.wantReason, tt.wantErr)
			}
		})
	}
}

// Values are shared between goroutines (snapshots handed to many readers):
// reading one concurrently gives every reader the same answers, and -race
// sees no write.
func TestValueIsSafeForConcurrentReads(t *testing.T) {
	vals := []nvgo.Value[nvgo.Bytes]{
		nvgo.Some(nvgo.Bytes(8862 << 20)),
		nvgo.NA[nvgo.Bytes](nvgo.NoPermission, nvgo.ErrNoPermission),
	}
	render := func(v nvgo.Value[nvgo.Bytes]) string {
		j, err := json.Marshal(v)
		return fmt.Sprintf("%s|%8v|%s|%v|%v|%v|%v", v.String(), v, j, err, v.Reason(), v.Or(0), v.Err())
	}
	want := make([]string, len(vals))
	for i, v := range vals {
		want[i] = render(v)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := vals[i%len(vals)]
			for range 100 {
				if got := render(v); got != want[i%len(vals)] {
					t.Errorf("a concurrent read gave %q; want %q", got, want[i%len(vals)])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestFlatMapKeepsTheReasonOfEitherSide(t *testing.T) {
	field := func(v int) nvgo.Value[string] {
		if v == 0 {
			return nvgo.NA[string](nvgo.NotReported, nil)
		}
		return nvgo.Some(strconv.Itoa(v))
	}
	tests := []struct {
		name string
		in   nvgo.Value[int]
		want string
		r    nvgo.Reason
	}{
		{"real to real", nvgo.Some(7), "7", nvgo.Available},
		{"real to N/A", nvgo.Some(0), "N/A", nvgo.NotReported},
		{"N/A keeps its reason", nvgo.NA[int](nvgo.GPULost, nvgo.ErrGPULost), "N/A", nvgo.GPULost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nvgo.FlatMap(tt.in, field)
			if got.String() != tt.want || got.Reason() != tt.r {
				t.Errorf("FlatMap = %v (%v); want %s (%v)", got, got.Reason(), tt.want, tt.r)
			}
		})
	}
}
