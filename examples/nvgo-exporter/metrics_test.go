//go:build cgo

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/nvgotest"
)

// testNode is an exporter's reader on a preset fleet with a stepped clock.
type testNode struct {
	fleet *fakegpu.Fleet
	clock *fleetclock.Stepped
	r     *reader
}

// newTestNode opens preset with host facts and starts the accumulator.
func newTestNode(t *testing.T, preset string) *testNode {
	t.Helper()
	fleet, err := fakegpu.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	return newTestNodeOn(t, fleet)
}

func newTestNodeOn(t *testing.T, fleet *fakegpu.Fleet) *testNode {
	t.Helper()
	lib, clock := nvgotest.Simulated(t, fleet)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, err := newReader(ctx, lib, "node-t", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &testNode{fleet: fleet, clock: clock, r: r}
}

// step moves the fleet by n seconds, one accumulator tick each.
func (n *testNode) step(seconds int) {
	for range seconds {
		ch := n.r.acc.Updated()
		n.clock.Advance(time.Second)
		<-ch
	}
}

// gather scrapes c once into families by name.
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// labelsOf returns a series' labels as a map.
func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// valueOf is a series' value.
func valueOf(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	return math.NaN()
}

// seriesOf returns the series of name on GPU gpu (its own, not a MIG
// device's), or nil.
func seriesOf(mfs map[string]*dto.MetricFamily, name, gpu string) *dto.Metric {
	for _, m := range mfs[name].GetMetric() {
		if l := labelsOf(m); l["gpu"] == gpu && l["GPU_I_ID"] == "" {
			return m
		}
	}
	return nil
}

func TestDCGMFamiliesHaveDCGMNamesUnitsAndLabels(t *testing.T) {
	n := newTestNode(t, "dgx-h100")
	g := n.fleet.GPU(2)
	g.SetMemoryUsed(3 << 30)
	g.SetPower(412_500, 700_000)
	g.SetClocks(1500, 1755, 2619, 1400)
	g.SetTemperature(61)
	n.step(2)
	mfs := gather(t, newCollector(n.r, "hostname", false, 10))
	tests := []struct {
		name string
		kind dto.MetricType
		want float64 // on GPU 2; NaN: only present
	}{
		{"DCGM_FI_DEV_GPU_UTIL", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_MEM_COPY_UTIL", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_ENC_UTIL", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_DEC_UTIL", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_FB_USED", dto.MetricType_GAUGE, 3 * 1024},
		{"DCGM_FI_DEV_FB_FREE", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_FB_RESERVED", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_GPU_TEMP", dto.MetricType_GAUGE, 61},
		{"DCGM_FI_DEV_MEMORY_TEMP", dto.MetricType_GAUGE, 64}, // the fake's HBM: the core plus 3
		{"DCGM_FI_DEV_POWER_USAGE", dto.MetricType_GAUGE, 412.5},
		{"DCGM_FI_DEV_POWER_MGMT_LIMIT", dto.MetricType_GAUGE, 700},
		{"DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", dto.MetricType_COUNTER, math.NaN()},
		{"DCGM_FI_DEV_SM_CLOCK", dto.MetricType_GAUGE, 1755},
		{"DCGM_FI_DEV_MEM_CLOCK", dto.MetricType_GAUGE, 2619},
		{"DCGM_FI_PROF_PCIE_TX_BYTES", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_PROF_PCIE_RX_BYTES", dto.MetricType_GAUGE, math.NaN()},
		{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", dto.MetricType_COUNTER, math.NaN()},
		{"nvgo_gpu_info", dto.MetricType_GAUGE, 1},
		{"nvgo_gpu_processes", dto.MetricType_GAUGE, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mf := mfs[tt.name]
			if mf == nil {
				t.Fatalf("no family %s", tt.name)
			}
			if mf.GetType() != tt.kind {
				t.Errorf("type %v; want %v", mf.GetType(), tt.kind)
			}
			if got := len(mf.GetMetric()); got != 8 {
				t.Errorf("%d series; want one per GPU, 8", got)
			}
			m := seriesOf(mfs, tt.name, "2")
			if m == nil {
				t.Fatal("no series for GPU 2")
			}
			l := labelsOf(m)
			want := map[string]string{"gpu": "2", "UUID": g.UUID(), "pci_bus_id": g.BusID(), "device": "nvidia2",
				"hostname": "node-t"}
			if strings.HasPrefix(tt.name, "DCGM_") {
				want["modelName"] = g.Name()
			}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("label %s=%q; want %q", k, l[k], v)
				}
			}
			if !math.IsNaN(tt.want) && valueOf(m) != tt.want {
				t.Errorf("value %v; want %v", valueOf(m), tt.want)
			}
		})
	}
	if mfs["DCGM_FI_DEV_FAN_SPEED"] != nil {
		t.Errorf("DCGM_FI_DEV_FAN_SPEED served on SXM boards without a fan: N/A must be no sample, not 0")
	}
	info := labelsOf(seriesOf(mfs, "nvgo_gpu_info", "2"))
	if info["model_name"] != g.Name() || info["driver_version"] == "" || info["cuda_version"] == "" || info["mig_mode"] != "disabled" {
		t.Errorf("nvgo_gpu_info labels %v: want driver, CUDA version and mig_mode", info)
	}
}

