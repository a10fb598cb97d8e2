package main

import (
	"bytes"
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
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakePrometheus is Prometheus's HTTP API as the fleet page's tests need
// it: answer writes the answer to each instant query. It counts the
// queries and the most it was answering at once.
type fakePrometheus struct {
	url                  *url.URL
	queries, mostRunning atomic.Int64
	running              atomic.Int64
	answer               func(w http.ResponseWriter, query string)
}

// newFakePrometheus serves answer until the test ends.
func newFakePrometheus(t *testing.T, answer func(w http.ResponseWriter, query string)) *fakePrometheus {
	t.Helper()
	p := &fakePrometheus{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.queries.Add(1)
		n := p.running.Add(1)
		defer p.running.Add(-1)
		for most := p.mostRunning.Load(); n > most && !p.mostRunning.CompareAndSwap(most, n); most = p.mostRunning.Load() {
		}
		p.answer(w, r.URL.Query().Get("query"))
	}))
	t.Cleanup(srv.Close)
	p.url, _ = url.Parse(srv.URL)
	return p
}

// testFleet is the fleet page over the Prometheus at u, logging nowhere
// and sharing no read between views.
func testFleet(u *url.URL) *fleet {
	f := newFleet(u, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.shareFor = 0
	return f
}

// roleOf is the role of each of the fleet page's queries (fleetQueries
// the other way round).
func roleOf(query string) string {
	for role, q := range fleetQueries {
		if q == query {
			return role
		}
	}
	return ""
}

// testInstance and testUUID are the one GPU of oneGPU's fleet.
const testInstance, testUUID = "10.0.0.1:9400", "GPU-11111111-2222-3333-4444-555555555555"

// oneGPU answers the fleet page's queries for one node with one GPU used
// by alice, with the values by role in values (the others: a figure each;
// "none": no series), and its MIG mode in values["mig_mode"].
func oneGPU(values map[string]string) func(w http.ResponseWriter, query string) {
	return func(w http.ResponseWriter, query string) {
		role := roleOf(query)
		labels := map[string]string{"instance": testInstance, "job": "nvgo", "UUID": testUUID, "gpu": "0"}
		value := map[string]string{"info": "1", "up": "1", "util": "40", "used": "1024", "fbfree": "80000", "resv": "500",
			"procs": "1", "gpufree": "0", "uprocs": "1", "umem": "1073741824", "usince": "1700000000", "hostlbl": "1"}[role]
		if v, ok := values[role]; ok {
			value = v
		}
		switch role {
		case "info":
			labels["model_name"], labels["driver_version"], labels["mig_mode"] = "NVIDIA H100 80GB HBM3", "550.54.15", cmp.Or(values["mig_mode"], "disabled")
		case "uprocs", "umem", "usince":
			labels["user"] = "alice"
		case "hostlbl":
			labels["hostname"] = "node-a"
		}
		if value == "none" {
			writeVector(w)
			return
		}
		writeVector(w, series(labels, value))
	}
}

// series is one series of a vector, as Prometheus writes it.
func series(labels map[string]string, value string) string {
	l, _ := json.Marshal(labels)
	return fmt.Sprintf(`{"metric":%s,"value":[1700000100.5,%q]}`, l, value)
}

// writeVector writes a successful instant query's answer of these series.
func writeVector(w io.Writer, series ...string) {
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(series, ","))
}

// getFleetJSON serves "/api/fleet" of f once and decodes it.
func getFleetJSON(t *testing.T, f *fleet) (int, fleetView) {
	t.Helper()
	rec := httptest.NewRecorder()
	f.json(rec, httptest.NewRequest("GET", "/api/fleet", nil))
	var v fleetView
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("status %d, body %q: %v", rec.Code, rec.Body.String(), err)
	}
	return rec.Code, v
}

// A value Prometheus holds but JSON cannot (±Inf, NaN, a time past year
// 9999) is N/A on the fleet page: null in its JSON, never a 200 with an
// empty body.
func TestTheFleetJSONShowsNonFiniteValuesAsNA(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]string
		na     func(g fleetGPU) bool
	}{
		{"util=+Inf", map[string]string{"util": "+Inf"}, func(g fleetGPU) bool { return g.Util == nil }},
		{"util=NaN", map[string]string{"util": "NaN"}, func(g fleetGPU) bool { return g.Util == nil }},
		{"used=-Inf", map[string]string{"used": "-Inf"}, func(g fleetGPU) bool { return g.MemUsedMiB == nil }},
		{"the total memory overflows", map[string]string{"fbfree": "1.7e308", "resv": "1.7e308"}, func(g fleetGPU) bool { return g.MemTotalMiB == nil }},
		{"procs=+Inf", map[string]string{"procs": "+Inf"}, func(g fleetGPU) bool { return g.Processes == nil }},
		{"usince=1e300", map[string]string{"usince": "1e300"}, func(g fleetGPU) bool { return len(g.Users) == 1 && g.Users[0].Since == nil }},
		{"usince=-1e300", map[string]string{"usince": "-1e300"}, func(g fleetGPU) bool { return len(g.Users) == 1 && g.Users[0].Since == nil }},
		{"usince=253402300800", map[string]string{"usince": "253402300800"}, func(g fleetGPU) bool { return len(g.Users) == 1 && g.Users[0].Since == nil }},
		{"umem=+Inf", map[string]string{"umem": "+Inf"}, func(g fleetGPU) bool { return len(g.Users) == 1 && g.Users[0].MemMiB == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFleet(newFakePrometheus(t, oneGPU(tt.values)).url)
			code, v := getFleetJSON(t, f)
			if code != http.StatusOK || len(v.Errors) > 0 {
				t.Fatalf("status %d, errors %q; want 200", code, v.Errors)
			}
			if len(v.Nodes) != 1 || len(v.Nodes[0].GPUs) != 1 {
				t.Fatalf("nodes %+v; want one with one GPU", v.Nodes)
			}
			if g := v.Nodes[0].GPUs[0]; !tt.na(g) {
				t.Errorf("GPU %+v: want the figure N/A", g)
			}
		})
	}
}

