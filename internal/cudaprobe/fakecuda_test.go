package cudaprobe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The fake libcuda (testdata/fakecuda.c), built once per test binary in
// three variants.
const (
	fakeFull   = "full"   // every function
	fakeNoV2   = "no-v2"  // no cuDeviceGetUuid_v2
	fakeNoUUID = "noUUID" // neither UUID function
)

var (
	fakeDir   string // set by TestMain
	buildOnce sync.Once
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cudaprobe-fake")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeLib returns the path of a fake libcuda variant, building them on first
// use; it skips the test when there is no C compiler.
func fakeLib(tb testing.TB, variant string) string {
	tb.Helper()
	if !haveCGO {
		tb.Skip("built without cgo: Probe starts no child")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		tb.Skipf("no C compiler (%s) to build the fake libcuda", cc)
	}
	buildOnce.Do(func() {
		flags := map[string][]string{fakeFull: nil, fakeNoV2: {"-DNO_V2"}, fakeNoUUID: {"-DNO_UUID"}}
		for v, extra := range flags {
			args := append([]string{"-shared", "-fPIC", "-o", filepath.Join(fakeDir, v+".so")}, extra...)
			out, err := exec.Command(cc, append(args, "testdata/fakecuda.c")...).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("building fake libcuda %s: %v\n%s", v, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return filepath.Join(fakeDir, variant+".so")
}

// fakeEnv is the environment that tells the fake what to do.
type fakeEnv struct {
	UUIDs string // FAKECUDA_UUIDS
	Init  string // FAKECUDA_INIT
	Count string // FAKECUDA_COUNT
	Crash bool   // FAKECUDA_CRASH
	Hang  bool   // FAKECUDA_HANG
}

// useFake points the probe child at a fake libcuda variant that behaves as f
// says. It sets the caller's environment, which the child inherits, so tests
// that use it cannot run in parallel.
func useFake(tb testing.TB, variant string, f fakeEnv) {
	tb.Helper()
	tb.Setenv(libEnv, fakeLib(tb, variant))
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return ""
	}
	tb.Setenv("FAKECUDA_UUIDS", f.UUIDs)
	tb.Setenv("FAKECUDA_INIT", f.Init)
	tb.Setenv("FAKECUDA_COUNT", f.Count)
	tb.Setenv("FAKECUDA_CRASH", flag(f.Crash))
	tb.Setenv("FAKECUDA_HANG", flag(f.Hang))
}