func TestUtilizationIsTheMeanSinceThePreviousScrape(t *testing.T) {
	n := newTestNode(t, "dgx-h100")
	c := newCollector(n.r, "hostname", false, 10)
	g := n.fleet.GPU(5)
	g.SetUtilization(20, 10)
	n.step(2)
	gather(t, c) // the previous scrape
	n.step(2)
	g.SetUtilization(80, 30)
	n.step(2)
	mfs := gather(t, c)
	if got := valueOf(seriesOf(mfs, "DCGM_FI_DEV_GPU_UTIL", "5")); math.Abs(got-50) > 1 {
		t.Errorf("GPU utilization %v; want the mean over the four seconds since the previous scrape, 50", got)
	}
	if got := valueOf(seriesOf(mfs, "DCGM_FI_DEV_MEM_COPY_UTIL", "5")); math.Abs(got-20) > 1 {
		t.Errorf("memory utilization %v; want the mean, 20", got)
	}
	if help := mfs["DCGM_FI_DEV_GPU_UTIL"].GetHelp(); !strings.Contains(help, "Mean over the time since the previous scrape") {
		t.Errorf("help %q does not say the figure is a mean", help)
	}
}

func TestUsersAndFreeGPUs(t *testing.T) {
	n := newTestNode(t, "dgx-h100")
	n.step(1)
	mfs := gather(t, newCollector(n.r, "Hostname", false, 10))
	free := 0
	for _, m := range mfs["nvgo_gpu_free"].GetMetric() {
		if valueOf(m) == 1 {
			free++
		}
		if l := labelsOf(m); l["Hostname"] != "node-t" || l["hostname"] != "" {
			t.Errorf("--hostname-label Hostname: labels %v", l)
		}
	}
	busy := 0
	for i := 0; i < 8; i++ {
		if len(n.fleet.GPU(i).Processes()) > 0 {
			busy++
		}
	}
	if free != 8-busy {
		t.Errorf("%d GPUs with nvgo_gpu_free 1; want %d", free, 8-busy)
	}
	users := map[string]float64{}
	for _, m := range mfs["nvgo_gpu_user_memory_used_bytes"].GetMetric() {
		users[labelsOf(m)["user"]] += valueOf(m)
	}
	wantUsers := map[string]float64{}
	for i := 0; i < 8; i++ {
		for _, p := range n.fleet.GPU(i).Processes() {
			wantUsers[cmpOr(p.Host)] += float64(p.UsedMemory)
		}
	}
	for u, want := range wantUsers {
		if math.Abs(users[u]-want) > 1<<20 {
			t.Errorf("user %s: %v bytes; want %v", u, users[u], want)
		}
	}
	for _, m := range mfs["nvgo_gpu_user_start_time_seconds"].GetMetric() {
		// Simulated host facts are on the host's clock, the real one.
		if at := time.Unix(int64(valueOf(m)), 0); at.After(time.Now()) || at.Before(time.Now().Add(-30*24*time.Hour)) {
			t.Errorf("a user's start time %v is not in the month before now", at)
		}
	}
	if mfs["nvgo_process_gpu_memory_used_bytes"] != nil {
		t.Error("per-process series served without --per-process")
	}
}

