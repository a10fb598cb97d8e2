//go:build cgo

// The tests run the command through run(), as a user would run the binary,
// on fake fleets (--simulate needs cgo). They set CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER and NVGO_LOCK_DIR themselves, so they do not run in
// parallel. Every test uses a lock directory of its own: runSelect gives it
// one, and the binary's default one has every GPU reserved (TestMain), so a
// test that reads the machine's locks fails here, not only on a machine
// where other jobs hold GPUs.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/nvgotest"
)

func TestMain(m *testing.M) {
	nvgotest.RunMainIfAsked(func(args []string) int { return run(args, os.Stdout, os.Stderr) })
	os.Exit(runWithEveryGPUHeld(m))
}

// lockDirEnv names the default lock directory, as nvgo reads it.
const lockDirEnv = "NVGO_LOCK_DIR"

// heldLockDir is $NVGO_LOCK_DIR for the test binary, where every GPU of
// every test fleet is reserved while the tests run: what a test would see
// on a busy machine if it read the shared lock directory.
var heldLockDir string

// scenarioGPUs is how many GPUs of a scenario without a preset
// (writeScenario's) runWithEveryGPUHeld reserves: more than any test's.
const scenarioGPUs = 8

// runWithEveryGPUHeld runs the tests with $NVGO_LOCK_DIR set to a directory
// where every device of every preset, and of a scenario's first
// scenarioGPUs GPUs, is reserved.
func runWithEveryGPUHeld(m *testing.M) int {
	dir, err := os.MkdirTemp("", "nvgo-select-held-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	held, err := holdEveryGPU(dir)
	defer func() {
		for _, r := range held {
			r.Release()
		}
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "reserving every GPU in %s: %v\n", dir, err)
		return 1
	}
	heldLockDir = dir
	if err := os.Setenv(lockDirEnv, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// holdEveryGPU reserves in dir every device of the fleets tests use, and
// returns the reservations, which hold while they are reachable.
func holdEveryGPU(dir string) ([]*nvgo.Reservation, error) {
	fleets := []*fakegpu.Fleet{fakegpu.New(make([]fakegpu.GPUSpec, scenarioGPUs)...)}
	for _, name := range fakegpu.PresetNames() {
		f, err := fakegpu.Preset(name)
		if err != nil {
			return nil, err
		}
		fleets = append(fleets, f)
	}
	var held []*nvgo.Reservation
	for _, f := range fleets {
		lib, err := nvgo.Open(nvgo.WithNVML(f))
		if err != nil {
			return held, err
		}
		// One reservation takes at most one MIG device per GPU (CUDA's
		// limits): reserve until nothing unreserved is left.
		for {
			r, err := lib.ReserveDevices(context.Background(), nvgo.WithLockDir(dir), nvgo.WithMinCount(1), nvgo.WithoutReserved())
			if errors.Is(err, nvgo.ErrTooFewDevices) {
				break
			}
			if err != nil {
				lib.Close()
				return held, err
			}
			held = append(held, r)
		}
		lib.Close()
	}
	return held, nil
}

// ownLockDir points $NVGO_LOCK_DIR at a lock directory of the test's own
// for the rest of the test, unless the test has set one. A --lock-dir still
// wins; tests whose runs must see each other's reservations name one.
func ownLockDir(t *testing.T) {
	t.Helper()
	if os.Getenv(lockDirEnv) == heldLockDir {
		t.Setenv(lockDirEnv, t.TempDir())
	}
}

// runSelect runs the command with args and returns its exit status and
// output, with a lock directory of the test's own (ownLockDir).
func runSelect(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ownLockDir(t)
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// cleanCUDAEnv unsets CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER for the
// test, and points the CUDA driver probe at a library that does not exist,
// so that no test depends on the machine it runs on.
func cleanCUDAEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"} {
		t.Setenv(k, "") // restores the old value afterwards
		os.Unsetenv(k)
	}
	t.Setenv("NVGO_LIBCUDA", filepath.Join(t.TempDir(), "no-libcuda.so.1"))
}

// writeScenario writes a scenario file and returns its path.
func writeScenario(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fleetUUIDs returns the UUIDs of the GPUs of a preset or scenario file by
// NVML index, lost ones included.
func fleetUUIDs(t *testing.T, nameOrFile string) []string {
	t.Helper()
	fleet, err := fakegpu.Load(nameOrFile)
	if err != nil {
		t.Fatal(err)
	}
	uuids := make([]string, fleet.Count())
	for i := range uuids {
		uuids[i] = fleet.GPU(i).UUID()
	}
	return uuids
}

// pick returns uuids[i] for each i, joined by commas.
func pick(uuids []string, idx ...int) string {
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = uuids[n]
	}
	return strings.Join(out, ",")
}

// fourGPUs is four H100s whose free memory ranks them 2, 1, 3, 0:
// free ≈ 10.9, 69.5, 79.3 and 40.2 GiB; GPU utilization 90, 10, 50, 0;
// memory utilization 50, 5, 60, 0.
const fourGPUs = `{"gpus": [
  {"memory_used_mib": 70000, "gpu_util": 90, "mem_util": 50},
  {"memory_used_mib": 10000, "gpu_util": 10, "mem_util": 5},
  {"memory_used_mib": 0,     "gpu_util": 50, "mem_util": 60},
  {"memory_used_mib": 40000, "gpu_util": 0,  "mem_util": 0}
]}`

func TestConstraintsChooseAndRankLikeNvisel(t *testing.T) {
	cleanCUDAEnv(t)
	fleet := writeScenario(t, fourGPUs)
	tests := []struct {
		name string
		args []string
		want string // stdout
	}{
		{"no constraint ranks by free memory", nil, "2,1,3,0\n"},
		{"-f keeps devices with that much free memory", []string{"-f", "40GiB"}, "2,1,3\n"},
		{"-f 50GiB leaves out 40 GiB even with the default tolerance of 10", []string{"-f", "50GiB"}, "2,1\n"},
		{"the tolerance lets 40.2 GiB pass -f 44GiB, ranked last", []string{"-f", "44GiB"}, "2,1,3\n"},
		{"--tol 0 is strict", []string{"-f", "44GiB", "--tol", "0"}, "2,1\n"},
		{"-t above every GPU's memory keeps none", []string{"-t", "100GiB"}, "\n"},
		{"-t below it keeps all", []string{"--min-total-memory", "70GiB"}, "2,1,3,0\n"},
		{"-G keeps idle devices", []string{"-G", "20"}, "1,3\n"},
		{"-G 45 lets 50% pass loosened, after the strict ones", []string{"-G", "45"}, "1,3,2\n"},
		{"-M keeps devices with little memory traffic", []string{"-M", "10"}, "1,3\n"},
		{"--window judges utilization over a window", []string{"-G", "20", "--window", "5s"}, "1,3\n"},
		{"-C caps the count", []string{"-C", "2"}, "2,1\n"},
		{"-n takes exactly that many", []string{"-n", "3"}, "2,1,3\n"},
		{"-C 0 takes none", []string{"-C", "0"}, "\n"},
		{"-S keeps index order", []string{"-S"}, "0,1,2,3\n"},
		{"-S with a constraint", []string{"-S", "-f", "40GiB"}, "1,2,3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--simulate", fleet, "-O", "index"}, tt.args...)
			code, stdout, stderr := runSelect(t, args...)
			if code != 0 || stdout != tt.want {
				t.Errorf("nvgo-select %q = %d, stdout %q (stderr %q); want 0, %q", args, code, stdout, stderr, tt.want)
			}
			wantLine := `CUDA_VISIBLE_DEVICES="` + strings.TrimSuffix(tt.want, "\n") + "\"\n"
			if stderr != wantLine {
				t.Errorf("nvgo-select %q stderr = %q; want %q (stdout is not a terminal)", args, stderr, wantLine)
			}
		})
	}
}

