package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

func TestBadArgumentsAreOneLineAndExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--listen", ""}, "--listen needs an address"},
		{[]string{"--simulate="}, "--simulate needs a preset name"},
		{[]string{"--hostname="}, "--hostname needs a name"},
		{[]string{"--hostname-label", "host"}, `--hostname-label "host": want hostname or Hostname`},
		{[]string{"--per-process-max", "-1"}, "--per-process-max -1: want 0 or more"},
		{[]string{"--interval", "1ms"}, "--interval 1ms: want at least 10ms"},
		{[]string{"--max-connections", "0"}, "--max-connections 0: want 1 or more"},
		{[]string{"--prometheus", "localhost:9090"}, `--prometheus "localhost:9090": want an http:// or https:// URL`},
		{[]string{"--prometheus", "http://p:9090", "--simulate", "dgx-h100"}, "--prometheus serves the fleet page and reads no GPU"},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr, nil); code != 2 {
				t.Errorf("exit %d; want 2", code)
			}
			want := "nvgo-exporter: " + tt.want
			if got := stderr.String(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\n(see nvgo-exporter --help)\n") || strings.Count(got, "\n") != 2 {
				t.Errorf("stderr %q; want %q… and the help's pointer", got, want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q; want nothing", stdout.String())
			}
		})
	}
}

func TestHelpGoesToStdout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr, nil); code != 0 {
		t.Errorf("exit %d; want 0", code)
	}
	for _, want := range []string{"--listen ADDR", "--prometheus URL", "--per-process-max", "--max-connections", "nvgo_gpu_processes", "means since the previous scrape"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if len(line) > 79 {
			t.Errorf("a help line is wider than 79: %q", line)
		}
	}
}

// A Prometheus that answers garbage, an error or nothing gives the fleet
// page a clear error (502), never a crash or an empty fleet shown as true.
func TestTheFleetPageSaysWhatPrometheusDidWrong(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"garbage", "\x00\x01 not json", 200, "no JSON it reads"},
		{"an error", `{"status":"error","errorType":"bad_data","error":"parse error"}`, 400, "parse error"},
		{"a matrix", `{"status":"success","data":{"resultType":"matrix","result":[]}}`, 200, "not a vector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer prom.Close()
			u, _ := url.Parse(prom.URL)
			f := testFleet(u)
			rec := httptest.NewRecorder()
			f.page(rec, httptest.NewRequest("GET", "/", nil))
			if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("status %d, page %q; want 502 saying %q", rec.Code, rec.Body.String(), tt.want)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		f := testFleet(&url.URL{Scheme: "http", Host: "127.0.0.1:1"})
		rec := httptest.NewRecorder()
		f.json(rec, httptest.NewRequest("GET", "/api/fleet", nil))
		if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "querying Prometheus") {
			t.Errorf("status %d, body %q; want 502 naming the failed query", rec.Code, rec.Body.String())
		}
	})
}

func TestWithoutADriverItSaysSoInOneLine(t *testing.T) {
	if lib, err := nvgo.Open(); err == nil {
		avail := lib.Available()
		lib.Close()
		if avail == nil {
			t.Skip("an NVIDIA driver is here")
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--listen", "127.0.0.1:0"}, &stdout, &stderr, nil)
	if code != 1 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "nvgo-exporter: no usable NVIDIA driver: ") {
		t.Errorf("exit %d, stderr %q; want 1 and one line saying there is no usable driver", code, stderr.String())
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout %q; want nothing", stdout.String())
	}
}
