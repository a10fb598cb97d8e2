package cudaprobe

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

const (
	// markerEnv marks a process as a probe child. Its value is markerPrefix
	// plus the protocol version, so a child from another nvgo version answers
	// with an error instead of running the host program's main.
	markerEnv    = "NVGO_CUDAPROBE_CHILD"
	markerPrefix = "nvgo-cudaprobe/"
	protocol     = markerPrefix + "1"

	libEnv     = "NVGO_LIBCUDA"
	defaultLib = "libcuda.so.1"
)

// reply is the one JSON line a child prints on stdout.
type reply struct {
	Protocol      string    `json:"protocol"`
	UUIDs         []string  `json:"uuids,omitempty"`
	UUIDFunc      string    `json:"uuid_func,omitempty"`
	DriverVersion int       `json:"driver_version,omitempty"`
	Err           *replyErr `json:"error,omitempty"`
}

// Kinds of replyErr, one per sentinel.
const (
	kindNoLib    = "no-libcuda"
	kindSymbol   = "symbol-missing"
	kindCUDA     = "cuda"
	kindNoCGO    = "no-cgo"
	kindProtocol = "protocol"
)

type replyErr struct {
	Kind string `json:"kind"`
	Msg  string `json:"msg,omitempty"`  // dlerror text, symbol name, …
	Op   string `json:"op,omitempty"`   // kindCUDA: driver function
	Code int    `json:"code,omitempty"` // kindCUDA: CUresult
	Name string `json:"name,omitempty"` // kindCUDA: cuGetErrorName text
}

func init() {
	marker, ok := os.LookupEnv(markerEnv)
	if !ok || !strings.HasPrefix(marker, markerPrefix) {
		return
	}
	// First, so that nothing the child starts (libcuda included) inherits it.
	os.Unsetenv(markerEnv)
	os.Exit(serveChild(marker, os.Stdout))
}

// serveChild runs the probe and writes its reply to w; it returns the exit code.
func serveChild(marker string, w io.Writer) int {
	var r reply
	if marker != protocol {
		r.Err = &replyErr{Kind: kindProtocol, Msg: fmt.Sprintf("child speaks %s, parent asked for %s", protocol, marker)}
	} else {
		r = probeDriver()
	}
	r.Protocol = protocol
	if err := json.NewEncoder(w).Encode(r); err != nil {
		return 3
	}
	return 0
}

// result turns a decoded reply into Probe's return values.
func (r *reply) result() (Result, error) {
	if e := r.Err; e != nil {
		switch e.Kind {
		case kindNoLib:
			return Result{}, fmt.Errorf("%w: %s", ErrNoLibCUDA, e.Msg)
		case kindSymbol:
			return Result{}, fmt.Errorf("%w: %s", ErrSymbolMissing, e.Msg)
		case kindCUDA:
			return Result{}, &CUDAError{Op: e.Op, Code: e.Code, Name: e.Name}
		case kindNoCGO:
			return Result{}, fmt.Errorf("cudaprobe: %w", ErrBuiltWithoutCGO)
		default:
			return Result{}, fmt.Errorf("%w: child reported %s: %s", ErrChild, e.Kind, e.Msg)
		}
	}
	uuids := r.UUIDs
	if uuids == nil {
		uuids = []string{}
	}
	return Result{UUIDs: uuids, UUIDFunc: r.UUIDFunc, DriverVersion: r.DriverVersion}, nil
}
