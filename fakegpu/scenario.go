//go:build cgo

package fakegpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Limits that keep a hostile scenario from exhausting memory.
const (
	maxScenarioGPUs  = 256
	maxGPUProcesses  = 4096
	maxMiB           = 1 << 30 // 1 PiB: MiB values must fit bytes in a uint64
	maxSymbolNameLen = 128
)

// scenario is the top level of a scenario document (see the package doc).
type scenario struct {
	Preset            *string         `json:"preset"`
	DriverVersion     *string         `json:"driver_version"`
	CUDADriverVersion *int            `json:"cuda_driver_version"`
	NVMLVersion       *string         `json:"nvml_version"`
	MissingSymbols    json.RawMessage `json:"missing_symbols"`
	InitError         *string         `json:"init_error"`
	GPUs              json.RawMessage `json:"gpus"`
}

// scenarioGPU is one element of "gpus".
type scenarioGPU struct {
	Model             *string         `json:"model"`
	Name              *string         `json:"name"`
	UUID              *string         `json:"uuid"`
	BusID             *string         `json:"bus_id"`
	Serial            *string         `json:"serial"`
	ComputeCapability *string         `json:"compute_capability"`
	MemoryTotalMiB    *uint64         `json:"memory_total_mib"`
	MemoryReservedMiB *uint64         `json:"memory_reserved_mib"`
	MemoryUsedMiB     *uint64         `json:"memory_used_mib"`
	BAR1TotalMiB      *uint64         `json:"bar1_total_mib"`
	BAR1UsedMiB       *uint64         `json:"bar1_used_mib"`
	GPUUtil           *uint32         `json:"gpu_util"`
	MemUtil           *uint32         `json:"mem_util"`
	EncUtil           *uint32         `json:"enc_util"`
	DecUtil           *uint32         `json:"dec_util"`
	TemperatureC      *uint32         `json:"temperature_c"`
	PowerMW           *uint32         `json:"power_mw"`
	PowerLimitMW      *uint32         `json:"power_limit_mw"`
	Clocks            json.RawMessage `json:"clocks"`
	MaxClocks         json.RawMessage `json:"max_clocks"`
	FanSpeed          *uint32         `json:"fan_speed"`
	PState            *int            `json:"pstate"`
	PersistenceMode   *bool           `json:"persistence_mode"`
	ComputeMode       *string         `json:"compute_mode"`
	DisplayActive     *bool           `json:"display_active"`
	DisplayMode       *bool           `json:"display_mode"`
	ECCErrors         *uint64         `json:"ecc_errors"`
	PCIeTxKBps        *uint32         `json:"pcie_tx_kbps"`
	PCIeRxKBps        *uint32         `json:"pcie_rx_kbps"`
	NVLinkLinks       *int            `json:"nvlink_links"`
	NVLinkTxKiB       *uint64         `json:"nvlink_tx_kib"`
	NVLinkRxKiB       *uint64         `json:"nvlink_rx_kib"`
	MIGMode           *int            `json:"mig_mode"`
	MIGEnabled        *bool           `json:"mig_enabled"`
	MIGDevices        json.RawMessage `json:"mig_devices"`
	Unsupported       json.RawMessage `json:"unsupported"`
	Errors            json.RawMessage `json:"errors"`
	Lost              *bool           `json:"lost"`
	Processes         json.RawMessage `json:"processes"`
	Accounting        *bool           `json:"accounting"`
	VgpuHost          *bool           `json:"vgpu_host"`
	VgpuInstances     json.RawMessage `json:"vgpu_instances"`
}

// scenarioClocks is "clocks" or "max_clocks".
type scenarioClocks struct {
	Graphics *uint32 `json:"graphics"`
	SM       *uint32 `json:"sm"`
	Memory   *uint32 `json:"memory"`
	Video    *uint32 `json:"video"`
}

// scenarioProcess is one element of "processes".
type scenarioProcess struct {
	PID               *uint32         `json:"pid"`
	Name              *string         `json:"name"`
	Type              *string         `json:"type"`
	UsedMemoryMiB     *int64          `json:"used_memory_mib"`
	SMUtil            *uint32         `json:"sm_util"`
	MemUtil           *uint32         `json:"mem_util"`
	EncUtil           *uint32         `json:"enc_util"`
	DecUtil           *uint32         `json:"dec_util"`
	GPUInstanceID     *uint32         `json:"gpu_instance_id"`
	ComputeInstanceID *uint32         `json:"compute_instance_id"`
	Host              json.RawMessage `json:"host"`
}

