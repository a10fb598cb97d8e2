//go:build cgo

// The tests run the command through run(), as a user would run the binary,
// on fake fleets (--simulate needs cgo). They set COLUMNS and NO_COLOR
// themselves, so they do not run in parallel.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/internal/testenv"
)

func TestParseArgsReadsNvitopStyleFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		noColor string // NO_COLOR
		want    *options
		wantErr string // a part of the error; "" for none
	}{
		{name: "no flags give the defaults", args: nil, want: &options{}},
		{name: "--only takes several indices", args: []string{"--only", "0", "1"}, want: &options{only: []int{0, 1}}},
		{name: "--only=0,2 takes a comma list", args: []string{"--only=0,2"}, want: &options{only: []int{0, 2}}},
		{name: "-o is --only", args: []string{"-o", "3"}, want: &options{only: []int{3}}},
		{name: "--only with nothing is an error", args: []string{"--only"}, wantErr: "needs at least one GPU index"},
		{name: "--only followed by a flag is an error", args: []string{"--only", "--json"}, wantErr: "needs at least one GPU index"},
		{name: "--only x is an error", args: []string{"--only", "x"}, wantErr: `"x" is not a non-negative integer`},
		{name: "--only -1 names the negative index", args: []string{"--only", "-1"}, wantErr: `--only: "-1" is not a non-negative integer`},
		{name: "--only 0 -1 names the negative index after a good one", args: []string{"--only", "0", "-1"}, wantErr: `--only: "-1" is not a non-negative integer`},
		{name: "-o -.5 names the value", args: []string{"-o", "-.5"}, wantErr: `-o: "-.5" is not a non-negative integer`},
		{name: "--only followed by a short flag is a missing index", args: []string{"--only", "-c"}, wantErr: "--only needs at least one GPU index"},
		{name: "--only 0 --only 1 selects both", args: []string{"--only", "0", "--only", "1"}, want: &options{only: []int{0, 1}}},
		{name: "repeated --only keeps the first order and drops duplicates", args: []string{"--only", "2", "0", "-o", "0", "--only=1,2"}, want: &options{only: []int{2, 0, 1}}},
		{name: "--user alone means the current user", args: []string{"--user"}, want: &options{userSet: true}},
		{name: "--user before a flag means the current user", args: []string{"--user", "--compute"}, want: &options{userSet: true, compute: true}},
		{name: "--user takes a name", args: []string{"--user", "alice"}, want: &options{userSet: true, user: "alice"}},
		{name: "--user=bob takes a name", args: []string{"--user=bob"}, want: &options{userSet: true, user: "bob"}},
		{name: "--pid takes several PIDs and stops at the next flag", args: []string{"--pid", "1", "2", "--compute"}, want: &options{pids: []int{1, 2}, compute: true}},
		{name: "--pid with nothing is an error", args: []string{"--pid"}, wantErr: "needs at least one PID"},
		{name: "--pid -5 names the negative PID", args: []string{"--pid", "-5"}, wantErr: `--pid: "-5" is not a non-negative integer`},
		{name: "--pid 7 --pid 8 7 selects both once", args: []string{"--pid", "7", "--pid", "8", "7"}, want: &options{pids: []int{7, 8}}},
		{name: "--user -1 takes -1 as the name", args: []string{"--user", "-1"}, want: &options{userSet: true, user: "-1"}},
		{name: "--fields -1 names the value", args: []string{"--json", "--fields", "-1"}, wantErr: `unknown field group "-1"`},
		{name: "--graphics keeps graphics processes", args: []string{"--graphics"}, want: &options{graphics: true}},
		{name: "--ascii --no-color --json set their switches", args: []string{"--ascii", "--no-color", "--json"}, want: &options{ascii: true, noColor: true, json: true}},
		{name: "--simulate takes a preset", args: []string{"--simulate", "dgx-h100"}, want: &options{simulate: "dgx-h100"}},
		{name: "--simulate=FILE takes a file", args: []string{"--simulate=/tmp/fleet.json"}, want: &options{simulate: "/tmp/fleet.json"}},
		{name: "--simulate with nothing is an error", args: []string{"--simulate"}, wantErr: "--simulate needs a preset name or a scenario file"},
		{name: "--simulate= with nothing is an error", args: []string{"--simulate="}, wantErr: "--simulate needs a preset name or a scenario file"},
		{name: "--simulate followed by a flag is an error", args: []string{"--simulate", "--json"}, wantErr: "--simulate needs a preset name or a scenario file"},
		{name: "--simulate followed by a short flag is an error", args: []string{"--simulate", "-c"}, wantErr: "--simulate needs a preset name or a scenario file"},
		{name: "--simulate -1.json takes a file", args: []string{"--simulate", "-1.json"}, want: &options{simulate: "-1.json"}},
		{name: "an unknown flag is an error", args: []string{"--frobnicate"}, wantErr: `unknown argument "--frobnicate"`},
		{name: "a stray word is an error", args: []string{"gpu0"}, wantErr: `unknown argument "gpu0"`},
		{name: "--json=1 is an error because --json takes no value", args: []string{"--json=1"}, wantErr: "--json takes no value"},
		{name: "--compute=yes is an error because --compute takes no value", args: []string{"--compute=yes"}, wantErr: "--compute takes no value"},
		{name: "NO_COLOR turns colour off", noColor: "1", args: []string{"--ascii"}, want: &options{ascii: true, noColor: true}},
		{name: "an empty NO_COLOR leaves colour on", noColor: "", args: nil, want: &options{}},
		{name: "--only-visible sets its switch", args: []string{"--only-visible", "--json"}, want: &options{onlyVisible: true, json: true}},
		{name: "--only-visible=1 is an error because it takes no value", args: []string{"--only-visible=1"}, wantErr: "--only-visible takes no value"},
		{name: "--fields names what --json reads", args: []string{"--json", "--fields", "memory,power"}, want: &options{json: true, fields: nvgo.FieldMemory | nvgo.FieldPower}},
		{name: "--fields=status", args: []string{"--fields=status", "--json"}, want: &options{json: true, fields: nvgo.FieldsStatus}},
		{name: "--fields with an unknown group is an error", args: []string{"--json", "--fields", "memory,bogus"}, wantErr: `unknown field group "bogus"`},
		{name: "--fields with nothing is an error", args: []string{"--json", "--fields"}, wantErr: "--fields needs a list of field groups"},
		{name: "--fields= with nothing is an error", args: []string{"--json", "--fields="}, wantErr: "--fields needs a list of field groups"},
		{name: "--fields without --json is an error", args: []string{"--fields", "memory"}, wantErr: "--fields applies to --json only"},
		{name: "--only with --only-visible is an error", args: []string{"--only", "0", "--only-visible"}, wantErr: "--only and --only-visible cannot be used together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			got, err := parseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseArgs(%q) = %+v, %v; want an error containing %q", tt.args, got, err, tt.wantErr)
				}
				if errors.Is(err, errHelp) {
					t.Fatalf("parseArgs(%q) asks for help; want an error", tt.args)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseArgs(%q) = %+v; want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestParseArgsAsksForHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--json", "-h"}, {"--only", "0", "--help"}} {
		t.Run(strings.Join(args, " ")+" asks for help", func(t *testing.T) {
			if _, err := parseArgs(args); !errors.Is(err, errHelp) {
				t.Fatalf("parseArgs(%q) error = %v; want errHelp", args, err)
			}
		})
	}
}

