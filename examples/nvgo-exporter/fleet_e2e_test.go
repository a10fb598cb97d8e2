//go:build cgo && linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/internal/testenv"
	"github.com/nvgo/nvgo/nvgotest"
)

// TestMain lets the test binary run as the exporter (nvgotest.Program).
func TestMain(m *testing.M) {
	nvgotest.RunMainIfAsked(func(args []string) int {
		ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
		defer stop()
		return run(ctx, args, os.Stdout, os.Stderr, nil)
	})
	os.Exit(m.Run())
}

// servingRE finds the address in the exporter's "serving" log line.
var servingRE = regexp.MustCompile(`msg=serving addr=(\S+)`)

// startExporter starts cmd (the exporter) and returns the address it
// serves on; it is stopped with SIGTERM when the test ends.
func startExporter(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	select {
	case a := <-addr:
		return a
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the exporter %q did not serve in 60 s:\n%s", cmd.Args[1:], log.String())
		return ""
	}
}

// freePort returns a loopback address that was free a moment ago: another
// process may take it before it is bound (startPrometheus tries again).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// getJSON decodes the JSON at u into v.
func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

// startPrometheus runs Debian's prometheus with the shipped configuration,
// its intervals cut to 1 s, scraping targets, on a free port; it returns
// its URL once it is ready.
func startPrometheus(t *testing.T, targets []string) *url.URL {
	t.Helper()
	return startPrometheusOn(t, targets, func() string { return freePort(t) })
}

// startPrometheusOn is startPrometheus on the addresses port gives: it
// cannot be told to take a free port itself (and say which), so a port
// taken between port's probe and prometheus's bind is tried again with
// another, up to five times.
func startPrometheusOn(t *testing.T, targets []string, port func() string) *url.URL {
	t.Helper()
	bin := testenv.Program(t, "prometheus") // Debian's package; .ci/run installs it
	dir := t.TempDir()
	conf := string(readDeployFile(t, "prometheus.yml"))
	for old, repl := range map[string]string{"scrape_interval: 15s": "scrape_interval: 1s", "scrape_timeout: 10s": "scrape_timeout: 1s",
		"evaluation_interval: 15s": "evaluation_interval: 1s", "refresh_interval: 1m": "refresh_interval: 1s"} {
		if !strings.Contains(conf, old) {
			t.Fatalf("deploy/prometheus.yml has no %q", old)
		}
		conf = strings.Replace(conf, old, repl, 1)
	}
	sd, _ := json.Marshal([]map[string]any{{"targets": targets, "labels": map[string]string{"cluster": "test"}}})
	for name, data := range map[string][]byte{"prometheus.yml": []byte(conf), "nodes.json": sd} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 1; ; attempt++ {
		addr := port()
		logName := filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", attempt))
		logf, err := os.Create(logName)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr, "--log.level=warn")
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); logf.Close(); close(exited) }()
		stop := func() { cmd.Process.Signal(syscall.SIGTERM); <-exited }
		if promReady(t, addr, filepath.Join(dir, "data"), exited) {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					b, _ := os.ReadFile(logName)
					t.Logf("prometheus's log:\n%s", b)
				}
			})
			return &url.URL{Scheme: "http", Host: addr}
		}
		stop()
		b, _ := os.ReadFile(logName)
		if !strings.Contains(string(b), "address already in use") || attempt == 5 {
			t.Fatalf("prometheus on %s did not start (attempt %d):\n%s", addr, attempt, b)
		}
		t.Logf("prometheus: %s was taken; trying another port", addr)
	}
}

