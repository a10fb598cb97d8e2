package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// fleet serves the fleet page: every node's GPUs, read from Prometheus's
// HTTP API when a view asks. It polls no node. Its memory is bounded: one
// read at a time, shared by every view that comes while it runs and for
// shareFor after (view), at most maxQueries queries at once, and no
// answer over maxAnswer bytes. Safe for concurrent use.
type fleet struct {
	prom   *url.URL // the server's base URL
	client *http.Client
	log    *slog.Logger
	// maxAnswer is the most bytes of one query's answer read.
	maxAnswer int64
	// queries holds a token per query running: at most maxQueries.
	queries chan struct{}
	// shareFor is how long a read serves the views that come after it.
	shareFor time.Duration
	now      func() time.Time

	mu   sync.Mutex
	last *fleetRead // the latest read, done or running
}

const (
	// maxAnswer is the most bytes of a query's answer the fleet page reads:
	// a series is some 400 bytes of JSON (nvgo_gpu_info's, the longest,
	// with its labels and a few of Prometheus's), so 8 MiB is some 20,000
	// GPUs, more than one page can show. Prometheus holding more (a job
	// that scrapes far more than nvgo-exporters, a hostile server) is an
	// error, not gigabytes of memory.
	maxAnswer = 8 << 20
	// maxQueries is the most queries running at once: with maxAnswer, at
	// most 32 MiB of answers read at a time.
	maxQueries = 4
	// shareFor is how long a read serves later views: less than the
	// pages' refresh, so that a page left open sees every new read.
	shareFor = 3 * time.Second
	// readTimeout bounds one read of the fleet, all its queries.
	readTimeout = 10 * time.Second
)

// errAnswerTooLarge is an answer over maxAnswer.
var errAnswerTooLarge = errors.New("the answer is too large")

// newFleet reads the fleet from the Prometheus server at prom.
func newFleet(prom *url.URL, log *slog.Logger) *fleet {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxQueries
	return &fleet{prom: prom, client: &http.Client{Transport: t, Timeout: readTimeout}, log: log,
		maxAnswer: maxAnswer, queries: make(chan struct{}, maxQueries), shareFor: shareFor, now: time.Now}
}

// promSample is one series of an instant query's vector.
type promSample struct {
	Metric promLabels `json:"metric"`
	Value  [2]any     `json:"value"`
}

// promLabels are the labels of a series the fleet page reads; the others
// are not kept: a map of every label made reading a large answer some
// times slower and take twice the memory. (encoding/json matches a name in
// another case where no field has it exactly: a label "uuid" beside
// "UUID" would be taken for it; no exporter serves such a pair.)
type promLabels struct {
	Instance      string `json:"instance"`
	UUID          string `json:"UUID"`
	GPU           string `json:"gpu"`
	User          string `json:"user"`
	Hostname      string `json:"hostname"`
	HostnameOld   string `json:"Hostname"`
	ModelName     string `json:"model_name"`
	DriverVersion string `json:"driver_version"`
	MIGMode       string `json:"mig_mode"`
}

// number is the sample's value; NaN and ±Inf are not ok: the fleet's
// figures have no such values, and JSON cannot hold them (N/A, null).
func (s promSample) number() (float64, bool) {
	str, ok := s.Value[1].(string)
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(str, 64)
	return x, err == nil && !math.IsNaN(x) && !math.IsInf(x, 0)
}

// lastUnixTime is the last second of year 9999, the last time JSON's
// (RFC 3339's) form holds.
const lastUnixTime = 253402300799

// unixTime is x, seconds since 1970, as a time; not ok before 1970 or
// after year 9999, which no start time is and JSON cannot hold.
func unixTime(x float64) (time.Time, bool) {
	if x < 0 || x > lastUnixTime {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(x * 1000)), true
}

