package cudaprobe

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	uuidA = "00112233-4455-6677-8899-aabbccddeeff"
	uuidB = "ffeeddcc-bbaa-9988-7766-554433221100"
)

func TestProbeRunsTheChildUnderTheRequestedEnvironment(t *testing.T) {
	useFake(t, fakeFull, fakeEnv{UUIDs: strings.ToUpper(uuidA) + "," + uuidB})
	// The caller's own values must not leak into the child.
	t.Setenv("CUDA_VISIBLE_DEVICES", "0")
	t.Setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")

	tests := []struct {
		name string
		env  Env
		want []string
	}{
		{"unset CUDA_VISIBLE_DEVICES shows every device", Env{Order: "PCI_BUS_ID"}, []string{uuidA, uuidB}},
		{"empty CUDA_VISIBLE_DEVICES shows none", Env{VisibleSet: true, Order: "PCI_BUS_ID"}, []string{}},
		{"1,0 lists the second device first", Env{Visible: "1,0", VisibleSet: true, Order: "PCI_BUS_ID"}, []string{uuidB, uuidA}},
		{"1 lists only the second device", Env{Visible: "1", VisibleSet: true, Order: "PCI_BUS_ID"}, []string{uuidB}},
		{"unset CUDA_DEVICE_ORDER reaches the child unset", Env{}, []string{uuidB, uuidA}},
		{"FASTEST_FIRST reaches the child", Env{Order: "FASTEST_FIRST"}, []string{uuidB, uuidA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Probe(context.Background(), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{UUIDs: tt.want, UUIDFunc: "cuDeviceGetUuid_v2", DriverVersion: 12040}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Probe(%+v) = %+v, want %+v", tt.env, got, want)
			}
		})
	}
}

func TestProbeTreatsNoDeviceAsAnEmptyList(t *testing.T) {
	tests := []struct {
		name string
		fake fakeEnv
	}{
		{"cuInit returns CUDA_ERROR_NO_DEVICE", fakeEnv{UUIDs: uuidA, Init: "100"}},
		{"cuDeviceGetCount returns CUDA_ERROR_NO_DEVICE", fakeEnv{UUIDs: uuidA, Count: "100"}},
		{"the driver has no devices", fakeEnv{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFake(t, fakeFull, tt.fake)
			got, err := Probe(context.Background(), Env{})
			if err != nil {
				t.Fatal(err)
			}
			if got.UUIDs == nil || len(got.UUIDs) != 0 {
				t.Errorf("UUIDs = %#v, want an empty non-nil list", got.UUIDs)
			}
		})
	}
}

func TestProbeFallsBackToCuDeviceGetUuid(t *testing.T) {
	useFake(t, fakeNoV2, fakeEnv{UUIDs: uuidA})
	got, err := Probe(context.Background(), Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := Result{UUIDs: []string{uuidA}, UUIDFunc: "cuDeviceGetUuid", DriverVersion: 12040}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Probe = %+v, want %+v", got, want)
	}
}

