package main

// Tests of the deployment files in deploy/: the Grafana dashboard, the
// Prometheus configuration and its targets file, the Kubernetes manifests
// and the systemd unit. They use only the standard library and no symbol of
// the exporter itself, so that they build and run on their own:
//
//	cd examples && go test ./nvgo-exporter/deploy_test.go
//
// Where a checker is installed (promtool, systemd-analyze) the files are
// also handed to it; where not, those cases skip and say so.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nvgo/nvgo/internal/testenv"
)

// servedFamilies are the metric families nvgo-exporter serves, with
// --per-process on. Every metric the dashboard queries must be one of them;
// the exporter's own tests compare this list with what /metrics really
// serves.
var servedFamilies = []string{
	// dcgm-exporter's names, so that its dashboards keep working.
	"DCGM_FI_DEV_GPU_UTIL",
	"DCGM_FI_DEV_FB_USED",
	"DCGM_FI_DEV_FB_FREE",
	"DCGM_FI_DEV_FB_RESERVED",
	"DCGM_FI_DEV_GPU_TEMP",
	"DCGM_FI_DEV_POWER_USAGE",
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
	"DCGM_FI_DEV_SM_CLOCK",
	"DCGM_FI_DEV_MEM_CLOCK",
	"DCGM_FI_DEV_MEM_COPY_UTIL",
	"DCGM_FI_DEV_ENC_UTIL",
	"DCGM_FI_DEV_DEC_UTIL",
	"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
	"DCGM_FI_PROF_PCIE_TX_BYTES",
	"DCGM_FI_PROF_PCIE_RX_BYTES",
	"DCGM_FI_PROF_NVLINK_TX_BYTES",
	"DCGM_FI_PROF_NVLINK_RX_BYTES",
	// nvgo's own.
	"nvgo_up",
	"nvgo_scrape_duration_seconds",
	"nvgo_gpu_info",
	"nvgo_gpu_processes",
	"nvgo_gpu_free",
	"nvgo_gpu_user_processes",
	"nvgo_gpu_user_memory_used_bytes",
	"nvgo_gpu_user_start_time_seconds",
	// Only with --per-process.
	"nvgo_process_gpu_memory_used_bytes",
	"nvgo_process_sm_utilization_ratio",
	"nvgo_process_series_limit",
	"nvgo_process_series_dropped",
}

// deployDir holds the deployment files, relative to this package.
const deployDir = "deploy"

// deployMetricName finds the metric names in a PromQL expression.
var deployMetricName = regexp.MustCompile(`\b(nvgo_[a-z_]+|DCGM_FI_[A-Z_]+)\b`)

// deployHostnameFilter is how every selector in the dashboard follows the
// hostname variable.
const deployHostnameFilter = `{hostname=~"$hostname"`

// deployDashboard is the part of a Grafana dashboard these tests read.
type deployDashboard struct {
	SchemaVersion int           `json:"schemaVersion"`
	Panels        []deployPanel `json:"panels"`
	Templating    struct {
		List []deployVariable `json:"list"`
	} `json:"templating"`
}

// deployPanel is a dashboard panel; a row holds its panels when collapsed.
type deployPanel struct {
	ID         int              `json:"id"`
	Type       string           `json:"type"`
	Title      string           `json:"title"`
	Datasource deployDatasource `json:"datasource"`
	Panels     []deployPanel    `json:"panels"`
	Targets    []struct {
		RefID      string           `json:"refId"`
		Expr       string           `json:"expr"`
		Datasource deployDatasource `json:"datasource"`
	} `json:"targets"`
}

type deployDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// deployVariable is a template variable; Query is a string in older
// dashboards and an object with a "query" field in newer ones.
type deployVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
}

// query returns the variable's query text in either form.
func (v deployVariable) query() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &o) == nil {
		return o.Query
	}
	return ""
}

// readDeployFile returns the contents of a file in deploy/.
func readDeployFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readDeployDashboard parses deploy/grafana-dashboard.json.
func readDeployDashboard(t testing.TB) deployDashboard {
	t.Helper()
	var d deployDashboard
	dec := json.NewDecoder(bytes.NewReader(readDeployFile(t, "grafana-dashboard.json")))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	return d
}