// query runs an instant PromQL query.
func (f *fleet) query(ctx context.Context, q string) ([]promSample, error) {
	u := f.prom.JoinPath("api/v1/query")
	u.RawQuery = url.Values{"query": {q}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus: %w", err)
	}
	defer resp.Body.Close()
	tooLarge := fmt.Errorf("querying Prometheus: %s: %w (over %d MiB): more than a fleet of some 20,000 GPUs needs",
		q, errAnswerTooLarge, f.maxAnswer>>20)
	if resp.ContentLength > f.maxAnswer {
		return nil, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("reading Prometheus's answer: %w", err)
	}
	if int64(len(body)) > f.maxAnswer {
		return nil, tooLarge
	}
	var doc struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("querying Prometheus: it answered %s with no JSON it reads: %w", resp.Status, err)
	}
	if doc.Status != "success" {
		return nil, fmt.Errorf("querying Prometheus: %s: %s", q, doc.Error)
	}
	if doc.Data.ResultType != "vector" {
		return nil, fmt.Errorf("querying Prometheus: %s: a %s, not a vector", q, doc.Data.ResultType)
	}
	return doc.Data.Result, nil
}

// fleetView is the fleet page's content.
type fleetView struct {
	Time   time.Time   `json:"time"`
	Nodes  []fleetNode `json:"nodes"`
	GPUs   int         `json:"gpus"`
	Free   int         `json:"free"`
	Errors []string    `json:"errors,omitempty"`
}

// fleetNode is one exporter's node.
type fleetNode struct {
	Hostname string     `json:"hostname"`
	Instance string     `json:"instance"` // the scrape target, host:port
	Up       bool       `json:"up"`
	Driver   string     `json:"driver_version"`
	GPUs     []fleetGPU `json:"gpus"`
	Free     int        `json:"free"`
}

// URL is the node's page.
func (n *fleetNode) URL() string { return "http://" + n.Instance + "/" }

// fleetGPU is one GPU of a node, as Prometheus last saw it.
type fleetGPU struct {
	Index       int      `json:"index"`
	UUID        string   `json:"uuid"`
	Model       string   `json:"model"`
	Util        *float64 `json:"gpu_utilization_percent"`
	MemUsedMiB  *float64 `json:"memory_used_mib"`
	MemTotalMiB *float64 `json:"memory_total_mib"`
	MIGMode     string   `json:"mig_mode"`
	Processes   *float64 `json:"processes"`
	// Free is the node's nvgo_gpu_free: nvgo's one definition of free, as
	// the node page's. nil (null) when the node could not tell.
	Free  *bool       `json:"free"`
	Users []fleetUser `json:"users"`
}

// IsFree reports whether the GPU is known to be free.
func (g *fleetGPU) IsFree() bool { return g.Free != nil && *g.Free }

// State is what the fleet page says of the GPU (gpuState).
func (g *fleetGPU) State() string {
	return gpuState(g.Free, g.Processes != nil && *g.Processes > 0, g.MIGMode == "enabled")
}

// fleetUser is one user on a GPU.
type fleetUser struct {
	User      string     `json:"user"`
	Processes float64    `json:"processes"`
	MemMiB    float64    `json:"gpu_memory_mib"`
	Since     *time.Time `json:"since,omitempty"`
}

// fleetQueries are the queries the page is made of, by role.
var fleetQueries = map[string]string{
	"info":    `nvgo_gpu_info`,
	"up":      `up and on (instance, job) group by (instance, job) (last_over_time(nvgo_up[1h]))`,
	"util":    `DCGM_FI_DEV_GPU_UTIL{GPU_I_ID=""}`,
	"used":    `DCGM_FI_DEV_FB_USED{GPU_I_ID=""}`,
	"fbfree":  `DCGM_FI_DEV_FB_FREE{GPU_I_ID=""}`,
	"resv":    `DCGM_FI_DEV_FB_RESERVED{GPU_I_ID=""}`,
	"procs":   `nvgo_gpu_processes{GPU_I_ID=""}`,
	"gpufree": `nvgo_gpu_free{GPU_I_ID=""}`,
	"uprocs":  `sum by (instance, UUID, user) (nvgo_gpu_user_processes)`,
	"umem":    `sum by (instance, UUID, user) (nvgo_gpu_user_memory_used_bytes)`,
	"usince":  `min by (instance, UUID, user) (nvgo_gpu_user_start_time_seconds)`,
	"hostlbl": `count by (instance, hostname, Hostname) (nvgo_up)`,
}