// runStatus runs the command with args and returns its exit status and output.
func runStatus(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// plainTerminal makes the output independent of the environment the tests
// run in: COLUMNS=columns (unset when 0), and NO_COLOR unset.
func plainTerminal(t *testing.T, columns int) {
	t.Helper()
	cols := ""
	if columns > 0 {
		cols = strconv.Itoa(columns)
	}
	t.Setenv("COLUMNS", cols)
	t.Setenv("NO_COLOR", "")
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

// readmeScenario is the scenario file of the README.
const readmeScenario = `{"driver_version": "580.95.05", "cuda_driver_version": 13000,
 "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-2b5e1c3a-9f0d-4c6e-8a7b-1d2e3f405162",
           "bus_id": "00000000:17:00.0", "memory_total_mib": 81559, "memory_used_mib": 1024,
           "gpu_util": 37, "mem_util": 12, "temperature_c": 41, "power_mw": 72000,
           "power_limit_mw": 700000, "unsupported": ["fan_speed"], "lost": false,
           "processes": [{"pid": 4242, "type": "C", "used_memory_mib": 512, "sm_util": 30, "mem_util": 5}]}]}`

// jsonOutput is the part of the --json document the tests read.
type jsonOutput struct {
	DriverVersion string                       `json:"driver_version"`
	Devices       []map[string]json.RawMessage `json:"devices"`
}

type jsonProcess struct {
	PID  int    `json:"pid"`
	Type string `json:"type"`
}

func decodeJSON(t *testing.T, stdout string) jsonOutput {
	t.Helper()
	var doc jsonOutput
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	return doc
}

// indices returns the "index" of every device.
func (doc jsonOutput) indices(t *testing.T) []int {
	t.Helper()
	var out []int
	for _, d := range doc.Devices {
		var i int
		if err := json.Unmarshal(d["index"], &i); err != nil {
			t.Fatalf("index %s: %v", d["index"], err)
		}
		out = append(out, i)
	}
	return out
}

// pids returns the PIDs listed under device i.
func (doc jsonOutput) pids(t *testing.T, i int) []int {
	t.Helper()
	var ps []jsonProcess
	if err := json.Unmarshal(doc.Devices[i]["processes"], &ps); err != nil {
		t.Fatalf("devices[%d].processes %s: %v", i, doc.Devices[i]["processes"], err)
	}
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	return out
}

func TestJSONListsEveryGPUWithItsProcesses(t *testing.T) {
	plainTerminal(t, 0)
	code, stdout, stderr := runStatus(t, "--simulate", "dgx-h100", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	doc := decodeJSON(t, stdout)
	if doc.DriverVersion != "580.95.05" {
		t.Errorf("driver_version = %q; want 580.95.05", doc.DriverVersion)
	}
	if got := doc.indices(t); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("indices = %v; want the 8 GPUs in order", got)
	}
	uuids := map[string]bool{}
	for i, d := range doc.Devices {
		for _, key := range []string{"index", "uuid", "memory_total", "processes", "fan_speed"} {
			if _, ok := d[key]; !ok {
				t.Errorf("devices[%d] has no %q", i, key)
			}
		}
		var uuid string
		if err := json.Unmarshal(d["uuid"], &uuid); err != nil || !strings.HasPrefix(uuid, "GPU-") || uuids[uuid] {
			t.Errorf("devices[%d].uuid = %s; want a unique GPU-… string", i, d["uuid"])
		}
		uuids[uuid] = true
		var total uint64
		if err := json.Unmarshal(d["memory_total"], &total); err != nil || total < 80<<30 {
			t.Errorf("devices[%d].memory_total = %s; want a byte count of at least 80 GiB", i, d["memory_total"])
		}
		// N/A is null: an SXM board has no fan
		if got := string(d["fan_speed"]); got != "null" {
			t.Errorf("devices[%d].fan_speed = %s; want null", i, got)
		}
		wantProcs := 0
		if i <= 2 {
			wantProcs = 1
		}
		if got := doc.pids(t, i); len(got) != wantProcs {
			t.Errorf("devices[%d] has processes %v; want %d", i, got, wantProcs)
		}
	}
	// an idle GPU says so with an empty list, not by leaving the key out
	if got := string(doc.Devices[7]["processes"]); got != "[]" {
		t.Errorf("devices[7].processes = %s; want []", got)
	}
}

func TestJSONOfTheChosenGPUs(t *testing.T) {
	plainTerminal(t, 0)
	tests := []struct {
		name string
		args []string
		want []int
	}{
		{"--only 1 3 gives GPUs 1 and 3", []string{"--only", "1", "3"}, []int{1, 3}},
		{"--only=3,1 keeps the order asked", []string{"--only=3,1"}, []int{3, 1}},
		{"--only 1 1 gives GPU 1 once", []string{"--only", "1", "1"}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--simulate", "dgx-h100", "--json"}, tt.args...)
			code, stdout, stderr := runStatus(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
			}
			if got := decodeJSON(t, stdout).indices(t); !slices.Equal(got, tt.want) {
				t.Errorf("indices = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestProcessFiltersKeepOnlyWhatIsAskedFor(t *testing.T) {
	plainTerminal(t, 0)
	me, err := user.Current()
	if err != nil {
		t.Skipf("no current user: %v", err)
	}
	// a live process of ours, so that it has a user; the other PIDs are
	// above the kernel's PID limit, so they have none
	self := os.Getpid()
	scenario := writeScenario(t, `{"gpus": [{"processes": [
		{"pid": 4194390, "type": "C"}, {"pid": 4194391, "type": "G"},
		{"pid": 4194392, "type": "C+G"}, {"pid": `+strconv.Itoa(self)+`, "type": "C"}]}]}`)
	tests := []struct {
		name string
		args []string
		want []int
	}{
		{"no filter keeps every process", nil, []int{4194390, 4194391, 4194392, self}},
		{"--compute keeps C and C+G", []string{"--compute"}, []int{4194390, 4194392, self}},
		{"--graphics keeps G and C+G", []string{"--graphics"}, []int{4194391, 4194392}},
		{"--compute --graphics keeps C+G", []string{"--compute", "--graphics"}, []int{4194392}},
		{"--pid keeps the PIDs given", []string{"--pid", "4194391", strconv.Itoa(self)}, []int{4194391, self}},
		{"--user alone keeps the current user's", []string{"--user"}, []int{self}},
		{"--user NAME keeps NAME's", []string{"--user", me.Username}, []int{self}},
		{"--user of someone else keeps none", []string{"--user", "no-such-user-here"}, nil},
		{"--pid 999 keeps none", []string{"--pid", "999"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--simulate", scenario, "--json"}, tt.args...)
			code, stdout, stderr := runStatus(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
			}
			// NVML lists compute processes, then graphics ones
			got := decodeJSON(t, stdout).pids(t, 0)
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("pids = %v; want %v", got, tt.want)
			}
		})
	}
}

// boxLines returns the lines of out that belong to a table: those that start
// with a border.
func boxLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if first, _ := utf8.DecodeRuneInString(l); strings.ContainsRune("╒│├╞╘+|", first) {
			lines = append(lines, l)
		}
	}
	return lines
}

// checkTables fails unless every table line of out is width columns wide,
// as width measures them.
func checkTables(t *testing.T, out string, want int, width func(string) int) {
	t.Helper()
	lines := boxLines(out)
	if len(lines) < 10 {
		t.Fatalf("only %d table lines in:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if w := width(l); w != want {
			t.Errorf("a table line is %d columns wide, want %d:\n%s", w, want, l)
		}
	}
}

func TestTheTableHasStraightBorders(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		columns int
		width   int
		bars    bool
	}{
		{"without COLUMNS it fits 80 columns", nil, 0, 79, false},
		{"at COLUMNS=40 it keeps its narrowest form", nil, 40, 79, false},
		{"at COLUMNS=121 there is no room for bars", nil, 121, 79, false},
		{"at COLUMNS=122 the bars fit exactly", nil, 122, 122, true},
		{"at COLUMNS=140 it has bars", nil, 140, 122, true},
		{"--ascii at COLUMNS=140 has ASCII bars", []string{"--ascii"}, 140, 122, true},
		{"--only 0 at COLUMNS=200", []string{"--only", "0"}, 200, 122, true},
	}
	for _, preset := range []string{"dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "dgx-a100-mig", "dgx-h100-mig", "vgpu-h100"} {
		for _, tt := range tests {
			t.Run(preset+" "+tt.name, func(t *testing.T) {
				plainTerminal(t, tt.columns)
				code, stdout, stderr := runStatus(t, append([]string{"--simulate", preset}, tt.args...)...)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
				}
				checkTables(t, stdout, tt.width, utf8.RuneCountInString)
				if got := strings.Contains(stdout, "UTL:"); got != tt.bars {
					t.Errorf("bars shown = %v; want %v:\n%s", got, tt.bars, stdout)
				}
				for _, l := range strings.Split(stdout, "\n") {
					if tt.columns >= 79 && utf8.RuneCountInString(l) > tt.columns {
						t.Errorf("a line is wider than COLUMNS=%d:\n%s", tt.columns, l)
					}
				}
				if strings.Contains(stdout, "\x1b") {
					t.Error("output to a non-terminal has escape sequences")
				}
			})
		}
	}
}

func TestTheTableShowsWhatAUserExpects(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     []string
		dontWant []string
	}{
		{
			name:     "the default view shows short names and the driver version",
			args:     []string{"--simulate", "dgx-h100"},
			want:     []string{"H100 80GB HBM3", "Driver Version: 580.95.05", "CUDA Driver Version: 13.0", "00000000:18:00.0", "Processes:", "4194401", "[ CPU: "},
			dontWant: []string{"NVIDIA H100", "No running processes found"},
		},
		{
			name: "--ascii uses ASCII borders",
			args: []string{"--simulate", "dgx-h100", "--ascii"},
			want: []string{"Processes:", "+=====", "|   0  H100 80GB HBM3"},
		},
		{
			name: "--pid of no GPU process finds none",
			args: []string{"--simulate", "dgx-h100", "--pid", "999"},
			want: []string{"No running processes found"},
		},
		{
			name: "--only shows only the GPUs asked for",
			args: []string{"--simulate", "dgx-h100", "--only", "2"},
			want: []string{"00000000:3A:00.0", "4194403"},
			// GPU 0's bus ID and process
			dontWant: []string{"00000000:18:00.0", "4194401"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainTerminal(t, 0)
			code, stdout, stderr := runStatus(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			for _, s := range tt.want {
				if !strings.Contains(stdout, s) {
					t.Errorf("output lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.dontWant {
				if strings.Contains(stdout, s) {
					t.Errorf("output has %q:\n%s", s, stdout)
				}
			}
		})
	}
}

func TestASCIIOutputIsPureASCII(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"dgx-h100", []string{"--simulate", "dgx-h100"}},
		{"dgx-h100-mig with its MIG rows", []string{"--simulate", "dgx-h100-mig"}},
		{"vgpu-h100 with its vGPU rows and guest processes", []string{"--simulate", "vgpu-h100"}},
		{"--only-visible with its cuda labels", []string{"--simulate", "dgx-h100", "--only-visible"}},
	}
	for _, tt := range tests {
		for _, columns := range []int{0, 140} {
			t.Run(tt.name+" at COLUMNS="+strconv.Itoa(columns), func(t *testing.T) {
				plainTerminal(t, columns)
				setCUDAEnv(t, "3,1", "")
				code, stdout, stderr := runStatus(t, append(tt.args, "--ascii")...)
				if code != 0 {
					t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
				}
				for i := 0; i < len(stdout); i++ {
					if stdout[i] >= 0x80 {
						line := stdout[strings.LastIndexByte(stdout[:i], '\n')+1:]
						line, _, _ = strings.Cut(line, "\n")
						t.Fatalf("byte %#x at offset %d is not ASCII, in:\n%s", stdout[i], i, line)
					}
				}
				if !strings.Contains(stdout, "Processes:") {
					t.Errorf("output lacks Processes:\n%s", stdout)
				}
			})
		}
	}
}

func TestAScenarioFileIsRendered(t *testing.T) {
	plainTerminal(t, 0)
	path := writeScenario(t, readmeScenario)
	code, stdout, stderr := runStatus(t, "--simulate", path)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	for _, s := range []string{"H100 80GB HBM3", "00000000:17:00.0", "41C", "72W / 700W", "37%", "4242", "580.95.05"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	checkTables(t, stdout, 79, utf8.RuneCountInString)

	code, stdout, _ = runStatus(t, "--simulate", path, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d; want 0", code)
	}
	doc := decodeJSON(t, stdout)
	if len(doc.Devices) != 1 || string(doc.Devices[0]["fan_speed"]) != "null" || string(doc.Devices[0]["temperature"]) != "41" {
		t.Errorf("devices = %v; want one GPU at 41C with fan_speed null", doc.Devices)
	}
}

func TestUnreadableGPUsStillLineUp(t *testing.T) {
	plainTerminal(t, 140)
	path := writeScenario(t, `{"gpus": [
		{"name": "NVIDIA GeForce RTX 4090 With A Name Too Long For Its Column", "fan_speed": 100,
		 "power_mw": 1000000, "power_limit_mw": 1000000, "ecc_errors": 18446744073709551615,
		 "compute_mode": "Exclusive_Process", "pstate": 15, "gpu_util": 100, "mem_util": 100},
		{"lost": true},
		{"mig_mode": 1},
		{"unsupported": ["temperature", "power", "memory", "utilization", "name", "pci_info"],
		 "errors": {"processes": "NO_PERMISSION"}}]}`)
	code, stdout, stderr := runStatus(t, "--simulate", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
	}
	for _, s := range []string{"RTX 4090 With A N…", "ERROR: GPU lost", "processes: GPU lost", "processes: no permission"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	checkTables(t, stdout, 122, utf8.RuneCountInString)

	code, stdout, _ = runStatus(t, "--simulate", path, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d; want 0", code)
	}
	doc := decodeJSON(t, stdout)
	if _, ok := doc.Devices[1]["error"]; !ok || string(doc.Devices[1]["processes"]) != "null" {
		t.Errorf("the lost GPU has error %s and processes %s; want an error and null",
			doc.Devices[1]["error"], doc.Devices[1]["processes"])
	}
}

// wideWidth counts the CJK ideographs and kana of the test as two columns.
func wideWidth(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x3000 && r <= 0x9fff {
			n++
		}
	}
	return n
}

func TestACommandLineCannotBreakTheTable(t *testing.T) {
	sleep := testenv.Program(t, "sleep")
	// a process whose command line has a tab, wide characters and an
	// escape sequence that would turn the terminal red
	cmd := exec.Command(sleep, "60")
	cmd.Args[0] = "py\tthon 日本語テスト\x1b[31mred"
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	path := writeScenario(t, `{"gpus": [{"processes": [{"pid": `+strconv.Itoa(cmd.Process.Pid)+`}]}]}`)
	for _, columns := range []int{0, 140} {
		t.Run("at COLUMNS="+strconv.Itoa(columns), func(t *testing.T) {
			plainTerminal(t, columns)
			code, stdout, stderr := runStatus(t, "--simulate", path)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
			}
			if strings.ContainsAny(stdout, "\x1b\t") {
				t.Errorf("the command's control characters reach the terminal:\n%q", stdout)
			}
			want, shown := 79, `"py\tthon … │` // 日 would cross the border
			if columns == 140 {
				want, shown = 122, `"py\tthon 日本語テスト\x1b[31mred" 60`
			}
			if !strings.Contains(stdout, shown) {
				t.Errorf("the command is not shown as %s:\n%s", shown, stdout)
			}
			checkTables(t, stdout, want, wideWidth)
		})
	}
}

func TestFitPutsTextIntoDisplayColumns(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		width    int
		right    bool
		ellipsis string
		want     string
	}{
		{"short text is padded on the right", "ab", 5, false, "", "ab   "},
		{"right-aligned text is padded on the left", "ab", 5, true, "", "   ab"},
		{"text of the exact width is kept", "abcde", 5, false, "", "abcde"},
		{"long text ends in an ellipsis", "abcdefgh", 5, false, "", "abcd…"},
		{"long right-aligned text ends in an ellipsis", "abcdefgh", 5, true, "", "abcd…"},
		{"an ASCII ellipsis is three dots", "abcdefgh", 5, false, "...", "ab..."},
		{"an ellipsis wider than the column is left out", "abcdefgh", 2, false, "...", "ab"},
		{"wide characters take two columns", "日本", 5, false, "", "日本 "},
		{"a wide character that would cross the edge is dropped", "日本語", 4, false, "", "日… "},
		{"combining marks take no column", "e\u0301e\u0301", 3, false, "", "e\u0301e\u0301 "},
		{"a tab is shown escaped", "a\tb", 5, false, "", `a\tb `},
		{"an escape sequence is shown escaped", "\x1b[31m", 8, false, "", `\x1b[31m`},
		{"a bidirectional override is shown escaped", "a\u202eb", 8, false, "", `a\u202eb`},
		{"invalid UTF-8 is shown escaped", "a\xffb", 8, false, "", `a\ufffdb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ellipsis := tt.ellipsis
			if ellipsis == "" {
				ellipsis = "…"
			}
			if got := tool.Fit(tt.s, tt.width, tt.right, ellipsis); got != tt.want {
				t.Errorf("Fit(%q, %d, %v, %q) = %q; want %q", tt.s, tt.width, tt.right, ellipsis, got, tt.want)
			}
		})
	}
}

func TestErrorsExitWithOneLineOnStderr(t *testing.T) {
	plainTerminal(t, 0)
	malformed := writeScenario(t, `{"gpus":[{"gpu_util": "x"}]}`)
	noInit := writeScenario(t, `{"init_error": "DRIVER_NOT_LOADED"}`)
	tests := []struct {
		name      string
		args      []string
		code      int
		stderrHas []string
		lines     int // lines on stderr
	}{
		{"--only of a missing GPU exits 2", []string{"--simulate", "dgx-h100", "--only", "9"}, 2, []string{"--only 9: no such GPU (there are 8)"}, 1},
		{"a missing scenario file exits 1", []string{"--simulate", "/nonexistent.json"}, 1, []string{"/nonexistent.json", "not a preset"}, 1},
		{"a malformed scenario exits 1 and names the key", []string{"--simulate", malformed}, 1, []string{"gpus[0].gpu_util", malformed}, 1},
		{"a driver that does not load exits 1", []string{"--simulate", noInit}, 1, []string{"no usable NVIDIA driver"}, 1},
		{"an unknown flag exits 2", []string{"--simulate", "dgx-h100", "--frobnicate"}, 2, []string{`unknown argument "--frobnicate"`, "nvgo-status --help"}, 2},
		{"--simulate followed by a flag exits 2", []string{"--simulate", "--json"}, 2, []string{"--simulate needs"}, 2},
		{"--json=1 exits 2", []string{"--json=1"}, 2, []string{"--json takes no value"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runStatus(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d; want %d (stderr %q)", code, tt.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q; want nothing", stdout)
			}
			if n := strings.Count(stderr, "\n"); n != tt.lines || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr has %d lines; want %d:\n%s", n, tt.lines, stderr)
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

func TestHelpGoesToStdoutAndExits0(t *testing.T) {
	code, stdout, stderr := runStatus(t, "--help")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: nvgo-status") || !strings.Contains(stdout, "--simulate") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", code, stdout, stderr)
	}
}

func TestWithoutADriverItSaysSoInOneLine(t *testing.T) {
	for _, lib := range []string{
		"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
		"/usr/lib64/libnvidia-ml.so.1",
		"/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
	} {
		if _, err := os.Stat(lib); err == nil {
			t.Skipf("%s exists: this machine may have a driver", lib)
		}
	}
	plainTerminal(t, 0)
	code, stdout, stderr := runStatus(t)
	if code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	if stdout != "" {
		t.Errorf("stdout = %q; want nothing", stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not one line:\n%s", stderr)
	}
	if !strings.Contains(stderr, "driver") || !strings.Contains(stderr, "--simulate") {
		t.Errorf("stderr = %q; want it to mention the driver and --simulate", stderr)
	}
	for _, s := range []string{"panic", "goroutine", ".go:"} {
		if strings.Contains(stderr, s) {
			t.Errorf("stderr has %q, like a crash:\n%s", s, stderr)
		}
	}
}

// unsetEnv as a value to setCUDAEnv leaves the variable unset.
const unsetEnv = "<unset>"

// setCUDAEnv sets CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER for the test
// (unset with unsetEnv); t.Setenv puts them back afterwards.
func setCUDAEnv(t *testing.T, visible, order string) {
	t.Helper()
	for k, v := range map[string]string{"CUDA_VISIBLE_DEVICES": visible, "CUDA_DEVICE_ORDER": order} {
		if v != unsetEnv {
			t.Setenv(k, v)
			continue
		}
		t.Setenv(k, "") // to have it restored
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
}

// migUUID returns the UUID of MIG device slot of GPU gpu of a preset.
func migUUID(t *testing.T, preset string, gpu, slot int) string {
	t.Helper()
	fleet, err := fakegpu.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	m := fleet.GPU(gpu).MIGDevice(slot)
	if m == nil {
		t.Fatalf("%s has no MIG device %d on GPU %d", preset, slot, gpu)
	}
	return m.UUID()
}

// processLine returns the line of the process table that lists pid, split
// into its columns, or nil.
func processLine(stdout string, pid int) []string {
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(strings.Trim(l, "│| "))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			return f
		}
	}
	return nil
}

// migPID is the process on MIG device 0 of GPU 0 of the "-mig" presets.
const migPID = 4194404

func TestMIGDevicesAreShownUnderTheirGPU(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		columns int
		want    []string
	}{
		{
			name: "dgx-h100-mig shows a row per MIG device and says GPU 1 has none",
			args: []string{"--simulate", "dgx-h100-mig"},
			want: []string{"│ 0:0  MIG 3g.40gb  GI 2 CI 0", "│ 0:1  MIG 2g.20gb  GI 3 CI 0", "│ 0:3  MIG 1g.10gb  GI 9 CI 0",
				"12288MiB / 39.50GiB", "MIG-3f1b6608-8661-7…", "│   1  No MIG devices", "├╌╌╌"},
		},
		{
			name: "dgx-a100-mig shows its own profiles",
			args: []string{"--simulate", "dgx-a100-mig"},
			want: []string{"│ 0:0  MIG 3g.40gb", "│ 0:3  MIG 1g.10gb", "│   1  No MIG devices"},
		},
		{
			name:    "with bars a MIG device has a memory bar",
			args:    []string{"--simulate", "dgx-h100-mig"},
			columns: 140,
			want:    []string{"MIG-3f1b6608-8661-7… │ MEM: ████████▊ ", "30.4% │"},
		},
		{
			name: "--ascii draws MIG rows in ASCII",
			args: []string{"--simulate", "dgx-h100-mig", "--ascii"},
			want: []string{"| 0:0  MIG 3g.40gb  GI 2 CI 0", "MIG-3f1b6608-8661...", "+-----"},
		},
		{
			name: "--only 0 shows GPU 0 with its MIG devices",
			args: []string{"--simulate", "dgx-h100-mig", "--only", "0"},
			want: []string{"│ 0:0  MIG 3g.40gb", "│ 0:3  MIG 1g.10gb"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainTerminal(t, tt.columns)
			code, stdout, stderr := runStatus(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			for _, s := range tt.want {
				if !strings.Contains(stdout, s) {
					t.Errorf("output lacks %q:\n%s", s, stdout)
				}
			}
			// the process on MIG 0 is listed as GPU 0:0, with no SM figure
			f := processLine(stdout, migPID)
			if len(f) < 6 || f[0] != "0:0" || f[5] != "N/A" {
				t.Errorf("the MIG process line is %q; want GPU 0:0 and %%SM N/A:\n%s", f, stdout)
			}
		})
	}
}

func TestJSONListsMIGDevicesWithTheirProcesses(t *testing.T) {
	plainTerminal(t, 0)
	for _, args := range [][]string{{"--simulate", "dgx-h100-mig", "--json"}, {"--simulate", "dgx-h100-mig", "--json", "--only", "0"}} {
		t.Run(strings.Join(args[2:], " ")+" lists MIG devices 0, 1 and 3 under GPU 0", func(t *testing.T) {
			code, stdout, stderr := runStatus(t, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			doc := decodeJSON(t, stdout)
			var migs []map[string]json.RawMessage
			if err := json.Unmarshal(doc.Devices[0]["mig_devices"], &migs); err != nil {
				t.Fatalf("devices[0].mig_devices %s: %v", doc.Devices[0]["mig_devices"], err)
			}
			sub := jsonOutput{Devices: migs}
			var slots []int
			for i, m := range migs {
				var slot int
				if err := json.Unmarshal(m["mig_index"], &slot); err != nil {
					t.Fatalf("mig_devices[%d].mig_index %s: %v", i, m["mig_index"], err)
				}
				slots = append(slots, slot)
				if _, ok := m["cuda_index"]; ok {
					t.Errorf("mig_devices[%d] has a cuda_index without --only-visible", i)
				}
			}
			if !slices.Equal(slots, []int{0, 1, 3}) || !slices.Equal(sub.indices(t), []int{0, 0, 0}) {
				t.Fatalf("mig_index %v, index %v; want MIG 0, 1, 3 of GPU 0", slots, sub.indices(t))
			}
			if got := sub.pids(t, 0); !slices.Equal(got, []int{migPID}) {
				t.Errorf("MIG 0 has processes %v; want [%d]", got, migPID)
			}
			var procs []map[string]json.RawMessage
			if err := json.Unmarshal(migs[0]["processes"], &procs); err != nil || len(procs) != 1 {
				t.Fatalf("mig_devices[0].processes %s: %v", migs[0]["processes"], err)
			}
			if got := string(procs[0]["gpu_sm_utilization"]); got != "null" {
				t.Errorf("the MIG process's gpu_sm_utilization = %s; want null (N/A)", got)
			}
			// an idle MIG device says so with [], as an idle GPU does
			for _, i := range []int{1, 2} {
				if got := string(migs[i]["processes"]); got != "[]" {
					t.Errorf("mig_devices[%d].processes = %s; want []", i, got)
				}
			}
		})
	}
}

// visibleDevice is what the --only-visible tests read of a device.
type visibleDevice struct {
	CUDAIndex *int   `json:"cuda_index"`
	Index     int    `json:"index"`
	MIGIndex  *int   `json:"mig_index"`
	UUID      string `json:"uuid"`
}

func (d visibleDevice) String() string {
	s := "cuda:"
	if d.CUDAIndex == nil {
		s += "none"
	} else {
		s += strconv.Itoa(*d.CUDAIndex)
	}
	s += " GPU " + strconv.Itoa(d.Index)
	if d.MIGIndex != nil {
		s += ":" + strconv.Itoa(*d.MIGIndex)
	}
	return s
}

func TestOnlyVisibleListsTheDevicesCUDASeesInCUDAOrder(t *testing.T) {
	migZero := migUUID(t, "dgx-h100-mig", 0, 0)
	migThree := migUUID(t, "dgx-h100-mig", 0, 3)
	tests := []struct {
		name    string
		preset  string
		visible string // CUDA_VISIBLE_DEVICES
		order   string // CUDA_DEVICE_ORDER
		want    []string
		text    []string // in the table, in this order
	}{
		{
			name: "3,1 lists GPU 3 then GPU 1", preset: "dgx-h100", visible: "3,1",
			want: []string{"cuda:0 GPU 3", "cuda:1 GPU 1"},
			text: []string{"│ cuda:0 → GPU 3", "│   3  H100", "│ cuda:1 → GPU 1", "│   1  H100"},
		},
		{
			name: "unset lists every GPU", preset: "dgx-h100", visible: unsetEnv, order: "PCI_BUS_ID",
			want: []string{"cuda:0 GPU 0", "cuda:1 GPU 1", "cuda:2 GPU 2", "cuda:3 GPU 3", "cuda:4 GPU 4", "cuda:5 GPU 5", "cuda:6 GPU 6", "cuda:7 GPU 7"},
			text: []string{"│ cuda:0 → GPU 0", "│ cuda:7 → GPU 7"},
		},
		{
			name: "a MIG UUID lists that MIG device", preset: "dgx-h100-mig", visible: migZero,
			want: []string{"cuda:0 GPU 0:0"},
			text: []string{"│ cuda:0 → MIG 0:0", "│ 0:0  MIG 3g.40gb  GI 2 CI 0"},
		},
		{
			name: "MIG devices and a whole GPU by UUID keep their order", preset: "dgx-h100-mig",
			visible: migThree + ",GPU-57a2c439," + migZero,
			want:    []string{"cuda:0 GPU 0:3", "cuda:1 GPU 2", "cuda:2 GPU 0:0"},
			text:    []string{"│ cuda:0 → MIG 0:3", "│ cuda:1 → GPU 2", "│   2  H100", "│ cuda:2 → MIG 0:0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainTerminal(t, 0)
			setCUDAEnv(t, tt.visible, tt.order)
			code, stdout, stderr := runStatus(t, "--simulate", tt.preset, "--only-visible", "--json")
			if code != 0 || stderr != "" {
				t.Fatalf("--json: exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			var doc struct{ Devices []visibleDevice }
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			var got []string
			for _, d := range doc.Devices {
				got = append(got, d.String())
				if d.UUID == "" {
					t.Errorf("%s has no uuid", d)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("--json lists %q; want %q", got, tt.want)
			}
			if len(doc.Devices) > 0 && tt.visible == migZero && doc.Devices[0].UUID != migZero {
				t.Errorf("uuid = %q; want %q", doc.Devices[0].UUID, migZero)
			}

			code, stdout, stderr = runStatus(t, "--simulate", tt.preset, "--only-visible")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			rest := stdout
			for _, s := range tt.text {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Fatalf("output lacks %q after the previous rows:\n%s", s, stdout)
				}
				rest = rest[i+len(s):]
			}
			checkTables(t, stdout, 79, utf8.RuneCountInString)
		})
	}
}

func TestOnlyVisibleWithNoDeviceSaysSo(t *testing.T) {
	plainTerminal(t, 0)
	setCUDAEnv(t, "", "")
	code, stdout, stderr := runStatus(t, "--simulate", "dgx-h100-mig", "--only-visible")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, "No device is visible to CUDA") || !strings.Contains(stdout, `CUDA_VISIBLE_DEVICES=""`) {
		t.Errorf("stdout = %q; want one line saying CUDA sees no device", stdout)
	}

	code, stdout, stderr = runStatus(t, "--simulate", "dgx-h100-mig", "--only-visible", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("--json: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	doc := decodeJSON(t, stdout)
	if doc.Devices == nil || len(doc.Devices) != 0 || doc.DriverVersion != "580.95.05" || !strings.Contains(stdout, `"devices": []`) {
		t.Errorf("--json = %s; want the versions and \"devices\": []", stdout)
	}
}

func TestOnlyVisibleErrorsExitWithOneLine(t *testing.T) {
	plainTerminal(t, 0)
	lost := writeScenario(t, lostGPU7)
	tests := []struct {
		name      string
		args      []string
		visible   string
		code      int
		stderrHas []string
		lines     int
	}{
		{
			name: "unset on an R580 driver with MIG devices and whole GPUs exits 3", visible: unsetEnv,
			args: []string{"--simulate", "dgx-h100-mig", "--only-visible"}, code: 3, lines: 1,
			stderrHas: []string{"nvgo-status: --only-visible: ", "cannot be determined", "by UUID in CUDA_VISIBLE_DEVICES"},
		},
		{
			name: "indices while a GPU has MIG on exit 3, with --json too", visible: "0,2",
			args: []string{"--simulate", "dgx-h100-mig", "--only-visible", "--json"}, code: 3, lines: 1,
			stderrHas: []string{"nvgo-status: --only-visible: ", "MIG on", "cannot be determined"},
		},
		{
			// Eight H100s: the lost GPU is what is unknown, not the models.
			name: "a lost GPU is named, not blamed on models", visible: unsetEnv,
			args: []string{"--simulate", lost, "--only-visible"}, code: 3, lines: 1,
			stderrHas: []string{"nvgo-status: --only-visible: ", "GPU 7 fell off the bus", "cannot be determined"},
		},
		{
			name: "--only with --only-visible exits 2", visible: "0",
			args: []string{"--simulate", "dgx-h100", "--only", "0", "--only-visible"}, code: 2, lines: 2,
			stderrHas: []string{"--only and --only-visible cannot be used together", "nvgo-status --help"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setCUDAEnv(t, tt.visible, "")
			code, stdout, stderr := runStatus(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d; want %d (stderr %q)", code, tt.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q; want nothing", stdout)
			}
			if n := strings.Count(stderr, "\n"); n != tt.lines || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr has %d lines; want %d:\n%s", n, tt.lines, stderr)
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

func TestJSONHasCUDAIndexOnlyWithOnlyVisible(t *testing.T) {
	plainTerminal(t, 0)
	setCUDAEnv(t, "3,1", "")
	code, stdout, stderr := runStatus(t, "--simulate", "dgx-h100", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q; want 0", code, stderr)
	}
	for i, d := range decodeJSON(t, stdout).Devices {
		if _, ok := d["cuda_index"]; ok {
			t.Errorf("devices[%d] has a cuda_index without --only-visible", i)
		}
		if v, ok := d["mig_index"]; !ok || string(v) != "null" {
			t.Errorf("devices[%d], a whole GPU, has mig_index %s; want null (N/A)", i, v)
		}
	}
}

// vgpuIDs returns the IDs of the vGPU instances of GPU gpu of a preset, in
// creation order (the order NVML lists them in).
func vgpuIDs(t *testing.T, preset string, gpu int) []string {
	t.Helper()
	fleet, err := fakegpu.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range fleet.GPU(gpu).Vgpus() {
		ids = append(ids, strconv.FormatUint(uint64(v.ID()), 10))
	}
	return ids
}

// inOrder fails unless each of want is in out after the one before.
func inOrder(t *testing.T, out string, want []string) {
	t.Helper()
	rest := out
	for _, s := range want {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("output lacks %q after the previous rows:\n%s", s, out)
		}
		rest = rest[i+len(s):]
	}
}

func TestVGPUInstancesAreShownUnderTheirGPU(t *testing.T) {
	g0, g1 := vgpuIDs(t, "vgpu-h100", 0), vgpuIDs(t, "vgpu-h100", 1)
	if len(g0) != 4 || len(g1) != 2 {
		t.Fatalf("vgpu-h100 has %d and %d instances on GPUs 0 and 1; want 4 and 2", len(g0), len(g1))
	}
	noneOn := func(gpus ...int) []string {
		var out []string
		for _, g := range gpus {
			out = append(out, "│   "+strconv.Itoa(g)+"  H100 80GB HBM3", "├╌╌╌", "│   "+strconv.Itoa(g)+"  No vGPU instances")
		}
		return out
	}
	tests := []struct {
		name     string
		args     []string
		columns  int
		want     []string // in this order
		dontWant []string
	}{
		{
			name: "each GPU lists its instances, licences, utilization and guest processes",
			args: []string{"--simulate", "vgpu-h100"},
			want: append([]string{
				"│   0  H100 80GB HBM3", "├╌╌╌",
				"│   0  vGPU " + g0[0] + " H100-20C", "│ VM ", "│ SM    40%  FB    25% │",
				"│      licensed till 2027-06-30 │", "12288MiB / 20.00GiB", "│ ENC    0%  DEC    0% │",
				"│      ├─ guest 2817", "│ python3", "│ SM    28%  MEM   18% │",
				"│      └─ guest 2854", "│ python3", "│ SM    12%  MEM    7% │",
				"│   0  vGPU " + g0[1] + " H100-20C", "│ SM    35%  FB    20% │",
				"│      licensed (permanent) ", "16384MiB / 20.00GiB",
				"│      └─ guest 1733", "│ tritonserver",
				"│   0  vGPU " + g0[2] + " H100-20C", "│ SM     0%  FB     0% │", "│      licensed (permanent) ",
				"│   0  vGPU " + g0[3] + " H100-20C", "│      unlicensed   ", "256.0MiB / 20.00GiB",
				"│   1  H100 80GB HBM3", "├╌╌╌",
				"│   1  vGPU " + g1[0] + " H100-40C", "│ SM    60%  FB    40% │", "└─ guest 4120",
				"│   1  vGPU " + g1[1] + " H100-40C", "│ SM    25%  FB    10% │", "└─ guest 991",
			}, noneOn(2, 3, 4, 5, 6, 7)...),
			// guest PIDs are not host PIDs: none in the process table
			dontWant: []string{"No running processes found"},
		},
		{
			name:    "with bars an instance has a utilization and a framebuffer bar",
			args:    []string{"--simulate", "vgpu-h100"},
			columns: 140,
			want: []string{
				"│   0  vGPU " + g0[0] + " H100-20C", "│ SM    40%  FB    25% │ UTL: ████████████▍ ", " 40% │",
				"│ ENC    0%  DEC    0% │ MEM: ██████████████████▌ ", " 60% │",
				"│      ├─ guest 2817", "│ SM    28%  MEM   18% │" + strings.Repeat(" ", colBars) + "│",
			},
		},
		{
			name: "--ascii draws vGPU rows and guest processes in ASCII",
			args: []string{"--simulate", "vgpu-h100", "--ascii"},
			want: []string{
				"|   0  H100 80GB HBM3", "+-------------------------------+",
				"|   0  vGPU " + g0[0] + " H100-20C", "VM ", "-...", "|      |- guest 2817", "|      `- guest 2854",
				"|   7  No vGPU instances",
			},
		},
		{
			name:     "--only 1 shows GPU 1 with its instances only",
			args:     []string{"--simulate", "vgpu-h100", "--only", "1"},
			want:     []string{"│   1  H100 80GB HBM3", "├╌╌╌", "│   1  vGPU " + g1[0] + " H100-40C", "│   1  vGPU " + g1[1] + " H100-40C"},
			dontWant: []string{"vGPU " + g0[0], "guest 2817", "No vGPU instances"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainTerminal(t, tt.columns)
			code, stdout, stderr := runStatus(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			inOrder(t, stdout, tt.want)
			for _, s := range tt.dontWant {
				if strings.Contains(stdout, s) {
					t.Errorf("output has %q:\n%s", s, stdout)
				}
			}
			for _, pid := range []int{2817, 2854, 1733, 4120, 991} {
				if f := processLine(stdout, pid); f != nil {
					t.Errorf("guest PID %d is in the host process table: %q", pid, f)
				}
			}
			if len(tt.args) == 2 && !strings.Contains(stdout, "No host processes found (guest processes are listed under their vGPU)") {
				t.Errorf("the process table does not say where the guest processes are:\n%s", stdout)
			}
		})
	}
}