func TestSeparators(t *testing.T) {
	cleanCUDAEnv(t)
	fleet := writeScenario(t, fourGPUs)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"commas by default", nil, "2,1,3,0\n"},
		{"-s sets the separator", []string{"-s", " "}, "2 1 3 0\n"},
		{"--sep= joins with nothing", []string{"--sep="}, "2130\n"},
		{"--newline puts one per line", []string{"--newline"}, "2\n1\n3\n0\n"},
		{"-0 separates and ends with NUL", []string{"-0"}, "2\x001\x003\x000\x00"},
		{"-0 prints nothing for no device", []string{"-0", "-t", "1TiB"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--simulate", fleet, "-O", "index"}, tt.args...)
			code, stdout, stderr := runSelect(t, args...)
			if code != 0 || stdout != tt.want {
				t.Errorf("nvgo-select %q = %d, stdout %q (stderr %q); want 0, %q", args, code, stdout, stderr, tt.want)
			}
			if !strings.HasPrefix(stderr, `CUDA_VISIBLE_DEVICES="`) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("nvgo-select %q stderr = %q; want CUDA_VISIBLE_DEVICES with commas", args, stderr)
			}
		})
	}
}

func TestUUIDsAreTheDefault(t *testing.T) {
	cleanCUDAEnv(t)
	uuids := fleetUUIDs(t, "dgx-h100")
	code, stdout, stderr := runSelect(t, "--simulate", "dgx-h100", "-n", "2")
	// GPUs 0-2 are busy; among the idle ones the highest index comes first.
	if want := pick(uuids, 7, 6); code != 0 || stdout != want+"\n" || stderr != `CUDA_VISIBLE_DEVICES="`+want+"\"\n" {
		t.Errorf("nvgo-select -n 2 = %d, %q, %q; want 0, %q", code, stdout, stderr, want)
	}
}