func TestProbeErrors(t *testing.T) {
	tests := []struct {
		name    string
		variant string
		fake    fakeEnv
		lib     string     // NVGO_LIBCUDA instead of the fake, if set
		want    error      // sentinel
		cudaErr *CUDAError // for ErrCUDA
		text    string     // the message must contain this
	}{
		{
			name: "a failing cuInit is ErrCUDA with its code and name", variant: fakeFull,
			fake: fakeEnv{UUIDs: uuidA, Init: "999"}, want: ErrCUDA,
			cudaErr: &CUDAError{Op: "cuInit", Code: 999, Name: "CUDA_ERROR_UNKNOWN"},
			text:    "cuInit returned CUDA_ERROR_UNKNOWN (999)",
		},
		{
			name: "a code cuGetErrorName does not know has no name", variant: fakeFull,
			fake: fakeEnv{UUIDs: uuidA, Init: "12345"}, want: ErrCUDA,
			cudaErr: &CUDAError{Op: "cuInit", Code: 12345},
			text:    "cuInit returned CUresult 12345",
		},
		{
			name: "a failing cuDeviceGetCount names that call", variant: fakeFull,
			fake: fakeEnv{UUIDs: uuidA, Count: "3"}, want: ErrCUDA,
			cudaErr: &CUDAError{Op: "cuDeviceGetCount", Code: 3, Name: "CUDA_ERROR_NOT_INITIALIZED"},
		},
		{
			name: "a crash in libcuda is ErrChild and leaves the caller alive", variant: fakeFull,
			fake: fakeEnv{UUIDs: uuidA, Crash: true}, want: ErrChild, text: "SIGABRT",
		},
		{
			name: "a driver without any UUID function is ErrSymbolMissing", variant: fakeNoUUID,
			fake: fakeEnv{UUIDs: uuidA}, want: ErrSymbolMissing, text: "cuDeviceGetUuid",
		},
		{
			name: "a missing library is ErrNoLibCUDA with dlerror's text", variant: fakeFull,
			lib: "/nonexistent/libcuda.so.1", want: ErrNoLibCUDA, text: "/nonexistent/libcuda.so.1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useFake(t, tt.variant, tt.fake)
			if tt.lib != "" {
				t.Setenv(libEnv, tt.lib)
			}
			got, err := Probe(context.Background(), Env{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Probe = %+v, %v; want %v", got, err, tt.want)
			}
			if !reflect.DeepEqual(got, Result{}) {
				t.Errorf("Result = %+v with an error, want the zero Result", got)
			}
			if tt.cudaErr != nil {
				var ce *CUDAError
				if !errors.As(err, &ce) || *ce != *tt.cudaErr {
					t.Errorf("error = %#v, want %#v", ce, tt.cudaErr)
				}
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not contain %q", err, tt.text)
			}
		})
	}
}

func TestProbeWithoutLibCUDAOnThisHost(t *testing.T) {
	if !haveCGO {
		t.Skip("built without cgo")
	}
	t.Setenv(libEnv, "")
	_, err := Probe(context.Background(), Env{})
	switch {
	case err == nil, errors.Is(err, ErrCUDA):
		t.Skip("this host has a CUDA driver")
	case !errors.Is(err, ErrNoLibCUDA):
		t.Fatalf("Probe error = %v, want ErrNoLibCUDA", err)
	case !strings.Contains(err.Error(), "libcuda.so.1"):
		t.Errorf("error %q does not name libcuda.so.1", err)
	}
}

func TestProbeWithoutCGOStartsNoChild(t *testing.T) {
	if haveCGO {
		t.Skip("built with cgo")
	}
	if _, err := Probe(context.Background(), Env{}); !errors.Is(err, ErrBuiltWithoutCGO) {
		t.Errorf("Probe error = %v, want ErrBuiltWithoutCGO", err)
	}
}

func TestProbeStopsWhenTheContextEnds(t *testing.T) {
	useFake(t, fakeFull, fakeEnv{UUIDs: uuidA, Hang: true})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"an already cancelled context starts no child", func() (context.Context, context.CancelFunc) {
			return cancelled, func() {}
		}, context.Canceled},
		{"cancelling kills a hung child", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"a deadline kills a hung child", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			_, err := Probe(ctx, Env{})
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrChild) {
				t.Errorf("Probe error = %v, want ErrChild and %v", err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Probe took %v after the context ended", d)
			}
		})
	}
}

func TestProbeLeavesTheCallersEnvironmentAlone(t *testing.T) {
	useFake(t, fakeFull, fakeEnv{UUIDs: uuidA + "," + uuidB})
	t.Setenv("CUDA_VISIBLE_DEVICES", "0")
	before := slices.Sorted(slices.Values(os.Environ()))
	if _, err := Probe(context.Background(), Env{Visible: "1,0", VisibleSet: true, Order: "PCI_BUS_ID"}); err != nil {
		t.Fatal(err)
	}
	after := slices.Sorted(slices.Values(os.Environ()))
	if !slices.Equal(before, after) {
		t.Errorf("environment changed:\nbefore %q\nafter  %q", before, after)
	}
}

