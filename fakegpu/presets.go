//go:build cgo

package fakegpu

import (
	"fmt"
	"sort"
	"time"
)

// preset is a whole-machine fleet: eight SXM boards of one model, like the
// DGX systems go-nvml's mock/dgx* packages model.
type preset struct {
	model string
	mig   bool // GPU 0 partitioned (migLayouts), GPU 1 with MIG and no devices
	vgpu  bool // every GPU a vGPU host, GPUs 0 and 1 with vgpuLayouts
}

// presets are the whole-machine fleets, by name.
var presets = map[string]preset{
	"dgx-a100":     {model: "a100"},
	"dgx-h100":     {model: "h100"},
	"dgx-h200":     {model: "h200"},
	"dgx-b200":     {model: "b200"},
	"dgx-a100-mig": {model: "a100", mig: true},
	"dgx-h100-mig": {model: "h100", mig: true},
	"vgpu-h100":    {model: "h100", vgpu: true},
}

// migLayouts are the MIG devices of GPU 0 of the "-mig" presets: a 3g, a 2g
// and a 1g GPU instance at MIG device indices 0, 1 and 3 (2 is free), with
// the memory sizes real 80 GB boards report; one process runs on the 3g.
var migLayouts = map[string][]MIGSpec{
	"a100": {
		{Index: 0, GI: 2, CI: 0, Profile: "3g.40gb", MemoryTotalMiB: 40192, Processes: []Process{migPresetProcess}},
		{Index: 1, GI: 3, CI: 0, Profile: "2g.20gb", MemoryTotalMiB: 19968},
		{Index: 3, GI: 9, CI: 0, Profile: "1g.10gb", MemoryTotalMiB: 9728},
	},
	"h100": {
		{Index: 0, GI: 2, CI: 0, Profile: "3g.40gb", MemoryTotalMiB: 40448, Processes: []Process{migPresetProcess}},
		{Index: 1, GI: 3, CI: 0, Profile: "2g.20gb", MemoryTotalMiB: 20096},
		{Index: 3, GI: 9, CI: 0, Profile: "1g.10gb", MemoryTotalMiB: 9984},
	},
}

// vgpuLayouts are the vGPU instances of GPUs 0 and 1 of the "vgpu-"
// preset: on GPU 0 four 20 GiB compute instances, two licensed and busy
// (one licence expiring, one permanent), one licensed and idle, one
// unlicensed with an older guest driver; on GPU 1 two 40 GiB instances
// with accounting on, one guest process each. Guest PIDs are the VMs'
// own. Each busy instance's SM and FB utilization is the sum of its
// processes'.
var vgpuLayouts = [][]VgpuSpec{
	{
		{Type: "NVIDIA H100-20C", FBUsedMiB: 12288, Licensed: true, LicenseExpiry: time.Date(2027, time.June, 30, 23, 59, 59, 0, time.UTC),
			SM: 40, FB: 25, Processes: []VgpuProcess{
				{PID: 2817, Name: "python3", SM: 28, Mem: 18},
				{PID: 2854, Name: "python3", SM: 12, Mem: 7},
			}},
		{Type: "NVIDIA H100-20C", FBUsedMiB: 16384, Licensed: true,
			SM: 35, FB: 20, Processes: []VgpuProcess{{PID: 1733, Name: "tritonserver", SM: 35, Mem: 20}}},
		{Type: "NVIDIA H100-20C", FBUsedMiB: 512, Licensed: true},
		{Type: "NVIDIA H100-20C", FBUsedMiB: 256, VMDriverVersion: "535.161.08"},
	},
	{
		{Type: "NVIDIA H100-40C", FBUsedMiB: 30720, Licensed: true, SM: 60, FB: 40, Accounting: true,
			Processes: []VgpuProcess{{PID: 4120, Name: "python3", SM: 60, Mem: 40}}},
		{Type: "NVIDIA H100-40C", FBUsedMiB: 8192, Licensed: true, SM: 25, FB: 10, Accounting: true,
			Processes: []VgpuProcess{{PID: 991, Name: "python3", SM: 25, Mem: 10}}},
	},
}