// deployPanels returns the dashboard's panels in order, those inside rows
// included and the rows themselves left out.
func deployPanels(ps []deployPanel) []deployPanel {
	var out []deployPanel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, deployPanels(p.Panels)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// dashboardQueries returns the PromQL expression of every panel target of
// the dashboard, in panel order, ready to send to Prometheus: $hostname
// becomes hostnameRegexp (an RE2 regular expression such as ".*" or
// "gpu-node-1|gpu-node-2", escaped here for a PromQL string), and Grafana's
// own interval variables become fixed durations ($__rate_interval 1m,
// $__interval 15s, $__range 1h). It fails t when a variable it does not know
// is left.
func dashboardQueries(t testing.TB, hostnameRegexp string) []string {
	t.Helper()
	vars := func(hostname string) *strings.Replacer {
		return strings.NewReplacer(
			"${hostname}", hostname,
			"$hostname", hostname,
			"$__rate_interval", "1m",
			"$__interval", "15s",
			"$__range", "1h",
		)
	}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(hostnameRegexp)
	var queries []string
	for _, p := range deployPanels(readDeployDashboard(t).Panels) {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				continue
			}
			// Checked without the hostname, which may hold a '$' anchor.
			if left := vars("").Replace(tg.Expr); strings.Contains(left, "$") {
				t.Fatalf("panel %q: a dashboard variable is left in %q", p.Title, left)
			}
			queries = append(queries, vars(quoted).Replace(tg.Expr))
		}
	}
	if len(queries) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	return queries
}

func TestDeployDashboardPanelsQueryServedFamilies(t *testing.T) {
	panels := deployPanels(readDeployDashboard(t).Panels)
	if len(panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	ids := map[int]string{}
	for _, p := range panels {
		t.Run(p.Title, func(t *testing.T) {
			if p.Title == "" {
				t.Error("the panel has no title")
			}
			if other, ok := ids[p.ID]; ok {
				t.Errorf("id %d is also panel %q's", p.ID, other)
			}
			ids[p.ID] = p.Title
			if p.Datasource.UID != "${datasource}" {
				t.Errorf("datasource uid = %q, want the ${datasource} variable", p.Datasource.UID)
			}
			exprs := 0
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("target %s has no expr", tg.RefID)
					continue
				}
				exprs++
				if tg.Datasource.UID != "" && tg.Datasource.UID != "${datasource}" {
					t.Errorf("target %s: datasource uid = %q, want the ${datasource} variable", tg.RefID, tg.Datasource.UID)
				}
				names := deployMetricName.FindAllString(tg.Expr, -1)
				if len(names) == 0 {
					t.Errorf("target %s queries no nvgo or DCGM metric: %s", tg.RefID, tg.Expr)
				}
				for _, name := range names {
					if !slices.Contains(servedFamilies, name) {
						t.Errorf("target %s queries %s, which the exporter does not serve", tg.RefID, name)
					}
				}
				if n := strings.Count(tg.Expr, deployHostnameFilter); n != len(names) {
					t.Errorf("target %s: %d of its %d selectors follow $hostname (want all, as %s…}): %s",
						tg.RefID, n, len(names), deployHostnameFilter, tg.Expr)
				}
			}
			if exprs == 0 {
				t.Error("the panel has no target with an expr")
			}
		})
	}
}