func TestAccountAsFreeCountsTheUsersMemoryAsFree(t *testing.T) {
	cleanCUDAEnv(t)
	// GPU 0 is full with a process of this test's own PID, so of the
	// current user; GPU 1 is full with memory of nobody known.
	fleet := writeScenario(t, fmt.Sprintf(`{"gpus": [
	  {"processes": [{"pid": %d, "used_memory_mib": 70000}]},
	  {"memory_used_mib": 70000}
	]}`, os.Getpid()))
	me := currentUser()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"without it both GPUs are full", nil, "\n"},
		{"alone it means the current user", []string{"--account-as-free"}, "0\n"},
		{"with the user's name", []string{"--account-as-free", me}, "0\n"},
		{"with someone else's name", []string{"--account-as-free", "no-such-user-x"}, "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--simulate", fleet, "-O", "index", "-f", "50GiB"}, tt.args...)
			if code, stdout, stderr := runSelect(t, args...); code != 0 || stdout != tt.want {
				t.Errorf("nvgo-select %q = %d, %q (stderr %q); want 0, %q", args, code, stdout, stderr, tt.want)
			}
		})
	}
}

// With too few devices nothing reaches stdout, so that
// CUDA_VISIBLE_DEVICES=$(nvgo-select -n 9) on eight GPUs is not a partial
// list that looks like an answer; stderr says why, and nothing else.
func TestTooFewDevicesExit4AndPrintNothing(t *testing.T) {
	cleanCUDAEnv(t)
	fleet := writeScenario(t, fourGPUs)
	twoModels := writeScenario(t, `{"gpus": [{"model": "h100"}, {"model": "a100"}]}`)
	tests := []struct {
		name    string
		args    []string
		message string // the one line on stderr
	}{
		{"-n above the fleet", []string{"--simulate", "dgx-h100", "-n", "9"}, "8 unreserved satisfy the constraints, at least 9 wanted; printing none"},
		{"-c above the fleet", []string{"--simulate", fleet, "-c", "5"}, "4 unreserved satisfy the constraints, at least 5 wanted"},
		{"-n above what qualifies", []string{"--simulate", fleet, "-n", "3", "-f", "50GiB"}, "2 unreserved satisfy the constraints, at least 3 wanted"},
		{"-c 1 and nothing qualifies", []string{"--simulate", fleet, "-c", "1", "-t", "1TiB"}, "0 unreserved satisfy the constraints, at least 1 wanted"},
		{"-0 prints no NUL either", []string{"--simulate", fleet, "-0", "-c", "5"}, "at least 5 wanted"},
		{"--newline prints no newline either", []string{"--simulate", fleet, "--newline", "-c", "5"}, "at least 5 wanted"},
		{"indices are not needed, so not refused", []string{"--simulate", twoModels, "-O", "index", "-c", "3"}, "2 unreserved satisfy the constraints, at least 3 wanted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runSelect(t, tt.args...)
			if code != exitTooFew || stdout != "" {
				t.Errorf("nvgo-select %q = %d, stdout %q; want %d and nothing", tt.args, code, stdout, exitTooFew)
			}
			if want := "nvgo-select: not enough devices: "; !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, tt.message) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("nvgo-select %q stderr = %q; want one line, %q…%q (no CUDA_VISIBLE_DEVICES line)", tt.args, stderr, want, tt.message)
			}
		})
	}
}