// scenarioHost is a process's "host" object (Process.Host).
type scenarioHost struct {
	User      *string  `json:"user"`
	Command   []string `json:"command"`
	CPU       *float64 `json:"cpu"`
	MemoryMiB *uint64  `json:"memory_mib"`
	Age       *string  `json:"age"`
}

// Bounds of a "host" object.
const (
	maxHostCPU     = 100 * 1024 // percent: a thousand CPUs busy
	maxCommandArgs = 1024
	maxArgBytes    = 4096
)

// parseHost decodes a process's "host" object.
func parseHost(raw json.RawMessage, path string) (*Host, error) {
	var sh scenarioHost
	if err := decodeObject(raw, path, &sh); err != nil {
		return nil, err
	}
	h := &Host{}
	if u := sh.User; u != nil {
		if *u == "" || strings.ContainsAny(*u, ": \t\n/") || len(*u) > 32 {
			return nil, bad(keyPath(path, "user"), "want a user name (1..32 characters, no ':', '/' or blanks), got %q", *u)
		}
		h.User = *u
	}
	if len(sh.Command) > maxCommandArgs {
		return nil, bad(keyPath(path, "command"), "at most %d arguments, got %d", maxCommandArgs, len(sh.Command))
	}
	for i, a := range sh.Command {
		if len(a) > maxArgBytes || strings.IndexByte(a, 0) >= 0 {
			return nil, bad(indexPath(keyPath(path, "command"), i), "want an argument of at most %d bytes and no NUL", maxArgBytes)
		}
	}
	h.Command = sh.Command
	if c := sh.CPU; c != nil {
		if !(*c >= 0 && *c <= maxHostCPU) {
			return nil, bad(keyPath(path, "cpu"), "want a CPU percentage 0..%d, got %v", maxHostCPU, *c)
		}
		h.CPU = *c
	}
	if m := sh.MemoryMiB; m != nil {
		if *m > maxMiB {
			return nil, bad(keyPath(path, "memory_mib"), "want 0..%d MiB, got %d", maxMiB, *m)
		}
		h.Memory = *m * MiB
	}
	if a := sh.Age; a != nil {
		d, err := time.ParseDuration(*a)
		if err != nil || d < 0 {
			return nil, bad(keyPath(path, "age"), "want a duration such as \"3h20m\", got %q", *a)
		}
		h.Age = d
	}
	return h, nil
}

// processKeys maps Process fields to their scenario keys, for errors.
var processKeys = map[string]string{
	"PID": "pid", "Type": "type", "SM": "sm_util", "Mem": "mem_util", "Enc": "enc_util", "Dec": "dec_util",
}

// scenarioMIG is one element of "mig_devices".
type scenarioMIG struct {
	UUID           *string         `json:"uuid"`
	GI             *int            `json:"gi"`
	CI             *int            `json:"ci"`
	Profile        *string         `json:"profile"`
	MemoryTotalMiB *uint64         `json:"memory_total_mib"`
	Index          *int            `json:"index"`
	Processes      json.RawMessage `json:"processes"`
}

// migKeys maps MIGSpec fields to their scenario keys, for errors.
var migKeys = map[string]string{
	"UUID": "uuid", "GI": "gi", "CI": "ci", "Profile": "profile",
	"MemoryTotalMiB": "memory_total_mib", "Index": "index", "Processes": "processes",
}

var computeModes = map[string]nvml.ComputeMode{
	"Default":           nvml.COMPUTEMODE_DEFAULT,
	"Exclusive_Process": nvml.COMPUTEMODE_EXCLUSIVE_PROCESS,
	"Prohibited":        nvml.COMPUTEMODE_PROHIBITED,
}

// gpuPlan is one GPU of a parsed scenario, ready to apply.
type gpuPlan struct {
	path      string
	raw       scenarioGPU
	clocks    *scenarioClocks
	maxClocks *scenarioClocks
	procs     []Process
	hasProcs  bool
	migs      []MIGSpec
	hasMIGs   bool
	unsup     []string
	failKeys  []string
	fails     map[string]nvml.Return
	vgpus     []VgpuSpec
	vgpuRaw   []scenarioVgpu // as written, for error keys and what VgpuSpec cannot say
	hasVgpus  bool
}

