// Command nvgo-exporter serves a node's NVIDIA GPU metrics to Prometheus, names
// and labels as dcgm-exporter's so that its dashboards work unchanged, plus
// what dcgm-exporter gives only under Kubernetes: who uses which GPU (per
// user, and with --per-process per process) and which GPUs are free. It
// also serves the node's page ("/", and "/api/node" as JSON).
//
// With --prometheus URL it is the fleet page instead: every node's GPUs,
// users and free GPUs, read from that Prometheus server's HTTP API when a
// view asks (views within a few seconds share one read, and answers are
// bounded in size); it then reads no GPU.
//
// Utilization is the mean since the previous scrape, from the driver's
// sample buffers read by nvgo's accumulator every --interval, not the last
// moment. A reading a device does not have (a fan on an SXM board, a figure
// a MIG device lacks) is no sample, never 0.
//
// The exporter is read-only: it sends no signal and writes nothing. A scrape
// reveals the GPUs, their figures, the user names of the processes on them
// and, with --per-process, their PIDs and short command names (never
// command lines).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

// usage is the --help text.
var usage = fmt.Sprintf(`usage: nvgo-exporter [--listen ADDR] [--simulate NAME|FILE] [--hostname NAME]
                     [--per-process [--per-process-max N]]
                     [--interval DURATION] [--max-connections N]
       nvgo-exporter --prometheus URL [--listen ADDR] [--max-connections N]

Serves this node's NVIDIA GPU metrics to Prometheus at /metrics, with
dcgm-exporter's names, units and labels (DCGM_FI_DEV_GPU_UTIL, ...), and
nvgo's own families: nvgo_gpu_free (1: nobody uses the GPU and work can run
on it; a GPU with MIG on needs MIG devices, all free), nvgo_gpu_processes,
nvgo_gpu_user_processes, nvgo_gpu_user_memory_used_bytes and
nvgo_gpu_user_start_time_seconds per user, nvgo_gpu_info, nvgo_up. GPU and
memory utilization are means since the previous scrape. "/" is the node's
page, "/api/node" the same as JSON.

With --prometheus, it serves the fleet page instead: every node that
Prometheus scrapes, its GPUs, who uses them, since when, and which are free.

options:
  --listen ADDR         address to serve on (default :9400, dcgm-exporter's)
%s
  --hostname NAME       the node's name in the hostname label (default: this
                        host's name); give simulated nodes their own
  --hostname-label NAME the host label's name: hostname (default), or
                        Hostname as older dcgm-exporters spell it
  --per-process         also serve one series per process (pid, user, short
                        command): GPU memory and SM share
  --per-process-max N   most processes served per scrape (default 500); the
                        rest are counted in nvgo_process_series_dropped
  --interval DURATION   how often the driver's samples are read into the
                        means (default 1s)
  --prometheus URL      serve the fleet page from this Prometheus server
  --max-connections N   most client connections held open (default 256,
                        fewer where the open-file limit is low); past it
                        the connection idle the longest is closed
  -h, --help            show this help

exit status: 0 stopped by SIGINT, SIGTERM or SIGHUP (there is nothing to
reload: SIGHUP stops it as SIGTERM does); 1 no usable NVIDIA driver (one
line says why), cannot listen, or a bad --simulate file; 2 bad arguments
`, tool.SimulateHelp("  --simulate NAME|FILE  ", "serve", "or a scenario JSON file; its clock follows real time"))

// options are the command line's.
type options struct {
	listen, simulate, hostname, hostLabel, prometheus string
	perProcess                                        bool
	maxProcesses                                      int
	interval                                          time.Duration
	maxConns                                          int
}