// What cannot be encoded is a 500 that says so, never a 200 with an empty
// or cut body.
func TestAnAnswerThatCannotBeWrittenIsA500WithAMessage(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name  string
		write func(w http.ResponseWriter)
		want  string
	}{
		{"JSON of an infinite value", func(w http.ResponseWriter) { writeJSON(w, log, http.StatusOK, math.Inf(1)) }, "encoding the answer as JSON"},
		{"JSON of a time past year 9999", func(w http.ResponseWriter) {
			writeJSON(w, log, http.StatusBadGateway, struct{ T time.Time }{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
		}, "encoding the answer as JSON"},
		{"a page that fails half-way", func(w http.ResponseWriter) {
			t := template.Must(template.New("broken").Parse(`<p>half</p>{{.Missing}}`))
			writePage(w, log, http.StatusOK, t, struct{}{})
		}, "writing the broken page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.write(rec)
			if body := rec.Body.String(); rec.Code != http.StatusInternalServerError || !strings.HasPrefix(body, "nvgo-exporter: "+tt.want) {
				t.Errorf("status %d, body %q; want 500 saying %q", rec.Code, body, tt.want)
			}
		})
	}
}

// The fleet page takes whether a GPU is free from its node (nvgo_gpu_free,
// nvgo's one definition), never from its process count: a GPU with MIG on
// and no MIG devices runs nothing and is not free.
func TestTheFleetPageTakesFreeFromTheNode(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]string
		free   string
		state  string
	}{
		{"free", map[string]string{"procs": "0", "gpufree": "1", "uprocs": "none", "umem": "none", "usince": "none"}, "true", "free"},
		{"in use", map[string]string{"procs": "1", "gpufree": "0"}, "false", "in use"},
		{"MIG on and no MIG devices", map[string]string{"procs": "0", "gpufree": "0", "mig_mode": "enabled", "uprocs": "none", "umem": "none", "usince": "none"},
			"false", "no MIG devices"},
		{"the node cannot tell", map[string]string{"procs": "none", "gpufree": "none"}, "N/A", "unknown"},
		{"no process, but the node cannot tell", map[string]string{"procs": "0", "gpufree": "none"}, "N/A", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := testFleet(newFakePrometheus(t, oneGPU(tt.values)).url)
			code, v := getFleetJSON(t, f)
			if code != http.StatusOK || len(v.Nodes) != 1 || len(v.Nodes[0].GPUs) != 1 {
				t.Fatalf("status %d, %+v; want 200 and one node with one GPU", code, v)
			}
			g := v.Nodes[0].GPUs[0]
			if got := freeString(g.Free); got != tt.free || g.State() != tt.state {
				t.Errorf("free %s (%s); want %s (%s)", got, g.State(), tt.free, tt.state)
			}
			if want := map[bool]int{true: 1}[tt.free == "true"]; v.Free != want || v.Nodes[0].Free != want {
				t.Errorf("%d free in the fleet, %d on the node; want %d", v.Free, v.Nodes[0].Free, want)
			}
			rec := httptest.NewRecorder()
			f.page(rec, httptest.NewRequest("GET", "/", nil))
			if !strings.Contains(rec.Body.String(), `">`+tt.state+`</span>`) {
				t.Errorf("the fleet page does not say %q:\n%s", tt.state, rec.Body.String())
			}
		})
	}
}

// freeString is *b, or "N/A" for nil.
func freeString(b *bool) string {
	if b == nil {
		return "N/A"
	}
	return fmt.Sprint(*b)
}