// promReady polls addr until the prometheus storing in tsdb answers there,
// ready (true), or it exits (false), for at most a minute. Its storage
// path tells it from another Prometheus that has taken the port.
func promReady(t *testing.T, addr, tsdb string, exited <-chan struct{}) bool {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	ready := false
	waitFor(t, time.Minute, "prometheus neither got ready nor exited", func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		resp, err := client.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		var flags struct {
			Data map[string]string `json:"data"`
		}
		if resp.StatusCode == http.StatusOK {
			if resp, err = client.Get("http://" + addr + "/api/v1/status/flags"); err == nil {
				json.NewDecoder(resp.Body).Decode(&flags)
				resp.Body.Close()
			}
		}
		ready = flags.Data["storage.tsdb.path"] == tsdb
		return ready
	})
	return ready
}

// promQuery runs q on the server, failing the test on an error.
func promQuery(t *testing.T, f *fleet, q string) []promSample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := f.query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// A lab's fleet: three exporters (two simulated presets, one on the
// drop-in libnvidia-ml.so.1 with real processes), one real Prometheus with
// the shipped configuration, the fleet page read from it, the shipped
// dashboard's every query, and both pages in a real browser.
func TestAFleetOfThreeNodesInARealPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and four exporters")
	}
	testenv.Program(t, "prometheus") // Debian's package; .ci/run installs it
	// node-c: real processes behind the GPU PIDs, read through the C door.
	fleetC, err := fakegpu.Preset("dgx-h200")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < fleetC.Count(); i++ {
		g := fleetC.GPU(i)
		for _, p := range g.Processes() {
			g.StopProcess(p.PID)
		}
		g.SetUtilization(0, 0)
	}
	onGPU := map[int]int{0: 2, 3: 1}
	for gpu, n := range onGPU {
		for range n {
			child := exec.Command("sleep", "600")
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { child.Process.Kill(); child.Wait() })
			if err := fleetC.GPU(gpu).StartProcess(fakegpu.Process{PID: uint32(child.Process.Pid), UsedMemory: 5 << 30, SM: 30}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fleetC.GPU(0).SetUtilization(60, 20)
	fleetC.GPU(3).SetUtilization(30, 10)
	door := nvgotest.Serve(t, fleetC, "current")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the driver's clock: samples every second, as a GPU's
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				fleetC.Advance(time.Second)
				door.Mirror.Sync()
			}
		}
	}()

	nodes := map[string]string{}        // hostname → address
	exporters := map[string]*exec.Cmd{} // hostname → its process
	for name, cmd := range map[string]*exec.Cmd{
		"node-a": nvgotest.Program(t, "--simulate", "dgx-h100", "--hostname", "node-a", "--listen", "127.0.0.1:0"),
		"node-b": nvgotest.Program(t, "--simulate", "dgx-a100-mig", "--hostname", "node-b", "--listen", "127.0.0.1:0", "--per-process"),
		"node-c": door.Command(t, "--hostname", "node-c", "--listen", "127.0.0.1:0"),
	} {
		nodes[name], exporters[name] = startExporter(t, cmd), cmd
	}
	prom := startPrometheus(t, []string{nodes["node-a"], nodes["node-b"], nodes["node-c"]})
	f := testFleet(prom)
	waitFor(t, 90*time.Second, "Prometheus did not scrape the three exporters three times each", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := f.query(ctx, `count(count_over_time(nvgo_up[1m]) >= 3)`)
		if err != nil || len(s) != 1 {
			return false
		}
		x, _ := s[0].number()
		return x == 3
	})

	fleetAddr := startExporter(t, nvgotest.Program(t, "--prometheus", prom.String(), "--listen", "127.0.0.1:0"))
	var fv fleetView
	getJSON(t, "http://"+fleetAddr+"/api/fleet", &fv)
	if len(fv.Errors) > 0 {
		t.Fatalf("the fleet page's errors: %q", fv.Errors)
	}
	if len(fv.Nodes) != 3 {
		t.Fatalf("the fleet has %d nodes; want 3", len(fv.Nodes))
	}
	me, _ := user.Current()
	totalGPUs, totalFree := 0, 0
	for _, fn := range fv.Nodes {
		t.Run(fn.Hostname, func(t *testing.T) {
			if nodes[fn.Hostname] != fn.Instance || !fn.Up {
				t.Fatalf("node %q at %q (up %v); want one of %v, up", fn.Hostname, fn.Instance, fn.Up, nodes)
			}
			var nv nodeView
			getJSON(t, "http://"+fn.Instance+"/api/node", &nv)
			if len(nv.GPUs) != len(fn.GPUs) {
				t.Fatalf("%d GPUs on the fleet page, %d served by the node", len(fn.GPUs), len(nv.GPUs))
			}
			free := 0
			for i, g := range nv.GPUs {
				fg := fn.GPUs[i]
				if fg.UUID != g.UUID || fg.Model != g.Name {
					t.Errorf("GPU %d: %s %q on the fleet page; %s %q on the node", i, fg.UUID, fg.Model, g.UUID, g.Name)
				}
				if g.IsFree() {
					free++
				}
				if freeString(g.Free) != freeString(fg.Free) || g.State() != fg.State() {
					t.Errorf("GPU %d: free %s (%s) on the fleet page, %s (%s) on the node", i, freeString(fg.Free), fg.State(), freeString(g.Free), g.State())
				}
				used, ok := g.Metrics["memory_used"]
				if fg.MemUsedMiB == nil || !ok || math.Abs(*fg.MemUsedMiB-used/(1<<20)) > 1 {
					t.Errorf("GPU %d: memory used %v MiB on the fleet page, %v B on the node", i, fg.MemUsedMiB, g.Metrics["memory_used"])
				}
				var want []string
				for _, u := range g.Users {
					want = append(want, u.User)
				}
				for _, m := range g.MIGs {
					for _, u := range m.Users {
						if !strings.Contains(strings.Join(want, " "), u.User) {
							want = append(want, u.User)
						}
					}
				}
				var got []string
				for _, u := range fg.Users {
					got = append(got, u.User)
				}
				if strings.Join(got, ",") != strings.Join(slices.Sorted(slices.Values(want)), ",") {
					t.Errorf("GPU %d: users %q on the fleet page, %q on the node", i, got, want)
				}
			}
			if free != fn.Free {
				t.Errorf("%d free GPUs on the fleet page, %d on the node", fn.Free, free)
			}
			if fn.Hostname == "node-b" { // dgx-a100-mig: GPU 1 has MIG on and no MIG devices
				if g, fg := nv.GPUs[1], fn.GPUs[1]; g.MIGMode != "enabled" || len(g.MIGs) != 0 || g.IsFree() || fg.IsFree() || fg.State() != "no MIG devices" {
					t.Errorf("node-b GPU 1 (MIG %s, %d MIG devices): free on the node %s, on the fleet page %s (%s); want not free, no MIG devices",
						g.MIGMode, len(g.MIGs), freeString(g.Free), freeString(fg.Free), fg.State())
				}
			}
			if fn.Hostname == "node-c" {
				for gpu, n := range onGPU {
					us := fn.GPUs[gpu].Users
					if len(us) != 1 || us[0].User != me.Username || us[0].Processes != float64(n) || us[0].Since == nil {
						t.Errorf("node-c GPU %d: users %+v; want %s with %d real processes and a start time", gpu, us, me.Username, n)
					}
				}
				if g := nv.GPUs[0]; !g.Averaged || g.Metric("gpu_utilization") == nil || math.Abs(*g.Metric("gpu_utilization")-60) > 1 {
					t.Errorf("node-c GPU 0: utilization %v (averaged %v); want the driver's mean, 60", g.Metrics["gpu_utilization"], g.Averaged)
				}
			}
			totalGPUs += len(fn.GPUs)
			totalFree += free
		})
	}
	if fv.GPUs != totalGPUs || fv.Free != totalFree {
		t.Errorf("the fleet page says %d of %d GPUs free; the nodes say %d of %d", fv.Free, fv.GPUs, totalFree, totalGPUs)
	}

	t.Run("every query of the shipped dashboard returns data", func(t *testing.T) {
		for _, q := range dashboardQueries(t, ".*") {
			if s := promQuery(t, f, q); len(s) == 0 {
				t.Errorf("no data: %s", q)
			}
		}
	})

	t.Run("the pages in a real browser", func(t *testing.T) {
		pages := []struct {
			name, url string
			want      []string
		}{
			{"fleet", "http://" + fleetAddr + "/", []string{"GPU fleet", fmt.Sprintf("%d of %d GPUs free on 3 nodes", fv.Free, fv.GPUs),
				"node-a", "node-b", "node-c", "NVIDIA H200", "A100", me.Username, "alice"}},
			{"node-c", "http://" + nodes["node-c"] + "/", []string{"node-c", "sleep (" + me.Username + ")", "in use", "free"}},
		}
		for _, p := range pages {
			text, shot := browse(t, p.url)
			for _, w := range p.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s page in Chromium lacks %q:\n%s", p.name, w, text)
				}
			}
			t.Logf("%s page: screenshot %s", p.name, shot)
		}
	})

	t.Run("a node that stops is shown down, with its GPUs gone from the count", func(t *testing.T) {
		stopped := exporters["node-a"]
		stopped.Process.Signal(syscall.SIGTERM)
		stopped.Wait()
		var after fleetView
		waitFor(t, 30*time.Second, "the fleet page did not show node-a down", func() bool {
			after = fleetView{}
			getJSON(t, "http://"+fleetAddr+"/api/fleet", &after)
			for _, n := range after.Nodes {
				if n.Hostname == nodes["node-a"] || n.Hostname == "node-a" {
					return !n.Up
				}
			}
			return false
		})
		if len(after.Nodes) != 3 {
			t.Errorf("%d nodes after node-a stopped; want 3, one down", len(after.Nodes))
		}
		others := fv.GPUs
		for _, n := range fv.Nodes {
			if n.Hostname == "node-a" {
				others -= len(n.GPUs)
			}
		}
		if others == fv.GPUs || after.GPUs != others {
			t.Errorf("%d GPUs after node-a stopped; want the other nodes' %d", after.GPUs, others)
		}
	})
}