func TestFormatIndex(t *testing.T) {
	twoModels := writeScenario(t, `{"gpus": [{"model": "h100"}, {"model": "a100"}]}`)
	busesSwapped := writeScenario(t, `{"gpus": [{"bus_id": "00000000:9A:00.0"}, {"bus_id": "00000000:18:00.0"}]}`)
	tests := []struct {
		name    string
		order   string // CUDA_DEVICE_ORDER
		args    []string
		code    int
		stdout  string
		message string // in stderr
	}{
		{name: "identical GPUs print indices", args: []string{"--simulate", "dgx-h100", "-n", "2"}, stdout: "7,6\n"},
		{name: "two models under FASTEST_FIRST are refused", args: []string{"--simulate", twoModels},
			code: exitCUDA, message: "GPUs of different models under CUDA_DEVICE_ORDER=FASTEST_FIRST"},
		{name: "the refusal suggests UUIDs and PCI_BUS_ID", args: []string{"--simulate", twoModels},
			code: exitCUDA, message: "use UUIDs (--format uuid, the default) or set CUDA_DEVICE_ORDER=PCI_BUS_ID"},
		{name: "two models under PCI_BUS_ID print indices", order: "PCI_BUS_ID", args: []string{"--simulate", twoModels, "-S"}, stdout: "0,1\n"},
		{name: "CUDA numbering GPUs other than NVML is refused", order: "PCI_BUS_ID", args: []string{"--simulate", busesSwapped},
			code: exitCUDA, message: "CUDA device 0 is GPU 1"},
		{name: "a MIG device selected is refused", args: []string{"--simulate", "dgx-h100-mig"},
			code: exitCUDA, message: "is a MIG device, which has no index CUDA_VISIBLE_DEVICES can name"},
		{name: "whole GPUs beside MIG devices are refused", args: []string{"--simulate", "dgx-h100-mig", "-n", "1"},
			code: exitCUDA, message: "CUDA's numbering of the GPUs is not known"},
		{name: "no device needs no index", args: []string{"--simulate", twoModels, "-t", "1TiB"}, stdout: "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanCUDAEnv(t)
			if tt.order != "" {
				t.Setenv("CUDA_DEVICE_ORDER", tt.order)
			}
			args := append(tt.args, "-O", "index")
			code, stdout, stderr := runSelect(t, args...)
			if code != tt.code || stdout != tt.stdout {
				t.Errorf("nvgo-select %q = %d, %q (stderr %q); want %d, %q", args, code, stdout, stderr, tt.code, tt.stdout)
			}
			if !strings.Contains(stderr, tt.message) {
				t.Errorf("nvgo-select %q stderr = %q; want %q", args, stderr, tt.message)
			}
			if tt.code != 0 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("nvgo-select %q stderr = %q; want one line", args, stderr)
			}
		})
	}
}

