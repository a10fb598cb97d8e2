//go:build cgo

package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/internal/libnvml"
	"github.com/nvgo/nvgo/internal/testenv"
)

// The tests build the command and nvgo-status as a user does (go
// build), then use the library the command writes: the path from a fresh
// clone to a client that reads a preset through the library.

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds libnvml and nvgo-status into a directory shared by the tests.
func binaries(t *testing.T) string {
	t.Helper()
	testenv.Program(t, "gcc")
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "nvgo-libnvml-test-")
		if buildErr != nil {
			return
		}
		for _, pkg := range []string{"github.com/nvgo/nvgo/fakegpu/cmd/libnvml", "github.com/nvgo/nvgo/examples/nvgo-status"} {
			cmd := exec.Command("go", "build", "-o", binDir, pkg)
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = &buildError{pkg, err, out}
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

type buildError struct {
	pkg string
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build " + e.pkg + ": " + e.err.Error() + "\n" + string(e.out)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildLib runs "libnvml -o DIR --driver driver" and returns DIR.
func buildLib(t *testing.T, driver string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(binaries(t), "libnvml"), "-o", dir, "--driver", driver)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("libnvml -o %s --driver %s: %v\n%s", dir, driver, err, out)
	}
	for _, f := range []string{libnvml.FileName, libnvml.HelperName, "libnvidia-ml.so"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("libnvml wrote no %s: %v", f, err)
		}
	}
	return dir
}