// tagRE matches an HTML tag, for reading a page's text.
var tagRE = regexp.MustCompile(`(?s)<style.*?</style>|<[^>]*>`)

// browse loads u in headless Chromium and returns the rendered page's text
// and the path of its screenshot, kept in $NVGO_TEST_ARTIFACTS (default: a
// folder under the system's temporary directory).
func browse(t *testing.T, u string) (string, string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		testenv.Missing(t, "no chromium (Debian's package; .ci/run installs it)")
	}
	dir := os.Getenv("NVGO_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "nvgo-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer(":", "_", "/", "_").Replace(strings.TrimPrefix(u, "http://"))
	shot := filepath.Join(dir, "exporter-"+strings.Trim(name, "_")+".png")
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1400,1600"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err := exec.CommandContext(ctx, bin, append(common, "--dump-dom", u)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", u, err)
	}
	if out, err := exec.CommandContext(ctx, bin, append(common, "--screenshot="+shot, u)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot %s: %v\n%s", u, err, out)
	}
	text := tagRE.ReplaceAllString(string(dom), " ")
	text = strings.Join(strings.Fields(strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&#39;", "'", "&quot;", `"`).Replace(text)), " ")
	return text, shot
}

// A port taken between the probe and prometheus's bind costs a retry, not
// the test.
func TestPrometheusStartsWhenItsPortIsTakenMeanwhile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus twice")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ports := []string{taken.Addr().String()}
	prom := startPrometheusOn(t, nil, func() string {
		if len(ports) > 0 {
			p := ports[0]
			ports = ports[1:]
			return p
		}
		return freePort(t)
	})
	if prom.Host == taken.Addr().String() {
		t.Errorf("prometheus at %s, the taken port", prom.Host)
	}
}