func TestInherit(t *testing.T) {
	uuids := fleetUUIDs(t, "dgx-h100")
	twoModels := writeScenario(t, `{"gpus": [{"model": "h100"}, {"model": "a100"}]}`)
	tests := []struct {
		name    string
		env     *string // CUDA_VISIBLE_DEVICES; nil: unset
		args    []string
		code    int
		stdout  string
		message string // in stderr
	}{
		{name: "a value limits the choice", args: []string{"--simulate", "dgx-h100", "-i", "3,5", "-O", "index"}, stdout: "5,3\n"},
		{name: "-S keeps CUDA's order of the value", args: []string{"--simulate", "dgx-h100", "-i", "5,3", "-S", "-O", "index"}, stdout: "5,3\n"},
		{name: "a UUID prefix names a device", args: []string{"--simulate", "dgx-h100", "-i", uuids[4][:12]}, stdout: uuids[4] + "\n"},
		{name: "without a value it reads the environment", env: str("1,2"), args: []string{"--simulate", "dgx-h100", "-i", "-S", "-O", "index"}, stdout: "1,2\n"},
		{name: "indices replace the inherited value, not ordinals inside it", env: str("5,6"),
			args: []string{"--simulate", "dgx-h100", "-i", "-n", "1", "-O", "index"}, stdout: "6\n"},
		{name: "an unset variable means every device", args: []string{"--simulate", "dgx-h100", "-i", "-n", "1", "-O", "index"}, stdout: "7\n"},
		{name: "an empty value leaves no device", args: []string{"--simulate", "dgx-h100", "-i", ""}, stdout: "\n", message: "leaves CUDA no device"},
		{name: "no device is too few for -c 1", args: []string{"--simulate", "dgx-h100", "-i=", "-c", "1"}, code: exitTooFew, message: "not enough devices"},
		{name: "an undecidable value without a CUDA driver exits 3", args: []string{"--simulate", twoModels, "-i", "0"},
			code: exitCUDA, message: "nvgo-select: --inherit: "},
		{name: "and says there is no driver to ask", args: []string{"--simulate", twoModels, "-i", "0"},
			code: exitCUDA, message: "there is no CUDA driver (libcuda.so.1) to ask"},
		{name: "indices with MIG on exit 3", args: []string{"--simulate", "dgx-h100-mig", "-i", "2,3"},
			code: exitCUDA, message: "indices while a GPU has MIG on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanCUDAEnv(t)
			if tt.env != nil {
				t.Setenv("CUDA_VISIBLE_DEVICES", *tt.env)
			}
			code, stdout, stderr := runSelect(t, tt.args...)
			if code != tt.code || stdout != tt.stdout {
				t.Errorf("nvgo-select %q = %d, %q (stderr %q); want %d, %q", tt.args, code, stdout, stderr, tt.code, tt.stdout)
			}
			if !strings.Contains(stderr, tt.message) {
				t.Errorf("nvgo-select %q stderr = %q; want %q", tt.args, stderr, tt.message)
			}
		})
	}
}

func TestNoDriverAndBadScenariosExit1OtherNVMLErrors2(t *testing.T) {
	cleanCUDAEnv(t)
	tests := []struct {
		name     string
		scenario string
		code     int
		message  string
	}{
		{"no NVML library", `{"init_error": "LIBRARY_NOT_FOUND"}`, exitNoDriver, "no usable NVIDIA driver"},
		{"no driver loaded", `{"init_error": "DRIVER_NOT_LOADED"}`, exitNoDriver, "no usable NVIDIA driver"},
		{"a bad scenario", `{"gpus": [{"bogus": 1}]}`, exitNoDriver, "gpus[0].bogus"},
		{"another NVML error", `{"init_error": "UNKNOWN"}`, exitUsage, "NVML error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runSelect(t, "--simulate", writeScenario(t, tt.scenario))
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.message) {
				t.Errorf("nvgo-select = %d, %q, %q; want %d and %q", code, stdout, stderr, tt.code, tt.message)
			}
		})
	}
	t.Run("a missing scenario file", func(t *testing.T) {
		code, _, stderr := runSelect(t, "--simulate", filepath.Join(t.TempDir(), "none.json"))
		if code != exitNoDriver || !strings.Contains(stderr, "not a preset") {
			t.Errorf("nvgo-select = %d, %q; want %d", code, stderr, exitNoDriver)
		}
	})
}