// migPresetProcess is the process on GPU 0's first MIG device in the
// "-mig" presets.
var migPresetProcess = Process{PID: presetPIDBase + 3, Name: "python3", Type: Compute, UsedMemory: 12 << 30, Host: &migPresetHost}

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
//
// "dgx-a100-mig" and "dgx-h100-mig" are the same machines with MIG: GPU 0
// has MIG enabled and three MIG devices, at MIG device indices 0 (3g.40gb,
// GPU instance 2, running PID 4194404 with 12 GiB), 1 (2g.20gb, GPU
// instance 3) and 3 (1g.10gb, GPU instance 9), all compute instance 0,
// index 2 free; GPU 1 has MIG enabled and no MIG devices. Neither runs a
// process outside MIG devices, so the busy PIDs are 4194404 and 4194403.
//
// "vgpu-h100" is the H100 machine as a vGPU host: every GPU is in
// host-vGPU mode and runs no process of its own. GPU 0 hosts four
// "NVIDIA H100-20C" instances: two licensed and busy (SM 40% with guest
// PIDs 2817 and 2854, a licence expiring 2027-06-30T23:59:59Z; SM 35% with
// PID 1733 "tritonserver", a permanent licence), one licensed and idle,
// one unlicensed with guest driver 535.161.08. GPU 1 hosts two
// "NVIDIA H100-40C" instances with accounting on, running PIDs 4120 (SM
// 60%) and 991 (SM 25%). GPUs 2–7 host none. A host GPU's utilization is
// the sum of its instances'; IDs, UUIDs and VM IDs are derived from the
// preset name.
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
	p, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("fakegpu: unknown preset %q (want one of %v)", name, PresetNames())
	}
	specs := make([]GPUSpec, presetGPUs)
	for i := range specs {
		specs[i] = GPUSpec{Model: p.model}
	}
	if p.mig {
		specs[0].MIGEnabled, specs[0].MIGDevices = true, cloneMIGSpecs(migLayouts[p.model])
		specs[1].MIGEnabled = true
	}
	if p.vgpu {
		for i := range specs {
			specs[i].VgpuHost = true
			if i < len(vgpuLayouts) {
				specs[i].Vgpus = cloneVgpuSpecs(vgpuLayouts[i])
			}
		}
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

// presetHosts are the host facts of the busy GPUs' processes: believable
// jobs of three users, so that a simulated table looks like a real node's.
var presetHosts = []Host{
	{User: "alice", Command: []string{"python3", "train.py", "--model", "llama-7b", "--epochs", "90"},
		CPU: 98.5, Memory: 6656 * MiB, Age: 46*time.Hour + 13*time.Minute + 33*time.Second},
	{User: "bob", Command: []string{"python3", "-m", "torch.distributed.run", "--nproc_per_node=1", "finetune.py", "--config", "configs/bert-large.yaml"},
		CPU: 101.3, Memory: 10035 * MiB, Age: 3*time.Hour + 2*time.Minute},
	{User: "carol", Command: []string{"python3", "serve.py", "--port", "8000", "--model", "resnet50"},
		CPU: 23.7, Memory: 3174 * MiB, Age: 4*24*time.Hour + 12*time.Hour},
}

// migPresetHost is the host of the MIG presets' process.
var migPresetHost = Host{User: "dave", Command: []string{"python3", "infer.py", "--batch-size", "64"},
	CPU: 64, Memory: 2458 * MiB, Age: 17 * time.Minute}

var busyLoads = []busyLoad{
	{util: 97, memUtil: 41, temp: 67, powerPct: 86, memPct: 78, pcieTx: 1_250, pcieRx: 5_300},
	{util: 88, memUtil: 33, temp: 63, powerPct: 74, memPct: 52, pcieTx: 980, pcieRx: 4_100},
	{util: 64, memUtil: 18, temp: 55, powerPct: 55, memPct: 23, pcieTx: 410, pcieRx: 1_900},
}

// applyPresetLoad gives preset GPU g its deterministic starting load. A
// GPU with MIG enabled gets no process of its own: real ones run on MIG
// devices. Neither does a vGPU host, whose load is its instances'.
func applyPresetLoad(g *GPU) {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	i := g.index
	if g.vgpuHost {
		applyVgpuHostLoadLocked(g)
		return
	}
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
	if g.migCur == 1 {
		return
	}
	usable := g.spec.MemoryTotal - g.spec.MemoryReserved
	// Preset processes are valid by construction; startLocked cannot fail.
	_ = g.startLocked(Process{
		PID:        uint32(presetPIDBase + i),
		Name:       "python3",
		Type:       Compute,
		UsedMemory: usable * l.memPct / 100 / MiB * MiB,
		SM:         l.util,
		Mem:        l.memUtil,
		Host:       &presetHosts[i],
	}, nil)
}

// applyVgpuHostLoadLocked gives a vGPU host preset GPU the load of its
// instances: their SM and FB utilization summed, and power and temperature
// to match.
func applyVgpuHostLoadLocked(g *GPU) {
	var sm, fb uint32
	for _, v := range g.vgpus {
		sm, fb = sm+v.sm, fb+v.fb
	}
	g.gpuUtil, g.memUtil = pct(sm), pct(fb)
	g.temp = 31 + uint32(g.index%4) + g.gpuUtil*35/100
	g.power = g.spec.IdlePower + uint32(g.index)*700 + (g.limit-g.spec.IdlePower)*g.gpuUtil/100
	g.pcieTx, g.pcieRx = 20+10*g.gpuUtil, 35+40*g.gpuUtil
	if g.gpuUtil > 0 {
		g.clocks.Graphics, g.clocks.SM, g.clocks.Video = g.maxClocks.Graphics, g.maxClocks.Graphics, g.maxClocks.Video
	}
}

// presetPIDBase is above the largest PID Linux can hand out (pid_max is at
// most 2^22 = 4194304), so a preset's processes never alias a real process on
// the host running the simulation: their host fields read as N/A ("No Such
// Process") instead of another program's name.
const presetPIDBase = 4194401