// status runs nvgo-status as a client of the library in dir.
func status(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binaries(t), "nvgo-status"), args...)
	cmd.Env = append(append(os.Environ(), "LD_LIBRARY_PATH="+dir, "NO_COLOR=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Run()
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// TestAPresetThroughTheBuiltLibrary: NVGO_FAKE_FLEET names a preset, the
// library starts the helper that serves it, and nvgo-status reads what
// --simulate shows; the helper leaves with the client.
func TestAPresetThroughTheBuiltLibrary(t *testing.T) {
	dir := buildLib(t, "current")
	for _, preset := range []string{"dgx-h100", "dgx-h100-mig", "vgpu-h100"} {
		got, stderr, code := status(t, dir, []string{fakegpu.EnvFleet + "=" + preset}, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", preset, code, stderr)
		}
		want, stderr, code := status(t, dir, nil, "--json", "--simulate", preset)
		if code != 0 {
			t.Fatalf("%s --simulate: exit %d\n%s", preset, code, stderr)
		}
		if g, w := devicesOf(t, got), devicesOf(t, want); g != w {
			t.Errorf("%s through the library:\n%s\nwith --simulate:\n%s", preset, g, w)
		}
	}
	if out, _ := exec.Command("pgrep", "-f", libnvml.HelperName+" serve").Output(); len(out) > 0 {
		t.Errorf("a fleet helper outlived its client: pids %s", out)
	}
}

// devicesOf is the identity, memory and processes of each device of a
// --json document: what a preset fixes (its clock moves with real time in
// the helper, so counters and samples are left out).
func devicesOf(t *testing.T, doc string) string {
	t.Helper()
	var d struct {
		Devices []struct {
			Index       int    `json:"index"`
			UUID        string `json:"uuid"`
			Name        any    `json:"name"`
			BusID       any    `json:"bus_id"`
			MemoryTotal any    `json:"memory_total"`
			MemoryUsed  any    `json:"memory_used"`
			GPUUtil     any    `json:"gpu_utilization"`
			MIGDevices  []struct {
				UUID string `json:"uuid"`
			} `json:"mig_devices"`
			Vgpus     []struct{ UUID any } `json:"vgpu_instances"`
			Processes []struct {
				PID       int `json:"pid"`
				GPUMemory any `json:"gpu_memory"`
			} `json:"processes"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	b, _ := json.MarshalIndent(d.Devices, "", " ")
	return string(b)
}

func TestBadFleetsSayWhatIsWrongInOneLine(t *testing.T) {
	dir := buildLib(t, "current")
	bad := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(bad, []byte(`{"gpus": [{"gpu_util": 150}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	notState := filepath.Join(t.TempDir(), "fleet.state")
	if err := os.WriteFile(notState, []byte("NVGOFAKE and then nothing"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, fleet string
		want        []string // in the library's line
	}{
		{"a bad value in a scenario", bad, []string{bad, "gpus[0].gpu_util"}},
		{"a missing file", "/nonexistent/fleet.json", []string{"/nonexistent/fleet.json", "not a preset"}},
		{"a truncated state file", notState, []string{notState, "too short"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := status(t, dir, []string{fakegpu.EnvFleet + "=" + tt.fleet})
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 1 || len(lines) != 2 {
				t.Fatalf("exit %d; want 1 with the library's line and nvgo-status's:\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("the library's line does not name %q: %s", w, lines[0])
				}
			}
			if !strings.Contains(lines[1], "not loaded") {
				t.Errorf("nvgo-status's line: %s; want the driver named not loaded", lines[1])
			}
		})
	}
}

// TestOldDriverBuildsLackTheirSymbols reads the libraries' dynamic symbol
// tables: an r470 build lacks what R470 lacked, an r418 build also what
// R418 lacked, and nvgo-status still runs on both.
func TestOldDriverBuildsLackTheirSymbols(t *testing.T) {
	r470Lacks := []string{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses_v3",
		"nvmlDeviceGetTemperatureV", "nvmlDeviceGetRunningProcessDetailList", "nvmlDeviceGetNumFans",
		"nvmlVgpuInstanceGetLicenseInfo", "nvmlVgpuInstanceGetLicenseInfo_v2", "nvmlVgpuInstanceGetPlacementId",
		"nvmlDeviceGetDriverModel_v2"}
	r418Lacks := append(slices.Clone(r470Lacks), "nvmlDeviceGetMigMode", "nvmlDeviceGetMigDeviceHandleByIndex",
		"nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceIsMigDeviceHandle", "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
		"nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId", "nvmlDeviceGetAttributes",
		"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetArchitecture", "nvmlDeviceGetComputeRunningProcesses_v2",
		"nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses",
		"nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlVgpuInstanceGetEccMode", "nvmlVgpuInstanceGetGpuInstanceId")
	everyoneHas := []string{"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetComputeRunningProcesses",
		"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetFieldValues", "nvgoFakeCallCounts"}
	for _, tt := range []struct {
		driver string
		lacks  []string
	}{{"current", nil}, {"r470", r470Lacks}, {"r418", r418Lacks}} {
		t.Run(tt.driver, func(t *testing.T) {
			dir := buildLib(t, tt.driver)
			syms := dynamicSymbols(t, filepath.Join(dir, libnvml.FileName))
			for _, s := range tt.lacks {
				if syms[s] {
					t.Errorf("the %s build exports %s", tt.driver, s)
				}
			}
			for _, s := range append(everyoneHas, r418Lacks...) {
				if !syms[s] && !slices.Contains(tt.lacks, s) {
					t.Errorf("the %s build lacks %s", tt.driver, s)
				}
			}
			out, stderr, code := status(t, dir, []string{fakegpu.EnvFleet + "=dgx-h100-mig"})
			if code != 0 || !strings.Contains(out, "H100") {
				t.Errorf("nvgo-status on the %s build: exit %d\n%s%s", tt.driver, code, out, stderr)
			}
		})
	}
}

func dynamicSymbols(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			out[s.Name] = true
		}
	}
	return out
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "--driver NAME") {
		t.Errorf("--help: exit %d\n%s", code, out.String())
	}
	for _, args := range [][]string{{}, {"-o"}, {"-o", t.TempDir(), "--driver", "r300"}, {"-o", t.TempDir(), "extra"}} {
		out.Reset()
		errOut.Reset()
		if code := run(args, &out, &errOut); code != 2 || strings.Count(errOut.String(), "\n") > 2 {
			t.Errorf("%q: exit %d\n%s", args, code, errOut.String())
		}
	}
}