// waitForFile waits until path exists, failing if the run ends first.
func waitForFile(t *testing.T, path string, done <-chan int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case code := <-done:
			t.Fatalf("nvgo-select ended with %d before %s appeared", code, path)
		case <-deadline:
			t.Fatalf("%s did not appear", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestCommandRunsOnTheReservedDevices(t *testing.T) {
	cleanCUDAEnv(t)
	uuids := fleetUUIDs(t, "dgx-h100")
	code, stdout, stderr := runSelect(t, "--simulate", "dgx-h100", "-n", "2", "--lock-dir", t.TempDir(),
		"--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"; exit 7`)
	want := pick(uuids, 7, 6)
	if code != 7 {
		t.Errorf("exit status %d; want the command's 7", code)
	}
	if stdout != want+"\n" {
		t.Errorf("the command saw CUDA_VISIBLE_DEVICES=%q; want %q", stdout, want)
	}
	if stderr != `CUDA_VISIBLE_DEVICES="`+want+"\"\n" {
		t.Errorf("stderr = %q; want the one CUDA_VISIBLE_DEVICES line", stderr)
	}
}

func TestCommandHoldsTheReservationWhileItRuns(t *testing.T) {
	cleanCUDAEnv(t)
	uuids := fleetUUIDs(t, "dgx-h100")
	locks, dir := t.TempDir(), t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")

	var out1, err1 bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"--simulate", "dgx-h100", "-n", "2", "--lock-dir", locks, "--", "sh", "-c",
			`touch "$1"; while [ ! -e "$2" ]; do sleep 0.02; done; echo "$CUDA_VISIBLE_DEVICES"`, "sh", started, release}, &out1, &err1)
	}()
	waitForFile(t, started, done)

	// nvgo-select's own hold is released; the running command keeps GPUs 7 and 6.
	if code, _, stderr := runSelect(t, "--simulate", "dgx-h100", "-n", "7", "--lock-dir", locks, "--", "true"); code != exitTooFew {
		t.Errorf("a second nvgo-select -n 7 = %d (%q); want %d while the first command runs", code, stderr, exitTooFew)
	}
	code, stdout, _ := runSelect(t, "--simulate", "dgx-h100", "-n", "6", "--lock-dir", locks, "--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"`)
	if want := pick(uuids, 5, 4, 3, 2, 1, 0); code != 0 || stdout != want+"\n" {
		t.Errorf("a second nvgo-select -n 6 = %d, %q; want 0, %q", code, stdout, want)
	}
	if code, stdout, _ := runSelect(t, "--simulate", "dgx-h100", "-n", "2", "--lock-dir", locks); code != 0 || stdout != pick(uuids, 5, 4)+"\n" {
		t.Errorf("printing = %d, %q; want GPUs 5 and 4 (printing leaves reserved GPUs out)", code, stdout)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if want := pick(uuids, 7, 6); code != 0 || out1.String() != want+"\n" {
			t.Errorf("the first nvgo-select = %d, %q (stderr %q); want 0, %q", code, out1.String(), err1.String(), want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the first command did not end")
	}
	if code, _, stderr := runSelect(t, "--simulate", "dgx-h100", "-n", "8", "--lock-dir", locks, "--", "true"); code != 0 {
		t.Errorf("nvgo-select -n 8 after the command ended = %d (%q); want 0", code, stderr)
	}
}

func TestCommandFailures(t *testing.T) {
	cleanCUDAEnv(t)
	notExecutable := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(t.TempDir(), "ran")
	tests := []struct {
		name    string
		args    []string
		code    int
		message string // in stderr
	}{
		{"a command not in $PATH exits 127", []string{"--", "no-such-command-nvgo"}, exitNotFound, "nvgo-select: no-such-command-nvgo: command not found"},
		{"a missing path exits 127", []string{"--", "/no/such/file"}, exitNotFound, "nvgo-select: /no/such/file: no such file or directory"},
		{"a file without x exits 126", []string{"--", notExecutable}, exitCannotExecute, "cannot execute: permission denied"},
		{"a directory exits 126", []string{"--", t.TempDir()}, exitCannotExecute, "cannot execute"},
		{"a command killed by SIGTERM exits 143", []string{"--", "sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM), `CUDA_VISIBLE_DEVICES="`},
		{"too few devices exit 4 without running it", []string{"-c", "9", "--", "touch", ran}, exitTooFew, "not enough devices: fewer than 9"},
		{"a command needs one device by default", []string{"-f", "1TiB", "--", "touch", ran}, exitTooFew, "not enough devices: fewer than 1"},
		{"an empty inherited list runs nothing", []string{"-i", "", "--", "touch", ran}, exitTooFew, "--inherit leaves none"},
		{"-c 0 runs it without a device", []string{"-c", "0", "-f", "1TiB", "--", "sh", "-c", `[ -z "$CUDA_VISIBLE_DEVICES" ]`}, 0, `CUDA_VISIBLE_DEVICES=""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--simulate", "dgx-h100", "--lock-dir", t.TempDir()}, tt.args...)
			code, stdout, stderr := runSelect(t, args...)
			if code != tt.code || stdout != "" {
				t.Errorf("nvgo-select %q = %d, stdout %q (stderr %q); want %d and no output", args, code, stdout, stderr, tt.code)
			}
			if !strings.Contains(stderr, tt.message) {
				t.Errorf("nvgo-select %q stderr = %q; want %q", args, stderr, tt.message)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Errorf("nvgo-select %q ran the command", args)
			}
		})
	}
}

func TestCommandGetsTheSignalsSelectGets(t *testing.T) {
	if signal.Ignored(syscall.SIGTERM) {
		t.Skip("SIGTERM is ignored here, so nvgo-select would not catch it")
	}
	cleanCUDAEnv(t)
	started, locks := filepath.Join(t.TempDir(), "started"), t.TempDir()
	done := make(chan int, 1)
	go func() {
		var out, errOut bytes.Buffer
		done <- run([]string{"--simulate", "dgx-h100", "-n", "1", "--lock-dir", locks,
			"--", "sh", "-c", `touch "$1"; exec sleep 60`, "sh", started}, &out, &errOut)
	}()
	waitForFile(t, started, done)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if want := 128 + int(syscall.SIGTERM); code != want {
			t.Errorf("nvgo-select = %d; want %d, the command killed by the forwarded SIGTERM", code, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command did not get SIGTERM")
	}
}

func TestCommandModeTakesEveryConstraint(t *testing.T) {
	cleanCUDAEnv(t)
	fleet := writeScenario(t, fourGPUs)
	// Per fleet: its UUIDs, as nvgo-select prints them with -S.
	_, all, _ := runSelect(t, "--simulate", fleet, "-S")
	uuids := strings.Split(strings.TrimSpace(all), ",")
	if len(uuids) != 4 {
		t.Fatalf("the fleet's UUIDs = %q; want 4", uuids)
	}
	tests := []struct {
		args []string
		want []int
	}{
		{[]string{"-f", "40GiB"}, []int{2, 1, 3}},
		{[]string{"-G", "20"}, []int{1, 3}},
		{[]string{"-n", "1", "-M", "10"}, []int{1}},
		{[]string{"-S", "-C", "2"}, []int{0, 1}},
		{[]string{"-i", "0,3", "-S"}, []int{0, 3}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := append(append([]string{"--simulate", fleet, "--lock-dir", t.TempDir()}, tt.args...), "--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"`)
			code, stdout, _ := runSelect(t, args...)
			if want := pick(uuids, tt.want...); code != 0 || stdout != want+"\n" {
				t.Errorf("nvgo-select %q = %d, %q; want 0, %q", args, code, stdout, want)
			}
		})
	}
}