// jsonVgpu is what the tests read of an instance in --json.
type jsonVgpu struct {
	ID            uint32   `json:"id"`
	UUID          string   `json:"uuid"`
	TypeName      string   `json:"type_name"`
	VMID          string   `json:"vm_id"`
	Licensed      *bool    `json:"licensed"`
	LicenseState  string   `json:"license_state"`
	LicenseExpiry *string  `json:"license_expiry"`
	SMUtilization *float64 `json:"sm_utilization"`
	FBUsed        *uint64  `json:"framebuffer_used"`
	Processes     []struct {
		PID           int     `json:"pid"`
		Name          string  `json:"name"`
		SMUtilization float64 `json:"sm_utilization"`
	} `json:"processes"`
}

func TestJSONListsVGPUInstancesUnderTheirGPU(t *testing.T) {
	plainTerminal(t, 0)
	fleet, err := fakegpu.Preset("vgpu-h100")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runStatus(t, "--simulate", "vgpu-h100", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	doc := decodeJSON(t, stdout)
	if len(doc.Devices) != 8 {
		t.Fatalf("%d devices; want 8", len(doc.Devices))
	}
	tests := []struct {
		gpu      int
		types    []string
		licensed []bool
		expiry   []string // "" for none (null)
		sm       []float64
		pids     [][]int // guest PIDs of each instance
	}{
		{
			gpu:      0,
			types:    []string{"NVIDIA H100-20C", "NVIDIA H100-20C", "NVIDIA H100-20C", "NVIDIA H100-20C"},
			licensed: []bool{true, true, true, false},
			expiry:   []string{"2027-06-30T23:59:59Z", "", "", ""},
			sm:       []float64{40, 35, 0, 0},
			pids:     [][]int{{2817, 2854}, {1733}, {}, {}},
		},
		{
			gpu:      1,
			types:    []string{"NVIDIA H100-40C", "NVIDIA H100-40C"},
			licensed: []bool{true, true},
			expiry:   []string{"", ""},
			sm:       []float64{60, 25},
			pids:     [][]int{{4120}, {991}},
		},
	}
	for _, tt := range tests {
		t.Run("GPU "+strconv.Itoa(tt.gpu), func(t *testing.T) {
			dev := doc.Devices[tt.gpu]
			var vs []jsonVgpu
			if err := json.Unmarshal(dev["vgpu_instances"], &vs); err != nil {
				t.Fatalf("devices[%d].vgpu_instances %s: %v", tt.gpu, dev["vgpu_instances"], err)
			}
			var raw []map[string]json.RawMessage
			if err := json.Unmarshal(dev["vgpu_instances"], &raw); err != nil {
				t.Fatal(err)
			}
			want := fleet.GPU(tt.gpu).Vgpus()
			if len(vs) != len(want) || len(vs) != len(tt.types) {
				t.Fatalf("%d instances; want %d", len(vs), len(tt.types))
			}
			for i, v := range vs {
				if v.ID != want[i].ID() || !strings.EqualFold(v.UUID, want[i].UUID()) || v.UUID == "" {
					t.Errorf("instance %d is id %d uuid %q; want %d %q", i, v.ID, v.UUID, want[i].ID(), want[i].UUID())
				}
				if v.TypeName != tt.types[i] || v.VMID == "" {
					t.Errorf("instance %d: type_name %q vm_id %q; want %q and a VM", i, v.TypeName, v.VMID, tt.types[i])
				}
				if v.Licensed == nil || *v.Licensed != tt.licensed[i] {
					t.Errorf("instance %d: licensed %s; want %v", i, raw[i]["licensed"], tt.licensed[i])
				}
				if wantState := map[bool]string{true: "licensed", false: "unlicensed"}[tt.licensed[i]]; v.LicenseState != wantState {
					t.Errorf("instance %d: license_state %q; want %q", i, v.LicenseState, wantState)
				}
				if got := string(raw[i]["license_expiry"]); (tt.expiry[i] == "" && got != "null") || (tt.expiry[i] != "" && got != `"`+tt.expiry[i]+`"`) {
					t.Errorf("instance %d: license_expiry %s; want %q (null when none)", i, got, tt.expiry[i])
				}
				if v.SMUtilization == nil || *v.SMUtilization != tt.sm[i] {
					t.Errorf("instance %d: sm_utilization %s; want %v", i, raw[i]["sm_utilization"], tt.sm[i])
				}
				if v.FBUsed == nil || *v.FBUsed == 0 {
					t.Errorf("instance %d: framebuffer_used %s; want bytes", i, raw[i]["framebuffer_used"])
				}
				var pids []int
				for _, p := range v.Processes {
					pids = append(pids, p.PID)
					if p.Name == "" {
						t.Errorf("instance %d: guest process %d has no name", i, p.PID)
					}
				}
				slices.Sort(pids)
				wantPIDs := slices.Clone(tt.pids[i])
				slices.Sort(wantPIDs)
				if !slices.Equal(pids, wantPIDs) {
					t.Errorf("instance %d: guest PIDs %v; want %v", i, pids, wantPIDs)
				}
				// an idle instance says so with [], as an idle GPU does
				if len(tt.pids[i]) == 0 && string(raw[i]["processes"]) != "[]" {
					t.Errorf("instance %d: processes %s; want []", i, raw[i]["processes"])
				}
			}
			// the guest processes are not host processes
			if got := string(dev["processes"]); got != "[]" {
				t.Errorf("devices[%d].processes = %s; want []", tt.gpu, got)
			}
		})
	}
	for i := 2; i < 8; i++ {
		if got := string(doc.Devices[i]["vgpu_instances"]); got != "[]" {
			t.Errorf("devices[%d].vgpu_instances = %s; want [] (a host running none)", i, got)
		}
		if got := string(doc.Devices[i]["virtualization_mode"]); got != `"host vgpu"` {
			t.Errorf("devices[%d].virtualization_mode = %s; want \"host vgpu\"", i, got)
		}
	}
}

// nonVgpuPresets are the presets of bare-metal machines.
func nonVgpuPresets() []string {
	return slices.DeleteFunc(fakegpu.PresetNames(), func(n string) bool { return strings.HasPrefix(n, "vgpu-") })
}

func TestABareMetalGPUShowsNoVGPURows(t *testing.T) {
	presets := nonVgpuPresets()
	if len(presets) < 6 {
		t.Fatalf("bare-metal presets %q; want the 6 DGX ones at least", presets)
	}
	for _, preset := range presets {
		for _, columns := range []int{0, 140} {
			t.Run(preset+" at COLUMNS="+strconv.Itoa(columns), func(t *testing.T) {
				plainTerminal(t, columns)
				code, stdout, stderr := runStatus(t, "--simulate", preset)
				if code != 0 || stderr != "" {
					t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
				}
				for _, s := range []string{"vGPU", "guest", "No host processes"} {
					if strings.Contains(stdout, s) {
						t.Errorf("output has %q:\n%s", s, stdout)
					}
				}
				code, stdout, _ = runStatus(t, "--simulate", preset, "--json")
				if code != 0 {
					t.Fatalf("--json: exit %d; want 0", code)
				}
				for i, d := range decodeJSON(t, stdout).Devices {
					if got := string(d["vgpu_instances"]); got != "null" {
						t.Errorf("devices[%d].vgpu_instances = %s; want null (not a vGPU host)", i, got)
					}
					if got := string(d["virtualization_mode"]); got != `"none"` {
						t.Errorf("devices[%d].virtualization_mode = %s; want \"none\"", i, got)
					}
				}
			})
		}
	}
}

// renderFleet renders a snapshot of fleet as the command does, at COLUMNS
// columns, with ASCII borders if ascii.
func renderFleet(t *testing.T, fleet *fakegpu.Fleet, columns int, ascii bool) string {
	t.Helper()
	plainTerminal(t, columns)
	lib, err := nvgo.Open(nvgo.WithNVML(fleet))
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	snap, err := lib.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	newRenderer(&out, &out, &options{ascii: ascii}).render(snap, nvgo.HostStats{})
	return out.String()
}

func TestVGPURowsSayWhatCouldNotBeRead(t *testing.T) {
	const hostile = "py\tthon 日本語テスト\x1b[31mred"
	tests := []struct {
		name     string
		setup    func(t *testing.T, f *fakegpu.Fleet)
		want     []string // in this order, at 80 columns
		dontWant []string
	}{
		{
			name: "an instance destroyed after it was listed shows the reason in its row",
			setup: func(t *testing.T, f *fakegpu.Fleet) {
				f.GPU(0).Vgpus()[0].DestroyOnCall("GetFbUsage")
			},
			want: []string{"│   0  vGPU 11 H100-20C", "│ ERROR: instance gone │", "│   0  vGPU 12 H100-20C", "│ VM 42 "},
		},
		{
			name: "a GPU whose instances cannot be listed says so in one row",
			setup: func(t *testing.T, f *fakegpu.Fleet) {
				f.GPU(0).Fail("GetActiveVgpus", nvml.ERROR_UNKNOWN)
			},
			want: []string{"│   0  H100", "├╌╌╌", "│   0  vGPU instances unreadable", "│   1  H100", "│   1  No vGPU instances"},
		},
		{
			name: "a licence that cannot be read is N/A",
			setup: func(t *testing.T, f *fakegpu.Fleet) {
				f.GPU(0).Vgpus()[1].Fail("GetLicenseInfo", nvml.ERROR_UNKNOWN)
			},
			want: []string{"│   0  vGPU 11 H100-20C", "│      licensed till 2027-01-15", "│   0  vGPU 12 H100-20C", "│      license N/A "},
		},
		{
			name:  "a guest process name cannot break the table",
			setup: func(t *testing.T, f *fakegpu.Fleet) {},
			want:  []string{"│   0  vGPU 11 H100-20C", `│      └─ guest 77`, `│ py\tthon 日本語テス… │`},
		},
		{
			name:     "a lost GPU shows no vGPU rows",
			setup:    func(t *testing.T, f *fakegpu.Fleet) { f.GPU(0).Lose() },
			want:     []string{"ERROR: GPU lost", "│   1  No vGPU instances"},
			dontWant: []string{"vGPU 11", "vGPU 12", "unreadable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fleet := fakegpu.New(
				fakegpu.GPUSpec{Model: "h100", Vgpus: []fakegpu.VgpuSpec{
					{ID: 11, Type: "NVIDIA H100-20C", FBUsedMiB: 1024, Licensed: true, LicenseExpiry: time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC),
						SM: 50, Processes: []fakegpu.VgpuProcess{{PID: 77, Name: hostile, SM: 50}}},
					{ID: 12, Type: "NVIDIA H100-20C", VMID: "42", VMIDType: fakegpu.VMIDTypeDomain, Licensed: true},
				}},
				fakegpu.GPUSpec{Model: "h100", VgpuHost: true},
			)
			tt.setup(t, fleet)
			out := renderFleet(t, fleet, 0, false)
			inOrder(t, out, tt.want)
			if strings.ContainsAny(out, "\x1b\t") {
				t.Errorf("control characters reach the terminal:\n%q", out)
			}
			checkTables(t, out, 79, wideWidth)
			for _, s := range tt.dontWant {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
			for _, ascii := range []bool{false, true} {
				out := renderFleet(t, fleet, 140, ascii)
				checkTables(t, out, 122, wideWidth)
				if ascii && strings.ContainsFunc(out, func(r rune) bool { return r >= 0x80 && !strings.ContainsRune(hostile, r) }) {
					t.Errorf("--ascii output has non-ASCII characters:\n%s", out)
				}
			}
		})
	}
}