func TestDeployDashboardSettings(t *testing.T) {
	d := readDeployDashboard(t)
	vars := map[string]deployVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	tests := []struct {
		name  string
		check func() error
	}{
		{"the schema is version 39", func() error {
			if d.SchemaVersion != 39 {
				return fmt.Errorf("schemaVersion = %d", d.SchemaVersion)
			}
			return nil
		}},
		{"the data source is a variable of Prometheus sources", func() error {
			v, ok := vars["datasource"]
			if !ok || v.Type != "datasource" || v.query() != "prometheus" {
				return fmt.Errorf("variable datasource = %+v, want type datasource, query prometheus", v)
			}
			return nil
		}},
		{"the hostname variable lists the nodes with GPUs", func() error {
			v, ok := vars["hostname"]
			want := "label_values(nvgo_gpu_info, hostname)"
			if !ok || v.Type != "query" || v.query() != want {
				return fmt.Errorf("variable hostname = %+v, want a query %s", v, want)
			}
			return nil
		}},
		{"variable queries use served families", func() error {
			for _, v := range d.Templating.List {
				for _, name := range deployMetricName.FindAllString(v.query(), -1) {
					if !slices.Contains(servedFamilies, name) {
						return fmt.Errorf("variable %s queries %s, which the exporter does not serve", v.Name, name)
					}
				}
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.check(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDeployDashboardQueriesSubstituteHostname(t *testing.T) {
	tests := []struct {
		name, regexp, want string
	}{
		{"every node", ".*", `hostname=~".*"`},
		{"a choice of nodes", "gpu-node-1|gpu-node-2", `hostname=~"gpu-node-1|gpu-node-2"`},
		{"a backslash is escaped for PromQL", `gpu-node-1\.lab`, `hostname=~"gpu-node-1\\.lab"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, q := range dashboardQueries(t, tt.regexp) {
				if !strings.Contains(q, tt.want) {
					t.Errorf("%s lacks %s", q, tt.want)
				}
				if strings.Contains(q, "$") {
					t.Errorf("%s still has a variable", q)
				}
			}
		})
	}
}

// TestDeployDashboardQueriesParse hands every query to promtool as a
// recording rule, which parses the PromQL without a running Prometheus.
func TestDeployDashboardQueriesParse(t *testing.T) {
	promtool := deployLookPath(t, "promtool")
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range dashboardQueries(t, ".*") {
		b, err := json.Marshal(q) // a JSON string is a YAML double-quoted scalar
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, b)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

func TestDeployNodesFileListsExporterTargets(t *testing.T) {
	var groups []struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	dec := json.NewDecoder(bytes.NewReader(readDeployFile(t, "nodes.json")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&groups); err != nil {
		t.Fatalf("nodes.json is not a file_sd target list: %v", err)
	}
	if len(groups) == 0 {
		t.Fatal("nodes.json has no target groups")
	}
	labelName := regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	for i, g := range groups {
		t.Run(fmt.Sprintf("group %d", i), func(t *testing.T) {
			if len(g.Targets) == 0 {
				t.Error("the group has no targets")
			}
			for _, target := range g.Targets {
				host, port, err := net.SplitHostPort(target)
				if err != nil || host == "" || port != "9400" {
					t.Errorf("target %q is not host:9400", target)
				}
			}
			for name := range g.Labels {
				switch {
				case !labelName.MatchString(name) || strings.HasPrefix(name, "__"):
					t.Errorf("label %q is not a target label name", name)
				case name == "hostname" || name == "Hostname":
					t.Errorf("label %q would rename the exporter's own to exported_%s", name, name)
				}
			}
		})
	}
}

func TestDeployPrometheusConfig(t *testing.T) {
	config := string(readDeployFile(t, "prometheus.yml"))
	for _, want := range []string{
		"scrape_interval: 15s",
		"job_name: nvgo",
		"file_sd_configs:",
		"files: [nodes.json]",
		"refresh_interval: 1m",
	} {
		t.Run("has "+want, func(t *testing.T) {
			if !strings.Contains(config, want) {
				t.Errorf("prometheus.yml lacks %q", want)
			}
		})
	}
	t.Run("promtool accepts it with its targets file", func(t *testing.T) {
		promtool := deployLookPath(t, "promtool")
		dir := t.TempDir()
		for _, name := range []string{"prometheus.yml", "nodes.json"} {
			if err := os.WriteFile(filepath.Join(dir, name), readDeployFile(t, name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.CommandContext(t.Context(), promtool, "check", "config", "prometheus.yml")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check config: %v\n%s", err, out)
		}
		// A missing or unreadable targets file is only a warning to promtool.
		if bytes.Contains(out, []byte("WARNING")) {
			t.Errorf("promtool check config warns:\n%s", out)
		}
	})
}

func TestDeployKubernetesManifests(t *testing.T) {
	manifest := string(readDeployFile(t, "kubernetes.yaml"))
	tests := []struct {
		name, want string
	}{
		{"runs on every GPU node", "kind: DaemonSet"},
		{"is discoverable through a Service", "kind: Service"},
		{"shares the host's PIDs for process attribution", "hostPID: true"},
		{"exposes the metrics port", "containerPort: 9400"},
		{"names the port metrics", "name: metrics"},
		{"serves the Service on 9400", "port: 9400"},
		{"labels series with the node's name", "- $(NODE_NAME)"},
		{"takes the node's name from the downward API", "fieldPath: spec.nodeName"},
		{"runs the placeholder image", "image: nvgo-exporter:latest"},
		{"asks the NVIDIA runtime for every GPU", "name: NVIDIA_VISIBLE_DEVICES"},
		{"keeps the root file system read-only", "readOnlyRootFilesystem: true"},
		{"asks Prometheus to scrape the Service", `prometheus.io/scrape: "true"`},
		{"tolerates GPU taints", "key: nvidia.com/gpu"},
		{"selects GPU nodes", "nodeSelector:"},
		{"sets resources", "resources:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(manifest, tt.want) {
				t.Errorf("kubernetes.yaml lacks %q", tt.want)
			}
		})
	}
	t.Run("is two documents", func(t *testing.T) {
		if n := len(strings.Split(manifest, "\n---\n")); n != 2 {
			t.Errorf("%d YAML documents, want a DaemonSet and a Service", n)
		}
	})
	t.Run("indents with spaces, as YAML requires", func(t *testing.T) {
		if strings.Contains(manifest, "\t") {
			t.Error("kubernetes.yaml has a tab")
		}
	})
	t.Run("leaves the namespace to kubectl -n", func(t *testing.T) {
		if regexp.MustCompile(`(?m)^\s*namespace:`).MatchString(manifest) {
			t.Error("kubernetes.yaml sets a namespace")
		}
	})
}

// deployUnitDirectives returns the directive lines of a systemd unit,
// without comments and blank lines.
func deployUnitDirectives(unit string) []string {
	var lines []string
	for line := range strings.Lines(unit) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		lines = append(lines, line)
	}
	return lines
}

func TestDeploySystemdUnit(t *testing.T) {
	unit := string(readDeployFile(t, "nvgo-exporter.service"))
	directives := deployUnitDirectives(unit)
	tests := []struct {
		name, line string
		present    bool
	}{
		{"starts the exporter on 9400", "ExecStart=/usr/local/bin/nvgo-exporter --listen :9400", true},
		{"restarts after a crash", "Restart=on-failure", true},
		{"mounts the system read-only", "ProtectSystem=strict", true},
		{"hides home directories", "ProtectHome=yes", true},
		{"gains no privileges", "NoNewPrivileges=yes", true},
		{"has its own /tmp", "PrivateTmp=yes", true},
		{"is started at boot", "WantedBy=multi-user.target", true},
		// These break the exporter; the unit says why.
		{"keeps /dev/nvidia* for NVML", "PrivateDevices=yes", false},
		{"sees other users' processes", "ProtectProc=invisible", false},
		{"sees /proc/stat for start times", "ProcSubset=pid", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slices.Contains(directives, tt.line); got != tt.present {
				t.Errorf("has %s: %v, want %v", tt.line, got, tt.present)
			}
		})
	}
	t.Run("systemd-analyze verify finds nothing", func(t *testing.T) {
		analyze := deployLookPath(t, "systemd-analyze")
		trueBin := testenv.Program(t, "true") // stands in for nvgo-exporter
		// A unit verify must accept: what it says about this one is about
		// the machine (no systemd running, a container), not about a file.
		control, err := deployVerifyUnit(t, analyze, "deploy-control.service",
			"[Unit]\nDescription=control\n\n[Service]\nExecStart="+trueBin+"\n")
		if err != nil || control != "" {
			t.Skipf("systemd-analyze verify cannot check units here: %v\n%s", err, control)
		}
		// The binary need not be installed: only the file is under test.
		copied := strings.Replace(unit, "ExecStart=/usr/local/bin/nvgo-exporter", "ExecStart="+trueBin, 1)
		out, err := deployVerifyUnit(t, analyze, "nvgo-exporter.service", copied)
		if err != nil || out != "" {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
}

// deployVerifyUnit writes unit to a new directory under name and returns
// what systemd-analyze verify prints about it. Unknown or misspelt
// directives are only warnings to verify, so any output counts.
func deployVerifyUnit(t *testing.T, analyze, name, unit string) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), analyze, "verify", "--man=no", path).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// deployLookPath returns the path of a checker program, or skips t when it
// is not installed (fails it in CI).
func deployLookPath(t *testing.T, name string) string {
	t.Helper()
	return testenv.Program(t, name)
}