// Devices left out (a GPU that fell off the bus, a lock file that cannot be
// locked) are named in "nvgo-select: warning: …" lines, printing or running a
// command, with enough devices or too few; the others are chosen (a lost GPU
// used to stop every launch on the node).
func TestLeftOutDevicesAreWarnedOfInBothModes(t *testing.T) {
	cleanCUDAEnv(t)
	threeGPUs := writeScenario(t, `{"gpus": [{}, {}, {}]}`)
	gpu2Lost := writeScenario(t, `{"gpus": [{}, {}, {"lost": true}]}`)
	uuids := fleetUUIDs(t, threeGPUs) // the same in both: derived from the index
	command := []string{"--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"`}
	const lost = `^GPU 2 left out: .*GPU is lost$`
	unlockable := func(i int) string {
		return `^GPU ` + fmt.Sprint(i) + ` \(` + regexp.QuoteMeta(uuids[i]) + `\) left out: unusable lock file: .*named pipe`
	}
	tests := []struct {
		name     string
		fleet    string
		fifoOn   []int // GPUs whose lock path holds a FIFO
		args     []string
		code     int
		stdout   string
		warnings []string // patterns, each matching a line of its own after "nvgo-select: warning: "
	}{
		{name: "printing names a lost GPU", fleet: gpu2Lost, args: []string{"-n", "2"},
			stdout: pick(uuids, 1, 0) + "\n", warnings: []string{lost}},
		{name: "printing too few names a lost GPU", fleet: gpu2Lost, args: []string{"-n", "3"},
			code: exitTooFew, warnings: []string{lost}},
		{name: "a command names a lost GPU", fleet: gpu2Lost, args: append([]string{"-n", "2"}, command...),
			stdout: pick(uuids, 1, 0) + "\n", warnings: []string{lost}},
		{name: "a command names a GPU whose lock file is a FIFO", fleet: threeGPUs, fifoOn: []int{2}, args: append([]string{"-n", "2"}, command...),
			stdout: pick(uuids, 1, 0) + "\n", warnings: []string{unlockable(2)}},
		{name: "a command short of devices names both", fleet: gpu2Lost, fifoOn: []int{1}, args: append([]string{"-n", "2"}, command...),
			code: exitTooFew, warnings: []string{unlockable(1), lost}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			locks := t.TempDir()
			for _, i := range tt.fifoOn {
				// The lock file's name, as the lock directory shows it.
				if err := syscall.Mkfifo(filepath.Join(locks, uuids[i]+".lock"), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"--simulate", tt.fleet, "--lock-dir", locks}, tt.args...)
			code, stdout, stderr := runSelect(t, args...)
			if code != tt.code || stdout != tt.stdout {
				t.Errorf("nvgo-select %q = %d, %q (stderr %q); want %d, %q", args, code, stdout, stderr, tt.code, tt.stdout)
			}
			var warned []string
			for _, line := range strings.Split(stderr, "\n") {
				if w, ok := strings.CutPrefix(line, "nvgo-select: warning: "); ok {
					warned = append(warned, w)
				}
			}
			for _, want := range tt.warnings {
				if !slices.ContainsFunc(warned, regexp.MustCompile(want).MatchString) {
					t.Errorf("nvgo-select %q warned %q; want a warning matching %s", args, warned, want)
				}
			}
			if len(warned) != len(tt.warnings) {
				t.Errorf("nvgo-select %q warned %q; want %d warnings", args, warned, len(tt.warnings))
			}
		})
	}
}

// A GPU with MIG on runs work only in its MIG devices, so one with none
// (GPU 1 of dgx-h100-mig) is never chosen, printing or running a command,
// while the MIG devices of GPU 0 and the whole GPUs 2-7 are (issue 25's
// "one definition of free": the exporter called such a GPU free).
func TestAGPUWithMIGOnAndNoMIGDeviceIsNeverChosen(t *testing.T) {
	cleanCUDAEnv(t)
	uuids := fleetUUIDs(t, "dgx-h100-mig")
	for _, args := range [][]string{
		{"-S"},
		{"-S", "--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"`},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			args := append([]string{"--simulate", "dgx-h100-mig"}, args...)
			code, stdout, stderr := runSelect(t, args...)
			chosen := strings.Split(strings.TrimSpace(stdout), ",")
			want := append([]string(nil), uuids[2:]...)
			if code != 0 || len(chosen) != 3+len(want) || slices.Contains(chosen, uuids[1]) || !slices.Equal(chosen[3:], want) {
				t.Errorf("nvgo-select %q = %d, %q (stderr %q); want 0, three MIG devices and GPUs 2-7, not GPU 1 (%s)", args, code, chosen, stderr, uuids[1])
			}
			for _, c := range chosen[:min(3, len(chosen))] {
				if !strings.HasPrefix(c, "MIG-") {
					t.Errorf("nvgo-select %q chose %q first; want GPU 0's MIG devices", args, chosen)
				}
			}
		})
	}
}