// LoadScenario reads a scenario file and returns its fleet (see
// ParseScenario). The file must be a regular file (symlinks are followed)
// of at most 16 MiB; a named pipe or device is refused without waiting on
// it. Errors about the file's kind, size or content wrap ErrBadScenario
// and name the file; errors opening or reading it do not.
func LoadScenario(path string) (*Fleet, error) {
	data, err := readScenarioFile(path)
	if err != nil {
		return nil, err
	}
	f, err := ParseScenario(data)
	var se *ScenarioError
	if errors.As(err, &se) {
		se.File = path
	}
	return f, err
}

// ParseScenario returns the fleet a JSON scenario describes; the package
// documentation lists the keys. Every error wraps ErrBadScenario and is a
// *ScenarioError naming the key path of the bad value.
func ParseScenario(data []byte) (*Fleet, error) {
	raw, err := decodeDocument(data)
	if err != nil {
		return nil, err
	}
	var doc scenario
	if err := decodeObject(raw, "", &doc); err != nil {
		return nil, err
	}

	seed, model := defaultSeed, ""
	var specs []GPUSpec
	if doc.Preset != nil {
		if specs, err = presetSpecs(*doc.Preset); err != nil {
			return nil, bad("preset", "unknown preset %q (want one of %s)", *doc.Preset, strings.Join(PresetNames(), ", "))
		}
		seed, model = *doc.Preset, presets[*doc.Preset].model
	}
	presetCount := len(specs)

	var plans []*gpuPlan
	if !isNull(doc.GPUs) {
		elems, err := decodeArray(doc.GPUs, "gpus")
		if err != nil {
			return nil, err
		}
		if len(elems) > maxScenarioGPUs {
			return nil, bad("gpus", "at most %d GPUs, got %d", maxScenarioGPUs, len(elems))
		}
		for i, e := range elems {
			p, err := parseGPU(e, indexPath("gpus", i))
			if err != nil {
				return nil, err
			}
			plans = append(plans, p)
			if i >= len(specs) {
				specs = append(specs, GPUSpec{Model: model})
			}
			if err := p.overrideSpec(&specs[i]); err != nil {
				return nil, err
			}
		}
	}
	if err := checkUnique(specs, plans, seed); err != nil {
		return nil, err
	}
	if err := checkVgpusUnique(specs, plans, seed); err != nil {
		return nil, err
	}

	f := build(seed, specs)
	for _, g := range f.gpus[:presetCount] {
		applyPresetLoad(g)
	}
	if err := doc.applyFleet(f); err != nil {
		return nil, err
	}
	for i, p := range plans {
		if err := p.apply(f.gpus[i]); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// applyFleet applies the top-level keys other than "preset" and "gpus".
func (doc *scenario) applyFleet(f *Fleet) error {
	if doc.DriverVersion != nil {
		f.SetDriverVersion(*doc.DriverVersion)
	}
	if doc.CUDADriverVersion != nil {
		if *doc.CUDADriverVersion < 0 {
			return bad("cuda_driver_version", "want a non-negative version like 13000, got %d", *doc.CUDADriverVersion)
		}
		f.SetCUDADriverVersion(*doc.CUDADriverVersion)
	}
	if doc.NVMLVersion != nil {
		f.SetNVMLVersion(*doc.NVMLVersion)
	}
	if !isNull(doc.MissingSymbols) {
		syms, err := decodeStrings(doc.MissingSymbols, "missing_symbols")
		if err != nil {
			return err
		}
		for i, s := range syms {
			if !validSymbol(s) {
				return bad(indexPath("missing_symbols", i), `want an NVML symbol like "nvmlDeviceGetMemoryInfo_v2", got %q`, s)
			}
		}
		f.MissingSymbols(syms...)
	}
	if doc.InitError != nil {
		r, ok := parseReturn(*doc.InitError)
		if !ok {
			return bad("init_error", "unknown NVML error %q (e.g. LIBRARY_NOT_FOUND, DRIVER_NOT_LOADED, LIB_RM_VERSION_MISMATCH)", *doc.InitError)
		}
		f.FailInit(r)
	}
	return nil
}

// validSymbol reports whether s looks like an NVML C symbol.
func validSymbol(s string) bool {
	if len(s) <= len("nvml") || len(s) > maxSymbolNameLen || !strings.HasPrefix(s, "nvml") {
		return false
	}
	for _, c := range s {
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// parseGPU decodes and checks one element of "gpus".
func parseGPU(raw json.RawMessage, path string) (*gpuPlan, error) {
	p := &gpuPlan{path: path}
	r := &p.raw
	if err := decodeObject(raw, path, r); err != nil {
		return nil, err
	}
	at := func(key string) string { return keyPath(path, key) }

	if r.Model != nil {
		if _, ok := models[*r.Model]; !ok {
			return nil, bad(at("model"), "unknown model %q (want one of %s)", *r.Model, strings.Join(ModelNames(), ", "))
		}
	}
	if r.UUID != nil && !validUUID(*r.UUID) {
		return nil, bad(at("uuid"), "want GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex), got %q", *r.UUID)
	}
	if r.BusID != nil {
		if _, err := parseBusID(*r.BusID); err != nil {
			return nil, bad(at("bus_id"), "%v", err)
		}
	}
	if r.ComputeCapability != nil {
		if _, _, ok := parseCC(*r.ComputeCapability); !ok {
			return nil, bad(at("compute_capability"), `want "major.minor" like "9.0", got %q`, *r.ComputeCapability)
		}
	}
	for _, m := range []struct {
		key string
		v   *uint64
	}{
		{"memory_total_mib", r.MemoryTotalMiB}, {"memory_reserved_mib", r.MemoryReservedMiB},
		{"memory_used_mib", r.MemoryUsedMiB}, {"bar1_total_mib", r.BAR1TotalMiB}, {"bar1_used_mib", r.BAR1UsedMiB},
	} {
		if m.v != nil && *m.v > maxMiB {
			return nil, bad(at(m.key), "want at most %d MiB, got %d", maxMiB, *m.v)
		}
	}
	if r.MemoryTotalMiB != nil && *r.MemoryTotalMiB == 0 {
		return nil, bad(at("memory_total_mib"), "want a positive size, got 0")
	}
	if r.BAR1TotalMiB != nil && *r.BAR1TotalMiB == 0 {
		return nil, bad(at("bar1_total_mib"), "want a positive size, got 0")
	}
	for _, u := range []struct {
		key string
		v   *uint32
	}{
		{"gpu_util", r.GPUUtil}, {"mem_util", r.MemUtil}, {"enc_util", r.EncUtil},
		{"dec_util", r.DecUtil}, {"fan_speed", r.FanSpeed},
	} {
		if u.v != nil && *u.v > 100 {
			return nil, bad(at(u.key), "want a percentage 0..100, got %d", *u.v)
		}
	}
	if r.PowerLimitMW != nil && *r.PowerLimitMW == 0 {
		return nil, bad(at("power_limit_mw"), "want a positive limit, got 0")
	}
	if r.PState != nil && (*r.PState < 0 || *r.PState > 15) {
		return nil, bad(at("pstate"), "want 0..15, got %d", *r.PState)
	}
	if r.ComputeMode != nil {
		if _, ok := computeModes[*r.ComputeMode]; !ok {
			return nil, bad(at("compute_mode"), `want "Default", "Exclusive_Process" or "Prohibited", got %q`, *r.ComputeMode)
		}
	}
	if r.NVLinkLinks != nil && (*r.NVLinkLinks < 0 || *r.NVLinkLinks > nvml.NVLINK_MAX_LINKS) {
		return nil, bad(at("nvlink_links"), "want 0..%d, got %d", nvml.NVLINK_MAX_LINKS, *r.NVLinkLinks)
	}
	if r.MIGMode != nil && *r.MIGMode != 0 && *r.MIGMode != 1 {
		return nil, bad(at("mig_mode"), "want 0 (disabled) or 1 (enabled), got %d", *r.MIGMode)
	}
	if r.MIGMode != nil && r.MIGEnabled != nil && *r.MIGEnabled != (*r.MIGMode == 1) {
		return nil, bad(at("mig_enabled"), `%t contradicts "mig_mode": %d`, *r.MIGEnabled, *r.MIGMode)
	}
	var err error
	if p.clocks, err = parseClocks(r.Clocks, at("clocks")); err != nil {
		return nil, err
	}
	if p.maxClocks, err = parseClocks(r.MaxClocks, at("max_clocks")); err != nil {
		return nil, err
	}
	if err := p.parseFaults(); err != nil {
		return nil, err
	}
	pids := make(map[uint32]string) // PID → key path of its process
	if err := p.parseProcesses(pids); err != nil {
		return nil, err
	}
	if err := p.parseMIGs(pids); err != nil {
		return nil, err
	}
	if err := p.parseVgpus(); err != nil {
		return nil, err
	}
	return p, nil
}

// parseCC parses a compute capability like "9.0".
func parseCC(s string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(s, ".")
	if !found {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || major < 1 || major > 99 || minor < 0 || minor > 99 {
		return 0, 0, false
	}
	return major, minor, true
}

func parseClocks(raw json.RawMessage, path string) (*scenarioClocks, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c scenarioClocks
	if err := decodeObject(raw, path, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// parseFaults decodes "unsupported" and "errors".
func (p *gpuPlan) parseFaults() error {
	if !isNull(p.raw.Unsupported) {
		path := keyPath(p.path, "unsupported")
		names, err := decodeStrings(p.raw.Unsupported, path)
		if err != nil {
			return err
		}
		for i, n := range names {
			if _, ok := resolveDeviceMethods(n); !ok {
				return bad(indexPath(path, i), "unknown metric %q (want one of %s)", n, strings.Join(MetricNames(), ", "))
			}
		}
		p.unsup = names
	}
	if !isNull(p.raw.Errors) {
		path := keyPath(p.path, "errors")
		keys, values, err := decodeStringMap(p.raw.Errors, path)
		if err != nil {
			return err
		}
		p.fails = make(map[string]nvml.Return, len(keys))
		for _, k := range keys {
			if _, ok := resolveDeviceMethods(k); !ok {
				return bad(keyPath(path, k), "unknown metric (want one of %s)", strings.Join(MetricNames(), ", "))
			}
			r, ok := parseReturn(values[k])
			if !ok {
				return bad(keyPath(path, k), "unknown NVML error %q (e.g. NO_PERMISSION, GPU_IS_LOST, NOT_SUPPORTED)", values[k])
			}
			p.fails[k] = r
		}
		p.failKeys = keys
	}
	return nil
}

// parseProcesses decodes "processes"; pids collects their PIDs.
func (p *gpuPlan) parseProcesses(pids map[uint32]string) error {
	if isNull(p.raw.Processes) {
		return nil
	}
	procs, err := parseProcessList(p.raw.Processes, keyPath(p.path, "processes"), pids)
	if err != nil {
		return err
	}
	p.procs, p.hasProcs = procs, true
	return nil
}

// parseProcessList decodes the process list raw at path. A PID in pids
// (PID → key path of its process) is an error; the list's PIDs are added.
// GPU and compute instance IDs not given are noInstance.
func parseProcessList(raw json.RawMessage, path string, pids map[uint32]string) ([]Process, error) {
	elems, err := decodeArray(raw, path)
	if err != nil {
		return nil, err
	}
	if len(elems) > maxGPUProcesses {
		return nil, bad(path, "at most %d processes per GPU, got %d", maxGPUProcesses, len(elems))
	}
	procs := []Process{}
	for i, e := range elems {
		at := indexPath(path, i)
		var sp scenarioProcess
		if err := decodeObject(e, at, &sp); err != nil {
			return nil, err
		}
		if sp.PID == nil {
			return nil, bad(keyPath(at, "pid"), "required")
		}
		proc := Process{PID: *sp.PID, Type: Compute, GPUInstanceID: noInstance, ComputeInstanceID: noInstance}
		setIf(&proc.Name, sp.Name)
		setIf(&proc.Type, sp.Type)
		setIf(&proc.SM, sp.SMUtil)
		setIf(&proc.Mem, sp.MemUtil)
		setIf(&proc.Enc, sp.EncUtil)
		setIf(&proc.Dec, sp.DecUtil)
		setIf(&proc.GPUInstanceID, sp.GPUInstanceID)
		setIf(&proc.ComputeInstanceID, sp.ComputeInstanceID)
		if !isNull(sp.Host) {
			h, err := parseHost(sp.Host, keyPath(at, "host"))
			if err != nil {
				return nil, err
			}
			proc.Host = h
		}
		if m := sp.UsedMemoryMiB; m != nil {
			switch {
			case *m == -1:
				proc.UsedMemory = NotAvailable
			case *m < 0 || *m > maxMiB:
				return nil, bad(keyPath(at, "used_memory_mib"), "want 0..%d MiB, or -1 for not available, got %d", maxMiB, *m)
			default:
				proc.UsedMemory = uint64(*m) * MiB
			}
		}
		if field, problem := proc.check(); field != "" {
			return nil, bad(keyPath(at, processKeys[field]), "%s", problem)
		}
		if other, dup := pids[proc.PID]; dup {
			return nil, bad(keyPath(at, "pid"), "%d is also the PID of %s", proc.PID, other)
		}
		pids[proc.PID] = at
		procs = append(procs, proc)
	}
	return procs, nil
}

// parseMIGs decodes "mig_devices"; their processes' PIDs must not be in
// pids. The checks that need the GPU's spec are left to overrideSpec.
func (p *gpuPlan) parseMIGs(pids map[uint32]string) error {
	if isNull(p.raw.MIGDevices) {
		return nil
	}
	path := keyPath(p.path, "mig_devices")
	elems, err := decodeArray(p.raw.MIGDevices, path)
	if err != nil {
		return err
	}
	if len(elems) > maxMigDevices {
		return bad(path, "at most %d MIG devices per GPU, got %d", maxMigDevices, len(elems))
	}
	p.hasMIGs, p.migs = true, []MIGSpec{}
	slotAt := make(map[int]string)
	for i, e := range elems {
		at := indexPath(path, i)
		var sm scenarioMIG
		if err := decodeObject(e, at, &sm); err != nil {
			return err
		}
		if sm.GI == nil {
			return bad(keyPath(at, "gi"), "required")
		}
		if sm.Profile == nil {
			return bad(keyPath(at, "profile"), "required")
		}
		ms := MIGSpec{GI: *sm.GI, Profile: *sm.Profile, Index: i}
		setIf(&ms.CI, sm.CI)
		setIf(&ms.UUID, sm.UUID)
		setIf(&ms.Index, sm.Index)
		setIf(&ms.MemoryTotalMiB, sm.MemoryTotalMiB)
		if sm.UUID != nil && !validMIGUUID(*sm.UUID) {
			return bad(keyPath(at, "uuid"), "want MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex), got %q", *sm.UUID)
		}
		if sm.MemoryTotalMiB != nil && *sm.MemoryTotalMiB == 0 {
			return bad(keyPath(at, "memory_total_mib"), "want a positive size, got 0")
		}
		// Checked here because MIGSpec reads a list of zero indices as
		// positions.
		if other, dup := slotAt[ms.Index]; dup {
			return bad(keyPath(at, "index"), "%d is also the index of %s", ms.Index, other)
		}
		slotAt[ms.Index] = at
		if !isNull(sm.Processes) {
			ppath := keyPath(at, "processes")
			if ms.Processes, err = parseProcessList(sm.Processes, ppath, pids); err != nil {
				return err
			}
			for k, proc := range ms.Processes {
				pat := indexPath(ppath, k)
				if proc.GPUInstanceID != noInstance && int(proc.GPUInstanceID) != ms.GI {
					return bad(keyPath(pat, "gpu_instance_id"), "want the device's %d (or leave it out), got %d", ms.GI, proc.GPUInstanceID)
				}
				if proc.ComputeInstanceID != noInstance && int(proc.ComputeInstanceID) != ms.CI {
					return bad(keyPath(pat, "compute_instance_id"), "want the device's %d (or leave it out), got %d", ms.CI, proc.ComputeInstanceID)
				}
			}
		}
		p.migs = append(p.migs, ms)
	}
	return nil
}

func setIf[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// overrideSpec applies the identity keys to the GPU's spec and checks the
// memory sizes against each other.
func (p *gpuPlan) overrideSpec(s *GPUSpec) error {
	r := &p.raw
	if r.Model != nil && *r.Model != s.Model {
		// A new model brings its own defaults; identity keys below still win.
		*s = GPUSpec{Model: *r.Model, UUID: s.UUID, BusID: s.BusID, Serial: s.Serial}
	}
	setIf(&s.Name, r.Name)
	setIf(&s.UUID, r.UUID)
	setIf(&s.BusID, r.BusID)
	setIf(&s.Serial, r.Serial)
	if r.ComputeCapability != nil {
		s.CCMajor, s.CCMinor, _ = parseCC(*r.ComputeCapability)
	}
	if r.MemoryTotalMiB != nil {
		s.MemoryTotal = *r.MemoryTotalMiB * MiB
		s.MemoryReserved = 0 // back to 0.5% of the new total unless given
	}
	if r.MemoryReservedMiB != nil {
		s.MemoryReserved = *r.MemoryReservedMiB * MiB
	}
	if r.BAR1TotalMiB != nil {
		s.BAR1Total = *r.BAR1TotalMiB * MiB
	}
	if r.NVLinkLinks != nil && *r.NVLinkLinks > 0 {
		s.NVLinks = *r.NVLinkLinks
	}
	if r.MIGMode != nil {
		s.MIGEnabled = *r.MIGMode == 1
	}
	setIf(&s.MIGEnabled, r.MIGEnabled)
	setIf(&s.Accounting, r.Accounting)
	switch {
	case p.hasMIGs:
		s.MIGDevices = p.migs
	case !s.MIGEnabled:
		s.MIGDevices = nil // a preset's, when the scenario disables MIG
	}
	if is := s.firstMIGIssue(); is != nil {
		return p.migError(is)
	}
	if err := p.overrideVgpus(s); err != nil {
		return err
	}

	full := s.resolve("", 0)
	if r.MemoryReservedMiB != nil && s.MemoryReserved >= full.MemoryTotal {
		return bad(keyPath(p.path, "memory_reserved_mib"), "%d MiB is not less than the total, %d MiB",
			*r.MemoryReservedMiB, full.MemoryTotal/MiB)
	}
	usable := full.MemoryTotal - full.MemoryReserved
	if r.MemoryUsedMiB != nil && *r.MemoryUsedMiB*MiB > usable {
		return bad(keyPath(p.path, "memory_used_mib"), "%d MiB is more than the %d MiB not reserved",
			*r.MemoryUsedMiB, usable/MiB)
	}
	if r.MemoryUsedMiB == nil && p.hasProcs {
		var sum uint64
		for _, proc := range p.procs {
			if proc.UsedMemory != NotAvailable {
				sum += proc.UsedMemory // each ≤ maxMiB MiB, at most maxGPUProcesses: no overflow
			}
		}
		if sum > usable {
			return bad(keyPath(p.path, "processes"), "the processes use %d MiB, more than the %d MiB not reserved",
				sum/MiB, usable/MiB)
		}
	}
	if r.BAR1UsedMiB != nil && *r.BAR1UsedMiB*MiB > full.BAR1Total {
		return bad(keyPath(p.path, "bar1_used_mib"), "%d MiB is more than the BAR1 total, %d MiB",
			*r.BAR1UsedMiB, full.BAR1Total/MiB)
	}
	return nil
}

// migError turns a problem with the GPU's MIG layout into a scenario error
// naming its key.
func (p *gpuPlan) migError(is *migIssue) error {
	path := keyPath(p.path, "mig_devices")
	if is.dev < 0 {
		return bad(path, `MIG devices need MIG enabled ("mig_enabled": true)`)
	}
	path = keyPath(indexPath(path, is.dev), migKeys[is.field])
	if is.proc >= 0 {
		path = keyPath(indexPath(path, is.proc), processKeys[is.pfield])
	}
	return bad(path, "%s", is.problem)
}

// checkUnique rejects two GPUs with one UUID or bus ID and two MIG devices
// with one UUID, naming the later one's key when the scenario set it.
func checkUnique(specs []GPUSpec, plans []*gpuPlan, seed string) error {
	uuids := make(map[string]int)
	buses := make(map[busID]int)
	migUUIDs := make(map[string]string) // lower-case UUID → GPU and slot
	for i, s := range specs {
		full := s.resolve(seed, i)
		bus, _ := parseBusID(full.BusID)
		path := func(key string) string {
			if i < len(plans) {
				return keyPath(plans[i].path, key)
			}
			return keyPath(indexPath("gpus", i), key)
		}
		if j, dup := uuids[strings.ToLower(full.UUID)]; dup {
			return bad(path("uuid"), "%q is also the UUID of GPU %d", full.UUID, j)
		}
		if j, dup := buses[bus]; dup {
			return bad(path("bus_id"), "%q is also the bus ID of GPU %d", full.BusID, j)
		}
		uuids[strings.ToLower(full.UUID)], buses[bus] = i, i
		for j, m := range full.MIGDevices { // valid: none was left out
			key := strings.ToLower(m.UUID)
			if other, dup := migUUIDs[key]; dup {
				return bad(keyPath(indexPath(path("mig_devices"), j), "uuid"), "%q is also the UUID of %s", m.UUID, other)
			}
			migUUIDs[key] = fmt.Sprintf("GPU %d MIG device %d", i, m.Index)
		}
	}
	return nil
}

// apply sets the GPU's live state from the scenario.
func (p *gpuPlan) apply(g *GPU) error {
	r := &p.raw
	g.update(func() {
		setIf(&g.gpuUtil, r.GPUUtil)
		setIf(&g.memUtil, r.MemUtil)
		setIf(&g.encUtil, r.EncUtil)
		setIf(&g.decUtil, r.DecUtil)
		setIf(&g.temp, r.TemperatureC)
		setIf(&g.power, r.PowerMW)
		setIf(&g.limit, r.PowerLimitMW)
		setIf(&g.fan, r.FanSpeed)
		setIf(&g.persistence, r.PersistenceMode)
		setIf(&g.displayActive, r.DisplayActive)
		setIf(&g.displayMode, r.DisplayMode)
		setIf(&g.ecc, r.ECCErrors)
		setIf(&g.pcieTx, r.PCIeTxKBps)
		setIf(&g.pcieRx, r.PCIeRxKBps)
		setIf(&g.nvLinks, r.NVLinkLinks)
		setIf(&g.nvTx, r.NVLinkTxKiB)
		setIf(&g.nvRx, r.NVLinkRxKiB)
		if r.MemoryUsedMiB != nil {
			g.memUsed, g.memUsedSet = *r.MemoryUsedMiB*MiB, true
		}
		if r.BAR1UsedMiB != nil {
			g.bar1Used = *r.BAR1UsedMiB * MiB
		}
		if r.PState != nil {
			g.pstate = nvml.Pstates(*r.PState)
		}
		if r.ComputeMode != nil {
			g.computeMode = computeModes[*r.ComputeMode]
		}
		applyClocks(&g.clocks, p.clocks)
		applyClocks(&g.maxClocks, p.maxClocks)
		if p.hasProcs {
			// Those of the GPU itself; its MIG devices keep theirs. The
			// replaced ones never ran, so they leave no accounting record.
			g.procs = slices.DeleteFunc(g.procs, func(pr *proc) bool {
				if pr.mig != nil {
					return false
				}
				g.forgetAccountingLocked(pr)
				return true
			})
		}
	})
	for i, proc := range p.procs {
		if err := g.StartProcess(proc); err != nil {
			// A PID of a preset's MIG device process, say.
			return bad(keyPath(indexPath(keyPath(p.path, "processes"), i), "pid"), "%v", err)
		}
	}
	p.applyVgpus(g)
	if r.FanSpeed != nil {
		g.Supported("fan_speed")
	}
	g.Unsupported(p.unsup...)
	for _, k := range p.failKeys {
		g.Fail(k, p.fails[k])
	}
	if r.Lost != nil && *r.Lost {
		g.Lose()
	}
	return nil
}

func applyClocks(dst *Clocks, c *scenarioClocks) {
	if c == nil {
		return
	}
	setIf(&dst.Graphics, c.Graphics)
	setIf(&dst.SM, c.SM)
	setIf(&dst.Memory, c.Memory)
	setIf(&dst.Video, c.Video)
}

// Load builds a fleet from a preset name (PresetNames) or, failing that,
// a scenario file: what a --simulate NAME|FILE flag takes.
func Load(nameOrFile string) (*Fleet, error) {
	if slices.Contains(PresetNames(), nameOrFile) {
		return Preset(nameOrFile)
	}
	if _, err := os.Stat(nameOrFile); err != nil {
		return nil, fmt.Errorf("%q is not a preset (%v) and not a readable file: %w", nameOrFile, PresetNames(), err)
	}
	return LoadScenario(nameOrFile)
}