// An answer over the bound is refused, and read no further than it: the
// fleet page reads no more than a fleet needs, whatever Prometheus sends.
func TestAnAnswerOverTheBoundIsRefusedUnread(t *testing.T) {
	const offered, bound = 256 << 20, 1 << 20
	for _, declared := range []bool{true, false} {
		t.Run(map[bool]string{true: "its size declared", false: "streamed"}[declared], func(t *testing.T) {
			var written atomic.Int64
			prom := newFakePrometheus(t, func(w http.ResponseWriter, query string) {
				if roleOf(query) != "info" {
					oneGPU(nil)(w, query)
					return
				}
				if declared {
					w.Header().Set("Content-Length", fmt.Sprint(offered))
				}
				chunk := []byte(strings.Repeat(" ", 64<<10))
				for written.Load() < offered {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			})
			f := testFleet(prom.url)
			f.maxAnswer = bound
			rec := httptest.NewRecorder()
			f.json(rec, httptest.NewRequest("GET", "/api/fleet", nil))
			if body := rec.Body.String(); rec.Code != http.StatusBadGateway || !strings.Contains(body, "nvgo_gpu_info") ||
				!strings.Contains(body, "the answer is too large (over 1 MiB): more than a fleet of some 20,000 GPUs needs") {
				t.Errorf("status %d, body %q; want 502 naming the query and the bound", rec.Code, body)
			}
			// What the sockets' buffers take beyond what was read is some
			// MiB; 64 MiB is what the page read before it had a bound.
			if n := written.Load(); n >= 32<<20 {
				t.Errorf("Prometheus wrote %d MiB before the page gave up; want little more than the bound, 1 MiB", n>>20)
			}
			if _, err := f.query(context.Background(), fleetQueries["info"]); !errors.Is(err, errAnswerTooLarge) {
				t.Errorf("the query alone: %v; want errAnswerTooLarge", err)
			}
		})
	}
}

// Views share one read: those that come while it runs wait for it, and
// those within shareFor after it get it; at most maxQueries queries run at
// once. A view whose client leaves stops waiting.
func TestViewsShareOneReadAndItsQueriesAreBounded(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	prom := newFakePrometheus(t, func(w http.ResponseWriter, query string) {
		<-release
		oneGPU(nil)(w, query)
	})
	t.Cleanup(releaseAll) // before the server's Close, which waits for its answers
	f := testFleet(prom.url)
	f.shareFor = 3 * time.Second
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	f.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }

	const views = 20
	codes := make(chan int, views)
	var wg sync.WaitGroup
	for i := range views {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			if i%2 == 0 {
				f.page(rec, httptest.NewRequest("GET", "/", nil))
			} else {
				f.json(rec, httptest.NewRequest("GET", "/api/fleet", nil))
			}
			codes <- rec.Code
		})
	}
	waitFor(t, 10*time.Second, "the queries did not reach Prometheus", func() bool { return prom.running.Load() >= maxQueries })
	never(t, 100*time.Millisecond, fmt.Sprintf("more than %d queries ran at once", maxQueries), func() bool { return prom.running.Load() > maxQueries })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.view(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a view whose client left: %v; want it to stop waiting", err)
	}
	releaseAll()
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("a view answered %d; want 200", code)
		}
	}
	read := int64(len(fleetQueries))
	if got := prom.queries.Load(); got != read {
		t.Errorf("%d views ran %d queries; want one read's, %d", views, got, read)
	}
	if got := prom.mostRunning.Load(); got > maxQueries {
		t.Errorf("%d queries ran at once; want at most %d", got, maxQueries)
	}

	later := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	later(f.shareFor - time.Millisecond)
	getFleetJSON(t, f)
	if got := prom.queries.Load(); got != read {
		t.Errorf("a view within %s of the read ran %d queries more; want none", f.shareFor, got-read)
	}
	later(time.Millisecond)
	getFleetJSON(t, f)
	if got := prom.queries.Load(); got != 2*read {
		t.Errorf("a view %s after the read ran %d queries; want a new read, %d", f.shareFor, got-read, read)
	}
}

// answerAll is a RoundTripper that answers every request with body.
type answerAll []byte

func (b answerAll) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Request: r,
		Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b))}, nil
}

// Whatever Prometheus answers, "/api/fleet" is JSON, with a 200 or a 502,
// and the page is written: never a crash, an empty body or a cut one.
func FuzzTheFleetPageReadsAnyAnswer(f *testing.F) {
	for _, values := range []map[string]string{nil, {"util": "+Inf"}, {"usince": "1e300"}, {"gpufree": "NaN"}} {
		rec := httptest.NewRecorder()
		oneGPU(values)(rec, fleetQueries["info"])
		f.Add(rec.Body.Bytes())
	}
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"a","UUID":"u"},"value":[1,"-Inf"]}]}}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}}`))
	f.Add([]byte(`{"status":"error","error":"\u0000"}`))
	f.Fuzz(func(t *testing.T, answer []byte) {
		fl := testFleet(&url.URL{Scheme: "http", Host: "prometheus.invalid"})
		fl.client = &http.Client{Transport: answerAll(answer)}
		rec := httptest.NewRecorder()
		fl.json(rec, httptest.NewRequest("GET", "/api/fleet", nil))
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadGateway || !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("/api/fleet: status %d, body %q; want 200 or 502 and JSON", rec.Code, rec.Body.String())
		}
		rec = httptest.NewRecorder()
		fl.page(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadGateway || !strings.HasSuffix(rec.Body.String(), "</html>\n") {
			t.Fatalf("/: status %d, body %q; want 200 or 502 and a whole page", rec.Code, rec.Body.String())
		}
	})
}
