//go:build cgo

// End-to-end tests through the C door: nvgo-status built with cgo and run with
// no --simulate, loading nvgo's drop-in libnvidia-ml.so.1 as it would load
// the driver's.

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/nvgotest"
)

func TestMain(m *testing.M) {
	nvgotest.RunMainIfAsked(func(args []string) int { return run(args, os.Stdout, os.Stderr) })
	os.Exit(m.Run())
}

// runDoor runs nvgo-status as a client of door; env adds to its environment.
func runDoor(t *testing.T, door *nvgotest.Door, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := door.Command(t, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("nvgo-status did not run: %v", err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// stableLines drops what changes from one run to the next: the date line
// and the host's CPU and memory lines.
//
// The drop-in library stands in for the driver, not for the host: a
// client of it reads the real /proc, where the simulated PIDs do not
// exist, while --simulate shows them as believable host processes. So the
// host columns of the process rows (USER, and %CPU to COMMAND) are masked.
func stableLines(table string) []string {
	var out []string
	user, cpu := -1, -1
	for i, l := range strings.Split(table, "\n") {
		if i == 0 || strings.HasPrefix(l, "[ ") {
			continue
		}
		r := []rune(l)
		if h := []rune(l); strings.Contains(l, " USER ") && strings.Contains(l, "%CPU") {
			user, cpu = runeIndex(h, "USER"), runeIndex(h, "%CPU")-2
		} else if user > 0 && len(r) > cpu && strings.HasPrefix(l, "│") {
			for j := range r[user : user+10] {
				r[user+j] = ' '
			}
			for j := cpu; j < len(r)-1; j++ {
				r[j] = ' '
			}
		}
		out = append(out, string(r))
	}
	return out
}

// runeIndex is strings.Index in runes.
func runeIndex(r []rune, sub string) int {
	return len([]rune(string(r)[:strings.Index(string(r), sub)]))
}

// withoutTimestamps decodes a --json document and drops every
// "timestamp", which says when each part was read, and the host facts of
// processes (see stableLines).
func withoutTimestamps(t *testing.T, doc string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	var drop func(any)
	drop = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "timestamp")
			if _, ok := v["gpu_memory"]; ok { // a process
				for _, k := range []string{"is_running", "host_error", "name", "username", "command", "cmdline", "status",
					"cpu_percent", "host_memory", "host_memory_percent", "create_time", "running_time"} {
					delete(v, k)
				}
			}
			for _, x := range v {
				drop(x)
			}
		case []any:
			for _, x := range v {
				drop(x)
			}
		}
	}
	drop(v)
	return v
}

// lostGPU7 is a DGX H100 whose GPU 7 fell off the bus.
const lostGPU7 = `{"preset": "dgx-h100", "gpus": [{}, {}, {}, {}, {}, {}, {}, {"lost": true}]}`

func TestThroughTheDriverLibraryStatusShowsTheFleet(t *testing.T) {
	for _, fleetName := range []string{"dgx-h100", "dgx-a100-mig", "dgx-h100-mig", "vgpu-h100", "lost GPU 7"} {
		t.Run(fleetName, func(t *testing.T) {
			plainTerminal(t, 160)
			name := fleetName
			if fleetName == "lost GPU 7" {
				name = writeScenario(t, lostGPU7)
			}
			fleet, err := fakegpu.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			door := nvgotest.Serve(t, fleet, "current")
			for _, args := range [][]string{{"--json"}, {"--no-color"}} {
				code, got, stderr := runDoor(t, door, nil, args...)
				if code != 0 || stderr != "" {
					t.Fatalf("nvgo-status %v through the library: exit %d\n%s", args, code, stderr)
				}
				code, want, stderr := runStatus(t, append(args, "--simulate", name)...)
				if code != 0 {
					t.Fatalf("nvgo-status %v --simulate: exit %d\n%s", args, code, stderr)
				}
				if args[0] == "--json" {
					g, w := withoutTimestamps(t, got), withoutTimestamps(t, want)
					gj, _ := json.MarshalIndent(g, "", " ")
					wj, _ := json.MarshalIndent(w, "", " ")
					if !bytes.Equal(gj, wj) {
						t.Errorf("--json through the library differs from --simulate:\n%s\nwant:\n%s", gj, wj)
					}
					continue
				}
				if g, w := stableLines(got), stableLines(want); strings.Join(g, "\n") != strings.Join(w, "\n") {
					t.Errorf("the table through the library differs from --simulate:\n%s\nwant:\n%s", got, want)
				}
			}
			if calls := door.CallCounts(t); calls.Calls["nvmlInit_v2"] != 1 || calls.Calls["nvmlShutdown"] != 1 {
				t.Errorf("nvgo-status should initialise and shut NVML down once: %v", calls.Calls)
			}
		})
	}
}