// Free is nvgo's one definition ((*nvgo.DeviceSnapshot).Free) in the
// metrics, the node's JSON and its page alike: a GPU with MIG on and no MIG
// devices runs nothing and is not free, and a GPU whose process list
// cannot be read is neither free nor busy (no sample, null, "unknown").
func TestFreeIsNvgosOneDefinitionEverywhere(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-a100-mig")
	if err != nil {
		t.Fatal(err)
	}
	fleet.GPU(3).Fail("processes", nvml.ERROR_UNKNOWN)
	n := newTestNodeOn(t, fleet)
	n.step(1)
	mfs := gather(t, newCollector(n.r, "hostname", false, 10))
	p := &pages{r: n.r, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	rec := httptest.NewRecorder()
	p.nodeJSON(rec, httptest.NewRequest("GET", "/api/node", nil))
	var v nodeView
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	p.node(rec, httptest.NewRequest("GET", "/", nil))
	page := rec.Body.String()

	tests := []struct {
		name, gpu, instance string
		free                string // the nvgo_gpu_free sample, "" none
		state               string
	}{
		{"MIG on, one MIG device busy", "0", "", "0", "in use"},
		{"the busy MIG device", "0", "2", "0", ""},
		{"an idle MIG device", "0", "3", "1", ""},
		{"MIG on and no MIG devices", "1", "", "0", "no MIG devices"},
		{"a process on it", "2", "", "0", "in use"},
		{"its process list unreadable", "3", "", "", "unknown"},
		{"nobody on it", "4", "", "1", "free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			for _, m := range mfs["nvgo_gpu_free"].GetMetric() {
				if l := labelsOf(m); l["gpu"] == tt.gpu && l["GPU_I_ID"] == tt.instance {
					got = fmt.Sprint(valueOf(m))
				}
			}
			if got != tt.free {
				t.Errorf("nvgo_gpu_free %q; want %q", got, tt.free)
			}
			if tt.instance != "" {
				return
			}
			g := v.GPUs[atoi(t, tt.gpu)]
			want := map[string]*bool{"0": new(false), "1": new(true), "": nil}[tt.free]
			if (g.Free == nil) != (want == nil) || (want != nil && *g.Free != *want) {
				t.Errorf("the node's JSON: free %v; want %v", freeString(g.Free), freeString(want))
			}
			if g.State() != tt.state || !strings.Contains(page, `">`+tt.state+`</span>`) {
				t.Errorf("state %q; want %q, on the page too", g.State(), tt.state)
			}
		})
	}
	if got := valueOf(seriesOf(mfs, "nvgo_gpu_processes", "1")); got != 0 {
		t.Errorf("GPU 1: nvgo_gpu_processes %v; want 0: nobody uses it, yet it is not free", got)
	}
	if !strings.Contains(page, "4 of 8 GPUs free") {
		t.Errorf("the node page does not say 4 of 8 GPUs free (4 to 7; 3 is unknown):\n%s", page)
	}
}

// atoi is s as an int.
func atoi(t *testing.T, s string) int {
	t.Helper()
	i, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// cmpOr is the user a fake process's host facts name.
func cmpOr(h *fakegpu.Host) string {
	if h == nil || h.User == "" {
		return "root"
	}
	return h.User
}

func TestPerProcessSeriesAreCappedAndTheCapReported(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		p := fakegpu.Process{PID: uint32(4_300_000 + i), Name: "train\x1b[2J" + strings.Repeat("x", 40), UsedMemory: 1 << 30, SM: 40,
			Host: &fakegpu.Host{User: "erin", Command: []string{"python3", "train.py", "--secret=hunter2"}}}
		if err := fleet.GPU(6).StartProcess(p); err != nil {
			t.Fatal(err)
		}
	}
	n := newTestNodeOn(t, fleet)
	n.step(2)
	total := 0
	for i := 0; i < 8; i++ {
		total += len(fleet.GPU(i).Processes())
	}
	mfs := gather(t, newCollector(n.r, "hostname", true, 4))
	if got := len(mfs["nvgo_process_gpu_memory_used_bytes"].GetMetric()); got != 4 {
		t.Errorf("%d per-process series; want the cap, 4", got)
	}
	if got := valueOf(mfs["nvgo_process_series_dropped"].GetMetric()[0]); got != float64(total-4) {
		t.Errorf("nvgo_process_series_dropped %v; want %d", got, total-4)
	}
	if got := valueOf(mfs["nvgo_process_series_limit"].GetMetric()[0]); got != 4 {
		t.Errorf("nvgo_process_series_limit %v; want 4", got)
	}
	for _, m := range mfs["nvgo_process_gpu_memory_used_bytes"].GetMetric() {
		cmd := labelsOf(m)["command"]
		if len(cmd) > 32 || strings.ContainsAny(cmd, "\x1b") || strings.Contains(cmd, "hunter2") {
			t.Errorf("command label %q: want a short printable name, never the command line", cmd)
		}
	}
	for _, m := range mfs["nvgo_process_sm_utilization_ratio"].GetMetric() {
		if v := valueOf(m); v < 0 || v > 1 {
			t.Errorf("SM ratio %v outside 0..1", v)
		}
	}
}

func TestALostGPUHasNoSampleAndTheOthersKeepTheirs(t *testing.T) {
	n := newTestNode(t, "dgx-h100")
	n.step(1)
	n.fleet.GPU(7).Lose()
	n.step(1)
	mfs := gather(t, newCollector(n.r, "hostname", false, 10))
	if seriesOf(mfs, "DCGM_FI_DEV_GPU_UTIL", "7") != nil || seriesOf(mfs, "nvgo_gpu_processes", "7") != nil {
		t.Error("a lost GPU has series; want none (no sample), never 0")
	}
	if got := len(mfs["DCGM_FI_DEV_FB_USED"].GetMetric()); got != 7 {
		t.Errorf("%d GPUs with memory; want the 7 others", got)
	}
	if got := valueOf(mfs["nvgo_up"].GetMetric()[0]); got != 1 {
		t.Errorf("nvgo_up %v; want 1: the driver was read", got)
	}
}