// read builds the fleet's view from Prometheus.
func (f *fleet) read(ctx context.Context) (fleetView, error) {
	v := fleetView{Time: time.Now()}
	res := make(map[string][]promSample, len(fleetQueries))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for role, q := range fleetQueries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case f.queries <- struct{}{}:
			case <-ctx.Done():
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, fmt.Errorf("querying Prometheus: %s: %w", q, ctx.Err()))
				return
			}
			s, err := f.query(ctx, q)
			<-f.queries
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			res[role] = s
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return v, errors.Join(errs...)
	}
	nodes := map[string]*fleetNode{}
	node := func(instance string) *fleetNode {
		n := nodes[instance]
		if n == nil {
			n = &fleetNode{Instance: instance, Hostname: instance}
			nodes[instance] = n
		}
		return n
	}
	for _, s := range res["up"] {
		x, _ := s.number()
		node(s.Metric.Instance).Up = x == 1
	}
	for _, s := range res["hostlbl"] {
		n := node(s.Metric.Instance)
		n.Hostname = cmp.Or(s.Metric.Hostname, s.Metric.HostnameOld, n.Hostname)
	}
	type gpuKey struct{ instance, uuid string }
	gpus := map[gpuKey]*fleetGPU{}
	for _, s := range res["info"] {
		n := node(s.Metric.Instance)
		n.Driver = s.Metric.DriverVersion
		idx, _ := strconv.Atoi(s.Metric.GPU)
		n.GPUs = append(n.GPUs, fleetGPU{Index: idx, UUID: s.Metric.UUID, Model: s.Metric.ModelName, MIGMode: s.Metric.MIGMode})
	}
	for _, n := range nodes {
		slices.SortFunc(n.GPUs, func(a, b fleetGPU) int { return cmp.Compare(a.Index, b.Index) })
		for i := range n.GPUs {
			gpus[gpuKey{n.Instance, n.GPUs[i].UUID}] = &n.GPUs[i]
		}
	}
	each := func(role string, set func(g *fleetGPU, x float64, s promSample)) {
		for _, s := range res[role] {
			g := gpus[gpuKey{s.Metric.Instance, s.Metric.UUID}]
			if x, ok := s.number(); ok && g != nil {
				set(g, x, s)
			}
		}
	}
	ptr := func(x float64) *float64 { return &x }
	each("util", func(g *fleetGPU, x float64, _ promSample) { g.Util = ptr(x) })
	each("used", func(g *fleetGPU, x float64, _ promSample) { g.MemUsedMiB = ptr(x) })
	each("fbfree", func(g *fleetGPU, x float64, _ promSample) { g.MemTotalMiB = ptr(x + deref(g.MemTotalMiB)) })
	each("resv", func(g *fleetGPU, x float64, _ promSample) { g.MemTotalMiB = ptr(x + deref(g.MemTotalMiB)) })
	each("used", func(g *fleetGPU, x float64, _ promSample) { g.MemTotalMiB = ptr(x + deref(g.MemTotalMiB)) })
	each("procs", func(g *fleetGPU, x float64, _ promSample) { g.Processes = ptr(x) })
	each("gpufree", func(g *fleetGPU, x float64, _ promSample) { free := x == 1; g.Free = &free })
	user := func(g *fleetGPU, name string) *fleetUser {
		i := slices.IndexFunc(g.Users, func(u fleetUser) bool { return u.User == name })
		if i < 0 {
			g.Users = append(g.Users, fleetUser{User: name})
			i = len(g.Users) - 1
		}
		return &g.Users[i]
	}
	each("uprocs", func(g *fleetGPU, x float64, s promSample) { user(g, s.Metric.User).Processes = x })
	each("umem", func(g *fleetGPU, x float64, s promSample) { user(g, s.Metric.User).MemMiB = x / (1 << 20) })
	each("usince", func(g *fleetGPU, x float64, s promSample) {
		if t, ok := unixTime(x); ok {
			user(g, s.Metric.User).Since = &t
		}
	})
	for _, n := range nodes {
		for i := range n.GPUs {
			g := &n.GPUs[i]
			slices.SortFunc(g.Users, func(a, b fleetUser) int { return cmp.Compare(a.User, b.User) })
			g.MemTotalMiB = finite(g.MemTotalMiB) // a sum of finite figures can overflow
			if g.IsFree() {
				n.Free++
			}
		}
		v.GPUs += len(n.GPUs)
		v.Free += n.Free
		v.Nodes = append(v.Nodes, *n)
	}
	slices.SortFunc(v.Nodes, func(a, b fleetNode) int {
		return cmp.Or(cmp.Compare(a.Hostname, b.Hostname), cmp.Compare(a.Instance, b.Instance))
	})
	return v, nil
}