func TestLicenseSaysWhetherAndUntilWhen(t *testing.T) {
	expiry := time.Date(2027, 6, 30, 23, 59, 59, 0, time.UTC)
	na := func() nvgo.Value[bool] { return nvgo.NA[bool](nvgo.Failed, errors.New("boom")) }
	tests := []struct {
		name string
		v    nvgo.VgpuInstanceSnapshot
		want string
	}{
		{"licensed with an expiry date", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(true), LicenseExpiry: nvgo.Some(expiry)}, "licensed till 2027-06-30"},
		{"the date is the UTC one", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(true), LicenseExpiry: nvgo.Some(expiry.In(time.FixedZone("UTC+5", 5*3600)))}, "licensed till 2027-06-30"},
		{"licensed with no date", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(true)}, "licensed"},
		{"licensed for good", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(true), LicensePermanent: nvgo.Some(true)}, "licensed (permanent)"},
		{"unlicensed", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(false), LicenseState: nvgo.Some(nvgo.LicenseUnlicensed)}, "unlicensed"},
		{"unlicensed and restricted", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(false), LicenseState: nvgo.Some(nvgo.LicenseUnlicensedRestricted)}, "unlicensed (restricted)"},
		{"unlicensed in an unknown state", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(false)}, "unlicensed"},
		{"unlicensed with a stale expiry date", nvgo.VgpuInstanceSnapshot{Licensed: nvgo.Some(false), LicenseExpiry: nvgo.Some(expiry)}, "unlicensed"},
		{"unreadable", nvgo.VgpuInstanceSnapshot{Licensed: na()}, "license N/A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := license(tt.v); got != tt.want {
				t.Errorf("license() = %q; want %q", got, tt.want)
			}
		})
	}
}

