//go:build cgo

package fakegpu

import (
	"fmt"
	"sort"
)

// presets are the whole-machine fleets, by name: eight SXM boards of one
// model, like the DGX systems go-nvml's mock/dgx* packages model.
var presets = map[string]string{
	"dgx-a100": "a100",
	"dgx-h100": "h100",
	"dgx-h200": "h200",
	"dgx-b200": "b200",
}

// presetGPUs is the number of GPUs in every preset.
const presetGPUs = 8

// PresetNames returns the names Preset accepts, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns a fleet modelled on a DGX system: "dgx-a100", "dgx-h100",
// "dgx-h200" or "dgx-b200". It has 8 GPUs of the model (names, memory and
// compute capability from go-nvml's mock/gpus presets) at the PCI bus IDs
// of a DGX H100, UUIDs and serials derived from the preset name, driver
// DefaultDriverVersion and CUDA DefaultCUDADriverVersion, and no fans (fan
// queries answer NOT_SUPPORTED, as on SXM boards). GPUs 0–2 are busy, each
// with one compute process (PIDs 4194401–4194403); the rest are idle. The same
// name always gives the same fleet.
func Preset(name string) (*Fleet, error) {
	specs, err := presetSpecs(name)
	if err != nil {
		return nil, err
	}
	f := build(name, specs)
	for _, g := range f.gpus {
		applyPresetLoad(g)
	}
	return f, nil
}

// presetSpecs returns the GPU specs of a preset.
func presetSpecs(name string) ([]GPUSpec, error) {
	m, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("fakegpu: unknown preset %q (want one of %v)", name, PresetNames())
	}
	specs := make([]GPUSpec, presetGPUs)
	for i := range specs {
		specs[i] = GPUSpec{Model: m}
	}
	return specs, nil
}

// busyLoad is the load of one busy preset GPU.
type busyLoad struct {
	util, memUtil, temp uint32
	powerPct            uint32 // of the power limit
	memPct              uint64 // process memory, % of the usable memory
	pcieTx, pcieRx      uint32 // KB/s
}

var busyLoads = []busyLoad{
	{util: 97, memUtil: 41, temp: 67, powerPct: 86, memPct: 78, pcieTx: 1_250, pcieRx: 5_300},
	{util: 88, memUtil: 33, temp: 63, powerPct: 74, memPct: 52, pcieTx: 980, pcieRx: 4_100},
	{util: 64, memUtil: 18, temp: 55, powerPct: 55, memPct: 23, pcieTx: 410, pcieRx: 1_900},
}

// applyPresetLoad gives preset GPU g its deterministic starting load.
func applyPresetLoad(g *GPU) {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	i := g.index
	if i >= len(busyLoads) {
		// Idle: a few degrees and watts of spread so GPUs differ.
		g.temp = 31 + uint32(i%4)
		g.power = g.spec.IdlePower + uint32(i)*700
		g.pcieTx, g.pcieRx = 20, 35
		return
	}
	l := busyLoads[i]
	g.gpuUtil, g.memUtil, g.temp = l.util, l.memUtil, l.temp
	g.power = uint32(uint64(g.limit) * uint64(l.powerPct) / 100)
	g.clocks.Graphics = g.maxClocks.Graphics - 75*uint32(i)
	g.clocks.SM = g.clocks.Graphics
	g.clocks.Video = g.maxClocks.Video
	g.pcieTx, g.pcieRx = l.pcieTx, l.pcieRx
	g.nvTx = uint64(i+1) * 734_003_200 // KiB since boot
	g.nvRx = uint64(i+1) * 701_890_560
	usable := g.spec.MemoryTotal - g.spec.MemoryReserved
	// Preset processes are valid by construction; startLocked cannot fail.
	_ = g.startLocked(Process{
		PID:        uint32(presetPIDBase + i),
		Name:       "python3",
		Type:       Compute,
		UsedMemory: usable * l.memPct / 100 / MiB * MiB,
		SM:         l.util,
		Mem:        l.memUtil,
	})
}

// presetPIDBase is above the largest PID Linux can hand out (pid_max is at
// most 2^22 = 4194304), so a preset's processes never alias a real process on
// the host running the simulation: their host fields read as N/A ("No Such
// Process") instead of another program's name.
const presetPIDBase = 4194401