func TestMIGDevicesCarryTheirInstanceLabels(t *testing.T) {
	n := newTestNode(t, "dgx-a100-mig")
	n.step(1)
	mfs := gather(t, newCollector(n.r, "hostname", false, 10))
	var profiles []string
	for _, m := range mfs["DCGM_FI_DEV_FB_USED"].GetMetric() {
		if l := labelsOf(m); l["GPU_I_ID"] != "" {
			profiles = append(profiles, l["GPU_I_PROFILE"])
			if l["UUID"] != n.fleet.GPU(0).UUID() {
				t.Errorf("a MIG series' UUID %q; want its GPU's, as dcgm-exporter", l["UUID"])
			}
		}
	}
	if len(profiles) == 0 || slices.Contains(profiles, "") {
		t.Errorf("MIG profiles %q: want each MIG device's profile", profiles)
	}
	if l := labelsOf(seriesOf(mfs, "nvgo_gpu_info", "0")); l["mig_mode"] != "enabled" {
		t.Errorf("nvgo_gpu_info on GPU 0: mig_mode %q; want enabled", l["mig_mode"])
	}
}

func TestNvgoFamiliesPassTheLinters(t *testing.T) {
	n := newTestNode(t, "dgx-h100")
	n.step(1)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(newCollector(n.r, "hostname", true, 100))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text bytes.Buffer
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "nvgo_") {
			names = append(names, mf.GetName())
			if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("nvgo families %v: want every one, per-process included", names)
	}
	problems, err := testutil.GatherAndLint(reg, names...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool (Debian's prometheus package) to run `promtool check metrics`")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &text
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// The nvgo families of deploy_test.go's list, which the dashboard may
// query, are the ones the exporter serves.
func TestServedNvgoFamiliesAreServed(t *testing.T) {
	n := newTestNode(t, "dgx-h100")
	n.step(1)
	mfs := gather(t, newCollector(n.r, "hostname", true, 100))
	for name := range mfs {
		if strings.HasPrefix(name, "nvgo_") && !slices.Contains(servedFamilies, name) {
			t.Errorf("the exporter serves %s; deploy_test.go's list lacks it", name)
		}
	}
	for _, name := range servedFamilies {
		if strings.HasPrefix(name, "nvgo_") && mfs[name] == nil {
			t.Errorf("deploy_test.go lists %s; the exporter (dgx-h100, --per-process) does not serve it", name)
		}
	}
}

func TestPagesEscapeEveryString(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	evil := `<script>alert(1)</script>`
	if err := fleet.GPU(4).StartProcess(fakegpu.Process{PID: 4_300_100, Name: evil, UsedMemory: 1 << 30,
		Host: &fakegpu.Host{User: "mallory", Command: []string{evil}}}); err != nil {
		t.Fatal(err)
	}
	n := newTestNodeOn(t, fleet)
	n.step(1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &pages{r: n.r, log: log}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/node" {
			p.nodeJSON(w, r)
			return
		}
		p.node(w, r)
	}))
	defer srv.Close()
	page := get(t, srv.URL+"/")
	if strings.Contains(page, evil) || !strings.Contains(page, "&lt;script&gt;") {
		t.Error("the node page does not escape a process name")
	}
	for _, want := range []string{"node-t", "mallory", "free", "in use", "NVIDIA H100 80GB HBM3"} {
		if !strings.Contains(page, want) {
			t.Errorf("the node page lacks %q", want)
		}
	}
	var v nodeView
	if err := json.Unmarshal([]byte(get(t, srv.URL+"/api/node")), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.GPUs) != 8 || v.Hostname != "node-t" {
		t.Errorf("JSON: %d GPUs on %q; want 8 on node-t", len(v.GPUs), v.Hostname)
	}
	if x, ok := v.GPUs[0].Metrics["fan_speed"]; ok {
		t.Errorf("JSON: fan speed %v on an SXM board; want none (N/A)", x)
	}
	if _, ok := v.GPUs[0].Metrics["memory_used"]; !ok || !strings.Contains(page, "total_volatile_uncorrected_ecc_errors") {
		t.Error("JSON or page lacks a reading: both list every reading that is not N/A")
	}
	if strings.Contains(get(t, srv.URL+"/api/node"), "--secret") {
		t.Error("JSON shows a command line")
	}
}

// get returns the body at url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