// vgpuScenario has a vGPU host with no instance, a bare-metal GPU and a
// vGPU host with one busy instance.
const vgpuScenario = `{"gpus": [
 {"name": "NVIDIA H100 80GB HBM3", "vgpu_host": true},
 {"name": "NVIDIA H100 80GB HBM3"},
 {"name": "NVIDIA H100 80GB HBM3", "vgpu_instances": [
   {"id": 5, "type": "NVIDIA H100-20C", "vm_id": "vm-7", "fb_used_mib": 2048, "licensed": true,
    "license_expiry": "2027-03-01T00:00:00Z", "sm_util": 33, "fb_util": 9, "enc_util": 4, "dec_util": 2,
    "processes": [{"pid": 31, "name": "train", "sm_util": 33}], "accounting": {"enabled": true}}]}]}`

func TestAScenarioFileWithVGPUHostsIsRendered(t *testing.T) {
	path := writeScenario(t, vgpuScenario)
	tests := []struct {
		name    string
		args    []string
		columns int
		width   int
		want    []string // in this order
	}{
		{
			name: "a host with no instance says so, a bare-metal GPU says nothing",
			args: []string{"--simulate", path}, width: 79,
			want: []string{
				"│   0  H100", "├╌╌╌", "│   0  No vGPU instances", "├───",
				"│   1  H100", "│ N/A ", "├───", // GPU 1's rows, then straight on to GPU 2
				"│   2  H100", "├╌╌╌", "│   2  vGPU 5 H100-20C ", "│ VM vm-7 ", "│ SM    33%  FB     9% │",
				"│      licensed till 2027-03-01 │", "2048MiB / 20.00GiB", "│ ENC    4%  DEC    2% │",
				"│      └─ guest 31 ", "│ train ", "│ SM    33%  MEM    0% │",
			},
		},
		{
			name: "--ascii with bars", args: []string{"--simulate", path, "--ascii"}, columns: 140, width: 122,
			want: []string{"|   0  No vGPU instances", "|   2  vGPU 5 H100-20C", "| UTL: ##########", "|      `- guest 31"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainTerminal(t, tt.columns)
			code, stdout, stderr := runStatus(t, tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			inOrder(t, stdout, tt.want)
			if n := strings.Count(stdout, "vGPU"); n != 3 { // two rows and the process table's note
				t.Errorf("%d mentions of vGPU; want 3:\n%s", n, stdout)
			}
			checkTables(t, stdout, tt.width, utf8.RuneCountInString)
		})
	}

	plainTerminal(t, 0)
	code, stdout, stderr := runStatus(t, "--simulate", path, "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("--json: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	doc := decodeJSON(t, stdout)
	for i, want := range []string{`"host vgpu"`, `"none"`, `"host vgpu"`} {
		if got := string(doc.Devices[i]["virtualization_mode"]); got != want {
			t.Errorf("devices[%d].virtualization_mode = %s; want %s", i, got, want)
		}
	}
	// A host without instances has none ([]); a bare-metal GPU has no list (null).
	for i, want := range []string{"[]", "null"} {
		if got := string(doc.Devices[i]["vgpu_instances"]); got != want {
			t.Errorf("devices[%d].vgpu_instances = %s; want %s", i, got, want)
		}
	}
	var vs []jsonVgpu
	if err := json.Unmarshal(doc.Devices[2]["vgpu_instances"], &vs); err != nil || len(vs) != 1 {
		t.Fatalf("devices[2].vgpu_instances %s: %v; want one instance", doc.Devices[2]["vgpu_instances"], err)
	}
	v := vs[0]
	if v.ID != 5 || v.VMID != "vm-7" || v.TypeName != "NVIDIA H100-20C" || v.Licensed == nil || !*v.Licensed ||
		v.LicenseExpiry == nil || *v.LicenseExpiry != "2027-03-01T00:00:00Z" || v.SMUtilization == nil || *v.SMUtilization != 33 ||
		len(v.Processes) != 1 || v.Processes[0].PID != 31 || v.Processes[0].Name != "train" || v.Processes[0].SMUtilization != 33 {
		t.Errorf("devices[2].vgpu_instances[0] = %+v; want instance 5 of VM vm-7, licensed till 2027-03-01, SM 33%%, guest process 31", v)
	}
}

// The simulated processes look like a real node's: owners, commands and
// CPU use, not "No Such Process".
func TestSimulatedProcessesLookReal(t *testing.T) {
	plainTerminal(t, 160)
	code, stdout, stderr := runStatus(t, "--simulate", "dgx-h100", "--no-color")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"alice", "bob", "carol", "python3 train.py --model llama-7b", "98.5"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "No Such Process") || strings.Contains(stdout, "N/A  N/A") {
		t.Errorf("simulated processes read as gone:\n%s", stdout)
	}
}