// A selection that cannot be written is an error (exit 2), not a silent
// success: the caller would take the empty output for "no device".
func TestAFailedWriteExits2(t *testing.T) {
	cleanCUDAEnv(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full to write to: %v", err)
	}
	defer full.Close()
	ownLockDir(t)
	var stderr bytes.Buffer
	code := run([]string{"--simulate", "dgx-h100", "-n", "2"}, full, &stderr)
	if want := "nvgo-select: writing the selection: write /dev/full: no space left on device\n"; code != exitUsage || !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("nvgo-select -n 2 >/dev/full = %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, want)
	}
}

// --lock-dir follows $NVGO_LOCK_DIR's rule: a missing directory is
// created; one that cannot be used is a filesystem error (exit 2, named
// as such, not as an NVML error).
func TestLockDirFollowsOneRule(t *testing.T) {
	cleanCUDAEnv(t)
	missing := filepath.Join(t.TempDir(), "not", "yet")
	if code, _, stderr := runSelect(t, "--simulate", "dgx-h100", "-n", "1", "--lock-dir", missing, "--", "true"); code != 0 {
		t.Errorf("--lock-dir (missing): exit %d, %q; want 0", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runSelect(t, "--simulate", "dgx-h100", "-n", "1", "--lock-dir", file, "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "lock directory") || strings.Contains(stderr, "NVML") {
		t.Errorf("--lock-dir (a file): exit %d, %q; want %d and a lock-directory error", code, stderr, exitUsage)
	}
}
