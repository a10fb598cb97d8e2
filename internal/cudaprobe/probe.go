package cudaprobe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds a Probe whose context has no deadline. cuInit can
// take seconds on a host with many GPUs and no persistence daemon, but a hung
// driver must not hang the caller.
const DefaultTimeout = 30 * time.Second

// Env is the CUDA environment the child runs under.
type Env struct {
	Visible    string // CUDA_VISIBLE_DEVICES, used only when VisibleSet
	VisibleSet bool   // false: CUDA_VISIBLE_DEVICES is unset in the child ("" means no devices)
	Order      string // CUDA_DEVICE_ORDER, e.g. "PCI_BUS_ID"; "" leaves it unset
}

// Result is what the CUDA driver enumerated in the child.
type Result struct {
	// UUIDs of the devices in CUDA ordinal order, lowercase
	// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" without the "GPU-" or "MIG-"
	// prefix, which CUDA does not report: match them against both NVML GPU
	// and MIG UUIDs. Empty, not nil, when CUDA sees no device.
	UUIDs []string
	// UUIDFunc is the driver function that gave the UUIDs:
	// "cuDeviceGetUuid_v2", or "cuDeviceGetUuid" on drivers without it
	// (whose UUIDs for MIG devices may be those of the parent GPU).
	UUIDFunc string
	// DriverVersion is cuDriverGetVersion's value, e.g. 12040 for CUDA 12.4;
	// 0 when the driver lacks the function.
	DriverVersion int
}

const (
	stdoutMax  = 64 << 10 // the reply is the last line; this holds over a thousand UUIDs
	stderrHead = 768      // stderr kept for ErrChild messages: its start,
	stderrTail = 256      // where a crash names its signal, and its end
	childName  = "nvgo-cudaprobe"
)

// Probe runs the CUDA driver in a child process under env and returns the
// devices it enumerates. The calling process never loads libcuda, and a crash
// of the driver only ends the child (ErrChild). Cancelling ctx kills the
// child; without a deadline on ctx, DefaultTimeout applies.
//
// Errors: ErrNoLibCUDA, ErrSymbolMissing, ErrCUDA (a *CUDAError),
// ErrBuiltWithoutCGO (returned without starting a child) and ErrChild.
// CUDA_ERROR_NO_DEVICE is not an error: it gives an empty Result.UUIDs.
func Probe(ctx context.Context, env Env) (Result, error) {
	if !haveCGO {
		return Result{}, fmt.Errorf("cudaprobe: cannot load libcuda: %w", ErrBuiltWithoutCGO)
	}
	exe, err := executable()
	if err != nil {
		return Result{}, fmt.Errorf("%w: cannot find own executable: %w", ErrChild, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}

	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{childName}
	cmd.Env = childEnv(os.Environ(), env)
	stdout := &clipBuffer{tailMax: stdoutMax}
	stderr := &clipBuffer{headMax: stderrHead, tailMax: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Bound the wait for pipes a stray grandchild might hold open.
	cmd.WaitDelay = time.Second

	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Result{}, fmt.Errorf("%w: %w%s", ErrChild, ctxErr, stderr.quote())
		}
		return Result{}, fmt.Errorf("%w: %w%s", ErrChild, err, stderr.quote())
	}
	r, err := decodeReply(stdout.Bytes())
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w%s", ErrChild, err, stderr.quote())
	}
	return r.result()
}

// executable names the running binary. On Linux /proc/self/exe is used so
// that the child is this very binary even if its file was replaced since.
func executable() (string, error) {
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			return "/proc/self/exe", nil
		}
	}
	return os.Executable()
}

// childEnv is base without the CUDA variables and any marker, plus env's
// values and the marker. GORACE gains atexit_sleep_ms=0, as a race-enabled
// binary (a test binary under -race) otherwise sleeps 1 s in os.Exit.
func childEnv(base []string, env Env) []string {
	out := make([]string, 0, len(base)+4)
	race := "atexit_sleep_ms=0"
	for _, kv := range base {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", markerEnv:
			continue
		case "GORACE":
			race = val + " " + race
			continue
		}
		out = append(out, kv)
	}
	if env.VisibleSet {
		out = append(out, "CUDA_VISIBLE_DEVICES="+env.Visible)
	}
	if env.Order != "" {
		out = append(out, "CUDA_DEVICE_ORDER="+env.Order)
	}
	return append(out, "GORACE="+strings.TrimSpace(race), markerEnv+"="+protocol)
}

// decodeReply reads the last line of the child's stdout; earlier lines may
// come from init functions of other packages.
func decodeReply(stdout []byte) (*reply, error) {
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	last := lines[len(lines)-1]
	if len(last) == 0 {
		return nil, fmt.Errorf("child printed no reply")
	}
	var r reply
	if err := json.Unmarshal(last, &r); err != nil {
		return nil, fmt.Errorf("unreadable reply %q: %w", truncate(last, 200), err)
	}
	if r.Protocol != protocol {
		return nil, fmt.Errorf("reply has protocol %q, want %q", r.Protocol, protocol)
	}
	return &r, nil
}

// clipBuffer keeps the first headMax and the last tailMax bytes written to
// it. A Go crash report names the signal in its first lines and ends with
// goroutine and register dumps, so stderr keeps both ends.
type clipBuffer struct {
	headMax, tailMax int
	head, tail       []byte
	cut              bool // bytes were dropped between head and tail
}

func (b *clipBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head, p = append(b.head, p[:k]...), p[k:]
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.tailMax; over > 0 {
		b.tail = append(b.tail[:0], b.tail[over:]...)
		b.cut = true
	}
	return n, nil
}

func (b *clipBuffer) Bytes() []byte {
	if b.cut {
		return slices.Concat(b.head, []byte("\n…\n"), b.tail)
	}
	return slices.Concat(b.head, b.tail)
}

// quote formats the kept stderr for an error message, or "" if empty.
func (b *clipBuffer) quote() string {
	s := strings.TrimSpace(string(b.Bytes()))
	if s == "" {
		return ""
	}
	return fmt.Sprintf("; stderr: %q", s)
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
