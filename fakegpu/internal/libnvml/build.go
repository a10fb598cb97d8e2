package libnvml

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// FileName is the library's file name, the one NVML clients load.
const FileName = "libnvidia-ml.so.1"

// HelperName is the fleet helper's file name: the library runs it from its
// own directory when NVGO_FAKE_FLEET names a preset or a scenario file.
const HelperName = "nvgo-fake-fleet"

// A Driver is a driver branch the library can imitate.
type Driver struct {
	// Name is what --driver takes: "current", "r470" or "r418".
	Name string
	// Branch is the NVGO_DRIVER the C sources test: functions newer than
	// the branch are left out of the library.
	Branch int
	// FieldLimit is one more than the largest field ID the branch knows;
	// it answers a per-field INVALID_ARGUMENT for the others. 0: no limit.
	FieldLimit uint32
	// Lacks lists what the branch lacks, for --help and the README.
	Lacks string
}

// Drivers are the branches Build imitates, newest first. What each lacks
// was read off NVIDIA's nvml.h of each branch (CUDA 10.1 for R418, 11.4
// for R470, and the headers between them and R580).
var Drivers = []Driver{
	{Name: "current", Branch: 580, Lacks: "nothing this library models (R580, NVML API 13)"},
	{Name: "r470", Branch: 470, FieldLimit: 161, Lacks: "nvmlDeviceGetMemoryInfo_v2 and the _v3 process " +
		"lists (R510), nvmlDeviceGetNumFans (R510), nvmlVgpuInstanceGetLicenseInfo (R495) and _v2 (R510), " +
		"nvmlDeviceGetRunningProcessDetailList (R535), nvmlVgpuInstanceGetPlacementId (R550), " +
		"nvmlDeviceGetDriverModel_v2 (R555), nvmlDeviceGetTemperatureV (R570); field IDs from 161 " +
		"(power average, instant and current limit, PCIe byte counters) answer a per-field INVALID_ARGUMENT"},
	{Name: "r418", Branch: 418, FieldLimit: 96, Lacks: "what r470 lacks, and the MIG functions " +
		"(nvmlDeviceGetMigMode, …GetMaxMigDeviceCount, …GetMigDeviceHandleByIndex, …IsMigDeviceHandle, " +
		"…GetDeviceHandleFromMigDeviceHandle, …GetGpuInstanceId, …GetComputeInstanceId, …GetAttributes) " +
		"and nvmlDeviceGetArchitecture (R450), the _v2 process lists and …GetAttributes_v2 (R455), the MPS " +
		"process lists (R470), nvmlVgpuInstanceGetEccMode (R450) and …GetGpuInstanceId (R460); field IDs " +
		"from 96 (NVLink throughput among them) answer a per-field INVALID_ARGUMENT"},
}

// DriverNamed returns the Driver called name ("" is "current").
func DriverNamed(name string) (Driver, error) {
	if name == "" {
		name = "current"
	}
	for _, d := range Drivers {
		if d.Name == name {
			return d, nil
		}
	}
	names := make([]string, len(Drivers))
	for i, d := range Drivers {
		names[i] = d.Name
	}
	return Driver{}, fmt.Errorf("no driver %q (want one of %s)", name, strings.Join(names, ", "))
}

// BuildOptions say how Build compiles the library.
type BuildOptions struct {
	// Driver is the branch to imitate (the zero Driver: "current").
	Driver Driver
	// CC is the C compiler: $CC, else gcc.
	CC string
	// HeaderDir holds the nvml.h to compile against: go-nvml's, by default.
	HeaderDir string
}

func (o BuildOptions) withDefaults() (BuildOptions, error) {
	if o.Driver.Name == "" {
		o.Driver = Drivers[0]
	}
	if o.CC == "" {
		o.CC = os.Getenv("CC")
	}
	if o.CC == "" {
		o.CC = "gcc"
	}
	if o.HeaderDir == "" {
		dir, err := GoNVMLHeaderDir()
		if err != nil {
			return o, err
		}
		o.HeaderDir = dir
	}
	return o, nil
}

