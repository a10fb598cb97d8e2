//go:build cgo

// Command libnvml builds nvgo's drop-in libnvidia-ml.so.1: the fake GPU
// fleet of package fakegpu as a C library that any NVML client loads in
// place of the driver's (nvgo built with cgo, C programs, Python's ctypes
// and pynvml, nvitop, atop's atopgpud).
//
//	go run ./fakegpu/cmd/libnvml -o DIR [--driver current|r470|r418]
//
// writes DIR/libnvidia-ml.so.1 (compiled with gcc against go-nvml's nvml.h)
// and DIR/nvgo-fake-fleet, the helper the library starts when
// NVGO_FAKE_FLEET names a preset or a scenario file. Then:
//
//	NVGO_FAKE_FLEET=dgx-h100 LD_LIBRARY_PATH=DIR any-nvml-client
//
// The helper is this same program: "libnvml serve" loads a fleet, publishes
// it in a state file (fakegpu.Mirror) and keeps it up to date with the
// system clock until the library that started it shuts down or exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/internal/libnvml"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "serve" {
		return serve(args[1:], stderr)
	}
	return build(args, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `usage: libnvml -o DIR [--driver NAME] [--cc CC] [--nvml-h DIR]

Builds nvgo's drop-in NVML library from the fake GPU fleet: DIR/%s,
and DIR/%s, the helper it starts to serve presets and scenario files.

options:
  -o DIR           where to write the library (created if missing)
  --driver NAME    the driver branch to imitate:
`, libnvml.FileName, libnvml.HelperName)
	for _, d := range libnvml.Drivers {
		fmt.Fprintf(w, "                     %-8s lacks %s\n", d.Name, d.Lacks)
	}
	fmt.Fprintf(w, `  --cc CC          the C compiler (default $CC, else gcc)
  --nvml-h DIR     the directory of the nvml.h to compile against
                   (default: go-nvml's, found with go list)
  -h, --help       show this help

Use it by putting DIR first in LD_LIBRARY_PATH:
  NVGO_FAKE_FLEET=PRESET|FILE  the fleet (default dgx-h100): %s,
                               a scenario JSON file, or a state file
                               written by fakegpu.Mirror (live)
  NVGO_FAKE_INIT_ERROR=CODE    every nvmlInit fails with CODE, e.g.
                               DRIVER_NOT_LOADED or 9
  NVGO_FAKE_CALLS=FILE         call counts per function, written as JSON at
                               the last nvmlShutdown and at exit
`, strings.Join(fakegpu.PresetNames(), ", "))
}

func build(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("libnvml", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "")
	driver := fs.String("driver", "current", "")
	cc := fs.String("cc", "", "")
	header := fs.String("nvml-h", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "libnvml: %v\n(see libnvml --help)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "libnvml: unexpected argument %q\n(see libnvml --help)\n", fs.Arg(0))
		return 2
	}
	if *out == "" {
		fmt.Fprintf(stderr, "libnvml: -o DIR is required\n(see libnvml --help)\n")
		return 2
	}
	d, err := libnvml.DriverNamed(*driver)
	if err != nil {
		fmt.Fprintf(stderr, "libnvml: --driver: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lib, err := libnvml.Build(ctx, *out, libnvml.BuildOptions{Driver: d, CC: *cc, HeaderDir: *header})
	if err != nil {
		fmt.Fprintf(stderr, "libnvml: %v\n", err)
		return 1
	}
	helper := filepath.Join(*out, libnvml.HelperName)
	if err := copySelf(helper); err != nil {
		fmt.Fprintf(stderr, "libnvml: writing the fleet helper: %v\n", err)
		return 1
	}
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(stdout, "%s (driver %s)\n%s\n\nNVGO_FAKE_FLEET=dgx-h100 LD_LIBRARY_PATH=%s your-nvml-client\n",
		lib, d.Name, helper, abs)
	return 0
}

// copySelf writes this program to path: the library runs it as its
// helper ("serve"), so the helper always matches the library's layout.
func copySelf(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := path + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// serve is the helper: it publishes a fleet in a state file for the
// library that started it, says "ok" on the ready descriptor once the
// first state is there, and keeps the state up to date until the parent
// descriptor reaches end of file (the library shut down, or its process
// ended). Its one line on stderr, if the fleet cannot be loaded, is what
// the client's user sees.
func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("libnvml serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fleetName := fs.String("fleet", "", "")
	state := fs.String("state", "", "")
	readyFD := fs.Int("ready-fd", -1, "")
	parentFD := fs.Int("parent-fd", -1, "")
	interval := fs.Duration("interval", 100*time.Millisecond, "")
	if err := fs.Parse(args); err != nil || *fleetName == "" || *state == "" {
		fmt.Fprintln(stderr, "nvgo fake libnvidia-ml: usage: libnvml serve --fleet NAME|FILE --state PATH [--ready-fd N] [--parent-fd N]")
		return 2
	}
	// The client's terminal may send it ^C: the helper leaves when its
	// client does, not before.
	signal.Ignore(os.Interrupt)
	fleet, err := fakegpu.Load(*fleetName)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo fake libnvidia-ml: NVGO_FAKE_FLEET=%s: %v\n", *fleetName, err)
		return 2
	}
	m, err := fakegpu.NewMirror(fleet, *state)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo fake libnvidia-ml: %v\n", err)
		return 1
	}
	defer m.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *parentFD >= 0 {
		parent := os.NewFile(uintptr(*parentFD), "parent")
		go func() {
			io.Copy(io.Discard, parent) // returns at end of file
			cancel()
		}()
	}
	// Bring the clock to the present before the client's first read.
	fleet.Advance(time.Since(fleet.Now()))
	if err := m.Sync(); err != nil {
		fmt.Fprintf(stderr, "nvgo fake libnvidia-ml: %v\n", err)
	}
	if *readyFD >= 0 {
		ready := os.NewFile(uintptr(*readyFD), "ready")
		ready.Write([]byte("ok\n"))
		ready.Close()
	}
	if err := m.Run(ctx, *interval); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "nvgo fake libnvidia-ml: %v\n", err)
		return 1
	}
	return 0
}