// parseArgs reads the flags; -flag, --flag and --flag=value all work.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	fs := tool.NewFlagSet("nvgo-exporter")
	fs.StringVar(&o.listen, "listen", ":9400", "")
	fs.StringVar(&o.simulate, "simulate", "", "")
	fs.StringVar(&o.hostname, "hostname", "", "")
	fs.StringVar(&o.hostLabel, "hostname-label", "hostname", "")
	fs.StringVar(&o.prometheus, "prometheus", "", "")
	fs.BoolVar(&o.perProcess, "per-process", false, "")
	fs.IntVar(&o.maxProcesses, "per-process-max", 500, "")
	fs.DurationVar(&o.interval, "interval", time.Second, "")
	fs.IntVar(&o.maxConns, "max-connections", defaultLimits.maxConns, "")
	if err := tool.ParseFlags(fs, args); err != nil {
		return nil, err
	}
	switch {
	case o.listen == "":
		return nil, errors.New("--listen needs an address, e.g. :9400")
	case tool.Given(fs, "simulate") && o.simulate == "":
		return nil, tool.ErrNoSimulation
	case tool.Given(fs, "hostname") && o.hostname == "":
		return nil, errors.New("--hostname needs a name")
	case o.hostLabel != "hostname" && o.hostLabel != "Hostname":
		return nil, fmt.Errorf("--hostname-label %q: want hostname or Hostname", o.hostLabel)
	case o.maxProcesses < 0:
		return nil, fmt.Errorf("--per-process-max %d: want 0 or more", o.maxProcesses)
	case o.interval < 10*time.Millisecond:
		return nil, fmt.Errorf("--interval %s: want at least 10ms", o.interval)
	case o.maxConns < 1:
		return nil, fmt.Errorf("--max-connections %d: want 1 or more", o.maxConns)
	case o.prometheus != "" && (o.simulate != "" || o.perProcess):
		return nil, errors.New("--prometheus serves the fleet page and reads no GPU: leave out --simulate and --per-process")
	case tool.Given(fs, "prometheus"):
		u, err := url.Parse(o.prometheus)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--prometheus %q: want an http:// or https:// URL of a Prometheus server", o.prometheus)
		}
	}
	return o, nil
}

// stopSignals stop the exporter gracefully (in-flight scrapes finish, exit
// 0). SIGHUP is one of them: the exporter has nothing to reload, and a
// hang-up (a closed terminal, a supervisor's "reload") must not kill it
// with 129 mid-scrape.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	stop()
	os.Exit(code)
}

// run is the command; ready, when not nil, gets the address served on.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	o, err := parseArgs(args)
	if code, done := tool.ArgsDone(err, usage, stdout, stderr, "nvgo-exporter: %v\n(see nvgo-exporter --help)\n"); done {
		return code
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	mux, closeFn, err := handler(ctx, o, log)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-exporter: %v\n", tool.ExplainNoDriver(err))
		return 1
	}
	defer closeFn()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-exporter: %v\n", err)
		return 1
	}
	limits := defaultLimits
	fileLimit, known := openFileLimit()
	limits.maxConns = connBound(o.maxConns, fileLimit, known, log)
	conns := limitConns(ln, limits.maxConns)
	srv := newServer(mux, limits, conns, log)
	log.Info("serving", "addr", ln.Addr().String(), "fleet", o.prometheus != "", "max_connections", limits.maxConns)
	if ready != nil {
		ready(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(conns) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "nvgo-exporter: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shut)
	log.Info("stopped")
	return 0
}

// handler builds what the exporter serves: the fleet page, or the node's
// metrics and pages. closeFn releases the driver.
func handler(ctx context.Context, o *options, log *slog.Logger) (http.Handler, func(), error) {
	mux := http.NewServeMux()
	if o.prometheus != "" {
		u, _ := url.Parse(o.prometheus)
		f := newFleet(u, log)
		mux.HandleFunc("/", f.page)
		mux.HandleFunc("/api/fleet", f.json)
		return mux, func() {}, nil
	}
	lib, err := tool.OpenAvailable(o.simulate, true, nvgo.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	host := o.hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	r, err := newReader(ctx, lib, host, o.interval)
	if err != nil {
		lib.Close()
		return nil, nil, err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(newCollector(r, o.hostLabel, o.perProcess, o.maxProcesses)); err != nil {
		lib.Close()
		return nil, nil, err
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}))
	p := &pages{r: r, log: log}
	mux.HandleFunc("/", p.node)
	mux.HandleFunc("/api/node", p.nodeJSON)
	return mux, func() { lib.Close() }, nil
}