// finite is x, or nil (N/A) when x is not a finite number.
func finite(x *float64) *float64 {
	if x == nil || math.IsNaN(*x) || math.IsInf(*x, 0) {
		return nil
	}
	return x
}

// deref is *x, or 0 for nil.
func deref(x *float64) float64 {
	if x == nil {
		return 0
	}
	return *x
}

var fleetPage = template.Must(template.New("fleet").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="{{.Refresh}}">
<title>GPU fleet</title><style>` + style + `</style></head><body>
<h1>GPU fleet</h1>
<div class="sub">{{.V.Free}} of {{.V.GPUs}} GPUs free on {{len .V.Nodes}} nodes · from Prometheus at {{.Prom}} · {{.V.Time.Format "2006-01-02 15:04:05 MST"}} · reloads every {{.Refresh}} s · <a href="api/fleet">JSON</a></div>
{{if .Err}}<p class="bad">{{.Err}}</p>{{end}}
{{range .V.Nodes}}<h2><a href="{{.URL}}">{{.Hostname}}</a> <small>{{.Free}} of {{len .GPUs}} GPUs free{{if not .Up}} · <span class="bad">down</span>{{end}}{{if .Driver}} · driver {{.Driver}}{{end}}</small></h2>
<table><tr><th>GPU</th><th>Model</th><th>State</th><th>Utilization</th><th>Memory (MiB)</th><th>Users</th><th>Held for</th></tr>
{{range .GPUs}}<tr><td>{{.Index}}</td><td>{{.Model}}</td>
<td>{{with .State}}<span class="{{stateClass .}}">{{.}}</span>{{end}}</td>
<td><span class="bar"><i style="width:{{pct .Util}}%"></i></span>{{percent .Util}}</td>
<td class="n">{{num .MemUsedMiB 0}} / {{num .MemTotalMiB 0}}</td>
<td>{{range .Users}}{{.User}} ({{printf "%.0f" .Processes}}, {{mib .MemMiB}} MiB)<br>{{end}}</td>
<td>{{range .Users}}{{since .Since $.V.Time}}<br>{{end}}</td></tr>{{end}}</table>
{{else}}<p>Prometheus has no nvgo-exporter series yet.</p>{{end}}
</body></html>
`))

// page serves "/": the fleet page.
func (f *fleet) page(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	v, err := f.view(r.Context())
	msg, status := "", http.StatusOK
	if err != nil {
		msg, status = err.Error(), http.StatusBadGateway
	}
	writePage(w, f.log, status, fleetPage, struct {
		V       fleetView
		Err     string
		Prom    string
		Refresh int
	}{v, msg, f.prom.Redacted(), pageRefresh})
}

// json serves "/api/fleet".
func (f *fleet) json(w http.ResponseWriter, r *http.Request) {
	v, err := f.view(r.Context())
	status := http.StatusOK
	if err != nil {
		v.Errors = append(v.Errors, err.Error())
		status = http.StatusBadGateway
	}
	writeJSON(w, f.log, status, v)
}