// GoNVMLHeaderDir finds the directory of go-nvml's nvml.h: with `go list`
// in the current module, else in the module cache at the version this
// binary was built with.
func GoNVMLHeaderDir() (string, error) {
	const mod = "github.com/NVIDIA/go-nvml"
	check := func(dir string) (string, bool) {
		dir = filepath.Join(dir, "pkg", "nvml")
		_, err := os.Stat(filepath.Join(dir, "nvml.h"))
		return dir, err == nil
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output(); err == nil {
		if dir, ok := check(strings.TrimSpace(string(out))); ok {
			return dir, nil
		}
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path != mod {
				continue
			}
			cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
			if err != nil {
				break
			}
			if dir, ok := check(filepath.Join(strings.TrimSpace(string(cache)), "github.com", "!n!v!i!d!i!a", "go-nvml@"+d.Version)); ok {
				return dir, nil
			}
		}
	}
	return "", errors.New("cannot find go-nvml's nvml.h (run inside the nvgo module, or give the directory that holds it)")
}

// Build compiles the library into dir/libnvidia-ml.so.1 (with a
// libnvidia-ml.so link beside it, for linkers) and returns its path.
func Build(ctx context.Context, dir string, o BuildOptions) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	src, err := os.MkdirTemp("", "nvgo-libnvml-src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	var cfiles []string
	err = fs.WalkDir(sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := sources.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(src, filepath.Base(path))
		if strings.HasSuffix(path, ".c") {
			cfiles = append(cfiles, dst)
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		return "", err
	}
	slices.Sort(cfiles)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, FileName)
	tmp := out + ".tmp"
	args := []string{"-shared", "-fPIC", "-O2", "-g", "-std=gnu11", "-fvisibility=hidden",
		"-Wall", "-Wextra", "-Wno-deprecated-declarations",
		fmt.Sprintf("-DNVGO_DRIVER=%d", o.Driver.Branch)}
	if o.Driver.FieldLimit != 0 {
		args = append(args, fmt.Sprintf("-DNVGO_FIELD_LIMIT=%du", o.Driver.FieldLimit))
	}
	args = append(args, "-I", src, "-I", o.HeaderDir, "-Wl,-soname,"+FileName, "-o", tmp)
	args = append(args, cfiles...)
	args = append(args, "-ldl", "-lpthread")
	cmd := exec.CommandContext(ctx, o.CC, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("compiling %s with %s: %w\n%s", FileName, o.CC, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", err
	}
	link := filepath.Join(dir, "libnvidia-ml.so")
	os.Remove(link)
	if err := os.Symlink(FileName, link); err != nil {
		return "", err
	}
	return out, nil
}

// sourceHash identifies a build: the sources, nvml.h and the options.
func sourceHash(o BuildOptions) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%q %d %d %q\n", o.Driver.Name, o.Driver.Branch, o.Driver.FieldLimit, o.CC)
	err := fs.WalkDir(sources, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := sources.ReadFile(path)
		fmt.Fprintf(h, "%s %d\n", path, len(data))
		h.Write(data)
		return err
	})
	if err != nil {
		return "", err
	}
	hdr, err := os.ReadFile(filepath.Join(o.HeaderDir, "nvml.h"))
	if err != nil {
		return "", err
	}
	h.Write(hdr)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// CacheVariable names the environment variable that sets the directory
// Cached builds into.
const CacheVariable = "NVGO_LIBNVML_CACHE"

// Cached builds the library once per set of sources and options, in
// CacheDir, and returns the directory that holds it: tests and benchmarks
// of several packages share one build.
func Cached(ctx context.Context, o BuildOptions) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	key, err := sourceHash(o)
	if err != nil {
		return "", err
	}
	base, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, o.Driver.Name+"-"+key)
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return "", err
	}
	if _, err := Build(ctx, tmp, o); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process built it first.
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, FileName)); serr != nil {
			return "", err
		}
	}
	return dir, nil
}

// CacheDir returns the directory Cached builds into: $NVGO_LIBNVML_CACHE
// when set, else nvgo-libnvml-<uid> in the temporary directory, never the
// user's home (tests write there unasked otherwise). The directory in the
// temporary directory is created private to the user, and refused if
// another user owns it or may write to it (it would hand the tests a
// library of its choosing).
func CacheDir() (string, error) {
	if dir := os.Getenv(CacheVariable); dir != "" {
		return dir, nil
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("nvgo-libnvml-%d", os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("libnvml: cache directory: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return "", fmt.Errorf("libnvml: cache directory %s: %w (set $%s to use another)", dir, err, CacheVariable)
	}
	return dir, nil
}