func TestChildEnvReplacesTheCUDAVariables(t *testing.T) {
	base := []string{"PATH=/bin", "CUDA_VISIBLE_DEVICES=0", "CUDA_DEVICE_ORDER=FASTEST_FIRST",
		markerEnv + "=stale", "CUDA_VISIBLE_DEVICES=1"}
	tail := []string{"GORACE=atexit_sleep_ms=0", markerEnv + "=" + protocol}
	tests := []struct {
		name string
		base []string
		env  Env
		want []string
	}{
		{"unset leaves both out", base, Env{}, append([]string{"PATH=/bin"}, tail...)},
		{"empty is kept as empty", base, Env{VisibleSet: true},
			append([]string{"PATH=/bin", "CUDA_VISIBLE_DEVICES="}, tail...)},
		{"values are set once", base, Env{Visible: "1,0", VisibleSet: true, Order: "PCI_BUS_ID"},
			append([]string{"PATH=/bin", "CUDA_VISIBLE_DEVICES=1,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}, tail...)},
		{"Visible is ignored unless VisibleSet", base, Env{Visible: "3"}, append([]string{"PATH=/bin"}, tail...)},
		{"the caller's GORACE options are kept", []string{"GORACE=halt_on_error=1"}, Env{},
			[]string{"GORACE=halt_on_error=1 atexit_sleep_ms=0", markerEnv + "=" + protocol}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := childEnv(tt.base, tt.env); !slices.Equal(got, tt.want) {
				t.Errorf("childEnv = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeReply(t *testing.T) {
	tests := []struct {
		name   string
		stdout string
		ok     bool
	}{
		{"a reply alone", `{"protocol":"` + protocol + `","uuids":["` + uuidA + `"]}` + "\n", true},
		{"output from other init functions before the reply", "hello from init\n" + `{"protocol":"` + protocol + `"}` + "\n", true},
		{"no output", "", false},
		{"not JSON", "segfault\n", false},
		{"another protocol", `{"protocol":"nvgo-cudaprobe/99"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeReply([]byte(tt.stdout))
			if (err == nil) != tt.ok {
				t.Errorf("decodeReply(%q) error = %v, want ok=%v", tt.stdout, err, tt.ok)
			}
		})
	}
}

func TestClipBufferKeepsBothEnds(t *testing.T) {
	tests := []struct {
		name       string
		head, tail int
		writes     []string
		want       string
	}{
		{"short output is kept whole", 4, 4, []string{"ab", "cd"}, "abcd"},
		{"output that fills both ends is kept whole", 2, 3, []string{"abcde"}, "abcde"},
		{"the middle of long output is dropped", 2, 3, []string{"abc", "defgh"}, "ab\n…\nfgh"},
		{"a tail-only buffer keeps the end", 0, 3, []string{"abcdef"}, "\n…\ndef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &clipBuffer{headMax: tt.head, tailMax: tt.tail}
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(b.Bytes()); got != tt.want {
				t.Errorf("Bytes = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChildFromAnotherVersionAnswersWithAnError(t *testing.T) {
	var out bytes.Buffer
	if code := serveChild(markerPrefix+"99", &out); code != 0 {
		t.Fatalf("serveChild exit code = %d", code)
	}
	r, err := decodeReply(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.result(); !errors.Is(err, ErrChild) {
		t.Errorf("result error = %v, want ErrChild", err)
	}
}

func BenchmarkProbe(b *testing.B) {
	useFake(b, fakeFull, fakeEnv{UUIDs: uuidA + "," + uuidB})
	env := Env{Visible: "1,0", VisibleSet: true, Order: "PCI_BUS_ID"}
	for i := 0; i < b.N; i++ {
		if _, err := Probe(context.Background(), env); err != nil {
			b.Fatal(err)
		}
	}
}
