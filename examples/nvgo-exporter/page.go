package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nvgo/nvgo"
)

// pageRefresh is how often the pages reload themselves.
const pageRefresh = 5

// style is the pages' one stylesheet.
const style = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}
h1{font-size:1.3em;margin:0 0 .2em}
.sub{color:#666;margin-bottom:1em}
table{border-collapse:collapse;width:100%;background:#fff;margin-bottom:1.5em}
th,td{border-bottom:1px solid #ddd;padding:.35em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.free{color:#0a7d32;font-weight:600}.busy{color:#b35900;font-weight:600}.bad{color:#b00020;font-weight:600}
.bar{display:inline-block;width:80px;height:.7em;background:#e5e5e5;margin-right:.4em;vertical-align:middle}
.bar i{display:block;height:100%;background:#4a7bd0}
code{font-size:.95em}
details summary{cursor:pointer;color:#666}
table.readings{margin:.3em 0 0;width:auto}table.readings td{border:0;padding:.1em .6em}
`

// funcs are the templates' helpers; every string goes through html/template,
// which escapes it.
var funcs = template.FuncMap{
	"num": func(x *float64, digits int) string {
		if x == nil {
			return "N/A"
		}
		return fmt.Sprintf("%.*f", digits, *x)
	},
	"pct": func(x *float64) float64 {
		if x == nil {
			return 0
		}
		return math.Max(0, math.Min(100, *x))
	},
	"percent": func(x *float64) string {
		if x == nil {
			return "N/A"
		}
		return fmt.Sprintf("%.0f %%", *x)
	},
	"mib": func(x float64) string { return fmt.Sprintf("%.0f", x) },
	"inMiB": func(x *float64) *float64 {
		if x == nil {
			return nil
		}
		y := *x / (1 << 20)
		return &y
	},
	"readings": readingsOf,
	"since": func(t *time.Time, now time.Time) string {
		if t == nil {
			return "N/A"
		}
		return ago(now.Sub(*t))
	},
	"stateClass": func(state string) string {
		switch state {
		case "free":
			return "free"
		case "unknown":
			return "bad"
		}
		return "busy"
	},
	"pids": func(ps []processView) string {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = fmt.Sprintf("%d %s (%s)", p.PID, p.Command, p.User)
		}
		return strings.Join(s, ", ")
	},
}

// reading is one line of a GPU's "every reading" list.
type reading struct{ Name, Value, Help string }

// readingsOf lists the readings of g that are not N/A, in nvgo's order of
// metrics, each written in its unit.
func readingsOf(g gpuView) []reading {
	var out []reading
	for _, m := range metrics {
		if x, ok := g.Metrics[m.Name]; ok {
			out = append(out, reading{m.Name, formatReading(x, m), m.Help})
		}
	}
	return out
}

// formatReading writes x, a reading of m, as a person reads it.
func formatReading(x float64, m nvgo.DeviceMetric) string {
	switch m.Unit {
	case nvgo.UnitBytes:
		return nvgo.Bytes(x).String()
	case nvgo.UnitKiBPerSecond:
		return nvgo.KiBPerSecond(x).String()
	case nvgo.UnitMilliWatts:
		return fmt.Sprintf("%.1f W", x/1000)
	case nvgo.UnitPercent:
		return fmt.Sprintf("%.0f %%", x)
	case nvgo.UnitNone:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprintf("%.0f %s", x, m.Unit)
}

// ago writes a duration as a person reads it: "45s", "12m", "3h 5m", "2d 4h".
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

var nodePage = template.Must(template.New("node").Funcs(funcs).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="{{.Refresh}}">
<title>{{.V.Hostname}}: GPUs</title><style>` + style + `</style></head><body>
<h1>{{.V.Hostname}}</h1>
<div class="sub">{{.Free}} of {{len .V.GPUs}} GPUs free · driver {{.V.Driver}} · CUDA {{.V.CUDA}} · {{.V.Time.Format "2006-01-02 15:04:05 MST"}} ·
{{if gt .V.Interval 0.0}}utilization: mean over the last {{printf "%.0f" .V.Interval}} s{{else}}utilization: the driver's last sample{{end}} · reloads every {{.Refresh}} s · <a href="api/node">JSON</a> · <a href="metrics">metrics</a></div>
{{if .V.Err}}<p class="bad">The driver could not be read: {{.V.Err}}</p>{{end}}
<table><tr><th>GPU</th><th>Model</th><th>State</th><th>Utilization</th><th>Memory (MiB)</th><th>Users</th><th>Since</th><th>Processes</th></tr>
{{range .V.GPUs}}{{$g := .}}<tr>
<td>{{.Index}}</td><td>{{.Name}}<br><code>{{.BusID}}</code></td>
{{if .Err}}<td class="bad" colspan="6">{{.Err}}</td>{{else}}
<td>{{with .State}}<span class="{{stateClass .}}">{{.}}</span>{{end}}</td>
<td><span class="bar"><i style="width:{{pct (.Metric "gpu_utilization")}}%"></i></span>{{percent (.Metric "gpu_utilization")}}</td>
<td class="n">{{num (inMiB (.Metric "memory_used")) 0}} / {{num (inMiB (.Metric "memory_total")) 0}}</td>
<td>{{range .Users}}{{.User}} ({{.Processes}}, {{mib .MemMiB}} MiB)<br>{{end}}</td>
<td>{{range .Users}}{{since .Since $.V.Time}}<br>{{end}}</td>
<td>{{pids .Processes}}{{range .MIGs}}<br>MIG {{.MIGProfile}}: {{pids .Processes}}{{end}}</td>{{end}}
</tr>{{if not .Err}}<tr><td></td><td colspan="7"><details><summary>Every reading</summary><table class="readings">
{{range readings .}}<tr><td><code>{{.Name}}</code></td><td class="n">{{.Value}}</td><td>{{.Help}}</td></tr>{{end}}</table></details></td></tr>{{end}}{{end}}</table>
</body></html>
`))

// pages serves the node's page and its JSON.
type pages struct {
	r   *reader
	cur cursor
	log *slog.Logger
}

// view reads the node for a page.
func (p *pages) view(r *http.Request) nodeView {
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	return p.r.read(ctx, &p.cur)
}

// node serves "/": the node's page.
func (p *pages) node(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	v := p.view(r)
	free := 0
	for i := range v.GPUs {
		if v.GPUs[i].IsFree() {
			free++
		}
	}
	writePage(w, p.log, http.StatusOK, nodePage, struct {
		V       nodeView
		Free    int
		Refresh int
	}{v, free, pageRefresh})
}

// nodeJSON serves "/api/node".
func (p *pages) nodeJSON(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, p.log, http.StatusOK, p.view(r))
}

// writeJSON writes v as indented JSON with status. It encodes into a buffer
// first, so that a value JSON cannot hold is a 500 with a message, never a
// 200 with an empty or cut body.
func writeJSON(w http.ResponseWriter, log *slog.Logger, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		serverError(w, log, fmt.Errorf("encoding the answer as JSON: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// writePage writes the page t makes of data with status, through a buffer
// as writeJSON does.
func writePage(w http.ResponseWriter, log *slog.Logger, status int, t *template.Template, data any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		serverError(w, log, fmt.Errorf("writing the %s page: %w", t.Name(), err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// serverError answers 500 with err, which it also logs.
func serverError(w http.ResponseWriter, log *slog.Logger, err error) {
	log.Error("answering a request", "err", err)
	http.Error(w, "nvgo-exporter: "+err.Error(), http.StatusInternalServerError)
}