// nvgo-status reads what it shows and no more, as the driver counts it: the
// table no clocks, BAR1 or codec figures; --json --fields only the groups
// named.
func TestThroughTheDriverLibraryStatusReadsOnlyWhatItShows(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	door := nvgotest.Serve(t, fleet, "current")
	for _, tt := range []struct {
		args     []string
		want     []string // calls that must be made
		wantNone []string // calls that must not
	}{
		{[]string{"--no-color"},
			[]string{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetTemperature", "nvmlDeviceGetComputeRunningProcesses_v3"},
			[]string{"nvmlDeviceGetClockInfo", "nvmlDeviceGetBAR1MemoryInfo", "nvmlDeviceGetEncoderUtilization"}},
		{[]string{"--json"},
			[]string{"nvmlDeviceGetClockInfo", "nvmlDeviceGetBAR1MemoryInfo", "nvmlDeviceGetEncoderUtilization"},
			nil},
		{[]string{"--json", "--fields", "memory"},
			[]string{"nvmlDeviceGetMemoryInfo_v2"},
			[]string{"nvmlDeviceGetTemperature", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetFieldValues"}},
	} {
		code, stdout, stderr := runDoor(t, door, nil, tt.args...)
		if code != 0 || stderr != "" {
			t.Fatalf("nvgo-status %v: exit %d\n%s", tt.args, code, stderr)
		}
		calls := door.CallCounts(t).Calls
		for _, c := range tt.want {
			if calls[c] == 0 {
				t.Errorf("nvgo-status %v made no %s call: %v", tt.args, c, calls)
			}
		}
		for _, c := range tt.wantNone {
			if calls[c] != 0 {
				t.Errorf("nvgo-status %v made %d %s calls; want none", tt.args, calls[c], c)
			}
		}
		if len(tt.args) == 3 {
			var doc struct {
				Fields  []string `json:"fields"`
				Devices []struct {
					Processes   []any `json:"processes"`
					Temperature *int  `json:"temperature"`
				} `json:"devices"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(doc.Fields, []string{"memory"}) || doc.Devices[0].Processes != nil || doc.Devices[0].Temperature != nil {
				t.Errorf("--fields memory: fields %v, processes %v, temperature %v; want [memory], null, null",
					doc.Fields, doc.Devices[0].Processes, doc.Devices[0].Temperature)
			}
		}
	}
}

// TestOnOldDriversStatusStillRuns runs nvgo-status on libraries that lack what
// R470 and R418 lacked: no crash, every GPU shown, and what the old calls
// give instead (v1 memory counts reserved memory as used).
func TestOnOldDriversStatusStillRuns(t *testing.T) {
	for _, driver := range []string{"r470", "r418"} {
		t.Run(driver, func(t *testing.T) {
			fleet, err := fakegpu.Preset("dgx-h100-mig")
			if err != nil {
				t.Fatal(err)
			}
			door := nvgotest.Serve(t, fleet, driver)
			code, stdout, stderr := runDoor(t, door, nil, "--json")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			var doc struct {
				Devices []struct {
					MemoryUsed        *uint64 `json:"memory_used"`
					MemoryReserved    *uint64 `json:"memory_reserved"`
					Temperature       *int    `json:"temperature"`
					MemoryTemperature *int    `json:"memory_temperature"`
					MIGDevices        []any   `json:"mig_devices"`
				} `json:"devices"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Devices) != 8 {
				t.Fatalf("%d GPUs shown; want 8", len(doc.Devices))
			}
			d3 := doc.Devices[3] // idle: only the driver's reserved memory is in use
			fleet.Init()
			mem, _ := fleet.GPU(3).Device().GetMemoryInfo()
			fleet.Shutdown()
			if d3.MemoryUsed == nil || *d3.MemoryUsed != mem.Used {
				t.Errorf("GPU 3 memory used = %v; want the v1 figure %d (reserved counted as used)", d3.MemoryUsed, mem.Used)
			}
			if d3.MemoryReserved != nil {
				t.Errorf("GPU 3 memory reserved = %d; want N/A (v1 memory does not report it)", *d3.MemoryReserved)
			}
			// Field 82 (memory temperature) is older than both drivers.
			if d := doc.Devices[2]; d.Temperature == nil || d.MemoryTemperature == nil || *d.MemoryTemperature != *d.Temperature+3 {
				t.Errorf("GPU 2 memory temperature %v with temperature %v; want the fake's HBM, 3 above the core", d.MemoryTemperature, d.Temperature)
			}
			if driver == "r418" && len(doc.Devices[0].MIGDevices) != 0 {
				t.Errorf("R418 has no MIG functions, yet MIG devices are shown: %v", doc.Devices[0].MIGDevices)
			}
			if driver == "r470" && len(doc.Devices[0].MIGDevices) != 3 {
				t.Errorf("R470 has MIG: %d MIG devices shown; want 3", len(doc.Devices[0].MIGDevices))
			}
			if calls := door.CallCounts(t); calls.Calls["nvmlDeviceGetMemoryInfo"] == 0 {
				t.Errorf("no v1 memory call on %s: %v", driver, calls.Calls)
			}
		})
	}
}

// TestInitFailuresThroughTheDriverLibrary makes nvmlInit fail as drivers
// do: nvgo-status exits 1 with one line, whatever the cause.
func TestInitFailuresThroughTheDriverLibrary(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	door := nvgotest.Serve(t, fleet, "current")
	for _, code := range []string{"DRIVER_NOT_LOADED", "NO_PERMISSION", "LIB_RM_VERSION_MISMATCH", "LIBRARY_NOT_FOUND", "UNKNOWN"} {
		t.Run(code, func(t *testing.T) {
			exit, stdout, stderr := runDoor(t, door, []string{fakegpu.EnvInitError + "=" + code})
			if exit != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", exit, stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "nvgo-status: ") {
				t.Errorf("stderr is not one line of nvgo-status's:\n%s", stderr)
			}
		})
	}
	t.Run("a state file that is not one", func(t *testing.T) {
		bad := writeScenario(t, `{"gpus": [{"gpu_util": 101}]}`)
		exit, _, stderr := runDoor(t, door, []string{fakegpu.EnvFleet + "=" + bad, fakegpu.EnvHelper + "=/nonexistent/helper"})
		if exit != 1 {
			t.Errorf("exit %d; want 1", exit)
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "/nonexistent/helper") || !strings.HasPrefix(lines[1], "nvgo-status: ") {
			t.Errorf("want the library's line and nvgo-status's:\n%s", stderr)
		}
	})
}
